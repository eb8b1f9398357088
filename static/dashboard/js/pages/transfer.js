// The "transfer" area: import a mockd collection into the selected workspace and export it in
// each format the server offers.
//
// Import: a file (read in the browser) or pasted text, JSON or YAML. "Preview" parses it here,
// asks the server for a dry run (POST /config?dryRun=true&workspaceId=: the server validates
// the whole document and changes nothing; a 400 names the keys, shown under their lines) and
// lists what would be created or replaced with the warnings (existing ids replaced, the
// workspace emptied first with "replace", tables replaced by name). "Import" then sends the
// same document (POST /config). Documents of other formats (OpenAPI, Postman, HAR...; the
// detection rules of GET /formats) are recognised and named: the admin API imports mockd
// collections, and `mockd import <file>` converts the others.
//
// Export: one download per format and route of GET /formats (the collection as YAML or JSON,
// OpenAPI, Insomnia), fetched with the key and saved through a Blob.
//
// Source: SPEC "Import and export"; behavior notes §1 "Configuration and exports", §13.
import { api } from "../api.js";
import { annotated, issuesOf, loadYaml, ParseError } from "../code.js";
import { h, replace, showError, toast, useStylesheet } from "../dom.js";
import { summarize } from "../mocks-data.js";

/** Largest document read from a file (the admin API takes 10 MiB bodies: notes §18). */
const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Rows listed in a preview; the count says how many more there are. */
const MAX_PREVIEW_ROWS = 500;

/** The selected workspace's name as the header's switcher shows it. */
function workspaceName() {
  const select = document.getElementById("workspace");
  const option = select && select.selectedOptions && select.selectedOptions[0];
  return option ? `the workspace “${option.textContent}”` : "the selected workspace";
}

/** The format of a parsed document or text, after the detection order of notes §13. */
function detect(text, value, filename) {
  const trimmed = text.trimStart();
  if (/^curl\s/.test(trimmed)) return "curl";
  if (/\.wsdl$/i.test(filename) || /<([\w-]+:)?definitions[\s>]/.test(trimmed.slice(0, 4096))) return "wsdl";
  if (/\.proto$/i.test(filename) || (/^\s*syntax\s*=/m.test(text) && /\bservice\s+\w+\s*\{/.test(text))) return "proto";
  if (Array.isArray(value)) return value.length && value[0] && value[0].request ? "wiremock" : "unknown";
  if (!value || typeof value !== "object") return "unknown";
  if (/\.har$/i.test(filename) || "log" in value) return "har";
  if ("version" in value && ("kind" in value || "mocks" in value)) return "mockd";
  if ("mocks" in value && Array.isArray(value.mocks)) return "mockd";
  if ("openapi" in value || "swagger" in value) return "openapi";
  if ("info" in value && "item" in value) return "postman";
  if ("routes" in value && ("endpointPrefix" in value || "port" in value)) return "mockoon";
  if (("request" in value && "response" in value) || Array.isArray(value.mappings)) return "wiremock";
  return "unknown";
}

async function parseDocument(text) {
  try {
    return { value: JSON.parse(text), lang: "json" };
  } catch (_) {
    const yaml = await loadYaml();
    try {
      return { value: yaml.load(text, { schema: yaml.CORE_SCHEMA }), lang: "yaml" };
    } catch (error) {
      throw new ParseError(`Neither JSON nor YAML: ${error.reason || error.message}`, error.mark ? error.mark.line : null);
    }
  }
}

function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

/** The downloads of GET /formats' export list: [{label, path, query, filename, testid}]. */
function downloadsOf(formats) {
  const out = [];
  for (const format of formats.export || []) {
    for (const route of format.routes || []) {
      const [method, path] = route.split(" ");
      if (method !== "GET" || !path) continue;
      if (path === "/config") {
        for (const kind of ["yaml", "json"]) {
          out.push({ format, label: `${format.title} (${kind.toUpperCase()})`, path, query: { format: kind },
            filename: `mockd-config.${kind}`, testid: `export-config-${kind}` });
        }
      } else {
        const name = path.slice(1);
        const kind = name.split(".").pop().toUpperCase();
        out.push({ format, label: `${format.title} (${kind})`, path, query: {}, filename: `mockd-${name}`,
          testid: `export-${name.replace(/\W+/g, "-")}` });
      }
    }
  }
  return out;
}

function filenameOf(response, fallback) {
  const disposition = response.headers.get("content-disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(disposition);
  return match ? match[1] : fallback;
}

export async function render(root) {
  useStylesheet("transfer");
  const formatsPromise = api("GET", "/formats").catch((error) => { showError(error); return { import: [], export: [] }; });

  // ---- import ------------------------------------------------------------------------
  const file = h("input", { type: "file", accept: ".json,.yaml,.yml,.har,.wsdl,.proto,.txt", "data-testid": "import-file", "aria-label": "File to import" });
  const text = h("textarea", { spellcheck: "false", placeholder: "Paste a mockd collection (YAML or JSON) here, or choose a file.", "data-testid": "import-text", "aria-label": "Document to import" });
  const replaceBox = h("input", { type: "checkbox", "data-testid": "import-replace" });
  const previewButton = h("button", { type: "button", class: "primary", "data-testid": "import-preview" }, "Preview (dry run)");
  const importButton = h("button", { type: "button", "data-testid": "import-apply", disabled: true }, "Import");
  const result = h("div", { class: "import-result", "data-testid": "import-result" });
  let filename = "";
  let prepared = null; // {document, replace} that the last preview accepted

  file.addEventListener("change", async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    if (chosen.size > MAX_FILE_BYTES) {
      showError(new Error(`${chosen.name} is ${(chosen.size / 1048576).toFixed(1)} MiB; the admin API takes up to 10 MiB.`));
      return;
    }
    filename = chosen.name;
    text.value = await chosen.text();
    invalidate();
  });
  const invalidate = () => {
    prepared = null;
    importButton.disabled = true;
  };
  text.addEventListener("input", () => { filename = ""; invalidate(); });
  replaceBox.addEventListener("change", invalidate);

  previewButton.addEventListener("click", async () => {
    invalidate();
    const source = text.value;
    if (!source.trim()) {
      replace(result, h("p", { class: "error" }, "Nothing to import: choose a file or paste a document."));
      return;
    }
    previewButton.disabled = true;
    try {
      await preview(source);
    } finally {
      previewButton.disabled = false;
    }
  });

  async function preview(source) {
    let parsed;
    try {
      parsed = await parseDocument(source);
    } catch (error) {
      replace(result, h("h2", {}, "The document cannot be read"), annotated(source, "yaml", [{ line: error.line, path: "", reason: error.message }]));
      return;
    }
    const formats = await formatsPromise;
    const kind = detect(source, parsed.value, filename);
    if (kind !== "mockd") {
      const known = (formats.import || []).find((f) => f.name === kind);
      replace(result, h("div", { class: "error-box", "data-testid": "import-other-format" },
        h("h2", {}, known ? `${known.title} document` : "Unrecognised document"),
        h("p", {}, known
          ? "The dashboard imports mockd collections (version and mocks). Convert this document with the command line, which detects it the same way and has the same dry run:"
          : "This is not a mockd collection (an object with version and mocks). Formats the command line converts: "
            + (formats.import || []).map((f) => f.title).join(", ") + "."),
        known ? h("pre", { class: "code" }, `mockd import ${filename || "<file>"} --dry-run\nmockd import ${filename || "<file>"}`) : null));
      return;
    }
    const document = parsed.value;
    const replaceAll = replaceBox.checked;
    let dry;
    try {
      dry = await api("POST", "/config", { json: { config: document, replace: replaceAll }, query: { dryRun: "true" }, scoped: true });
    } catch (error) {
      if (!error.status || error.status >= 500) throw error;
      const issues = issuesOf(error);
      replace(result, h("div", { class: "error-box", "data-testid": "import-errors" },
        h("h2", {}, "The server refuses this document; nothing was imported"),
        h("ul", {}, issues.map((i) => h("li", { class: "field-error" }, i.path ? `${i.path}: ${i.reason}` : i.reason)))),
      annotated(source, parsed.lang, issues));
      return;
    }
    const existing = await api("GET", "/mocks", { scoped: true });
    const existingIds = new Set((existing.mocks || []).map((m) => m.id));
    const mocks = Array.isArray(document.mocks) ? document.mocks : [];
    const warnings = [];
    if (replaceAll && existing.total) {
      warnings.push(`Replace: the ${existing.total} mock${existing.total === 1 ? "" : "s"} now in ${workspaceName()} are deleted first, with its tables, bindings and custom operations.`);
    }
    const rows = mocks.map((mock) => {
      const replaced = mock && mock.id && existingIds.has(mock.id) && !replaceAll;
      if (replaced) warnings.push(`${mock.id}: a mock with this id exists in ${workspaceName()}; the import replaces it.`);
      return { mock: mock || {}, action: replaced ? "replace" : "create" };
    });
    const tables = (document.tables || document.statefulResources || []).length;
    if (tables) warnings.push(`${tables} table${tables === 1 ? "" : "s"} (with their seed data) replace the tables of the same name.`);
    if ((document.customOperations || []).length) warnings.push(`${document.customOperations.length} custom operation(s) replace those of the same name.`);
    if (dry.mocks !== mocks.length) warnings.push(`The server counts ${dry.mocks} mocks, the preview ${mocks.length}.`);
    const noId = rows.filter((r) => !r.mock.id).length;

    prepared = { document, replace: replaceAll };
    importButton.disabled = false;
    const shown = rows.slice(0, MAX_PREVIEW_ROWS);
    replace(result,
      h("h2", {}, "Dry run"),
      h("p", { "data-testid": "import-summary" },
        `${dry.mocks} mock${dry.mocks === 1 ? "" : "s"} would be imported into ${workspaceName()} `,
        replaceAll ? "(replacing everything there)" : "(merged with what is there)",
        dry.statefulResources ? `, with ${dry.statefulResources} stateful resource(s)` : "",
        `. The server checked the whole document; nothing has changed yet.`,
        noId ? ` ${noId} mock${noId === 1 ? " has" : "s have"} no id and get${noId === 1 ? "s" : ""} a new one.` : ""),
      warnings.length ? h("div", { class: "warnings", "data-testid": "import-warnings" }, h("strong", {}, "Warnings"),
        h("ul", {}, warnings.slice(0, 50).map((w) => h("li", {}, w))),
        warnings.length > 50 ? h("p", { class: "muted" }, `… and ${warnings.length - 50} more`) : null) : null,
      h("table", { class: "grid", "data-testid": "import-preview-table" },
        h("thead", {}, h("tr", {}, ["Action", "Id", "Name", "Type", "Method", "Path", "Status"].map((t) => h("th", {}, t)))),
        h("tbody", {}, shown.map(({ mock, action }) => {
          const s = summarize(mock);
          return h("tr", { dataset: { action } }, h("td", {}, h("span", { class: `badge ${action === "create" ? "ok" : "warn"}` }, action)),
            h("td", { class: "mono" }, mock.id || "(new)"), h("td", {}, mock.name || ""), h("td", {}, s.type),
            h("td", { class: "mono" }, s.method), h("td", { class: "mono" }, s.path), h("td", { class: "mono" }, s.status));
        }))),
      rows.length > shown.length ? h("p", { class: "muted" }, `… and ${rows.length - shown.length} more mocks`) : null);
  }

  importButton.addEventListener("click", async () => {
    if (!prepared) return;
    importButton.disabled = true;
    try {
      const answer = await api("POST", "/config", { json: { config: prepared.document, replace: prepared.replace }, scoped: true });
      replace(result, h("div", { class: "import-done", "data-testid": "import-done" },
        h("h2", {}, answer.message || "Imported"),
        h("p", {}, `${answer.imported} mock${answer.imported === 1 ? "" : "s"} imported; ${answer.total} in ${workspaceName()} now. `,
          h("a", { href: "#/mocks" }, "See the mocks")),
        (answer.warnings || []).length ? h("ul", { class: "warnings" }, answer.warnings.map((w) => h("li", {}, typeof w === "string" ? w : JSON.stringify(w)))) : null));
      toast(answer.message || "Imported");
      prepared = null;
    } catch (error) {
      importButton.disabled = false;
      showError(error);
    }
  });

  // ---- export ------------------------------------------------------------------------
  const exportName = h("input", { type: "text", placeholder: "mockd-export", "data-testid": "export-name", "aria-label": "Collection name" });
  const exportList = h("div", { class: "export-list", "data-testid": "export-list" }, h("p", { class: "muted" }, "Loading the formats…"));

  root.append(
    h("h1", {}, "Import / export"),
    h("div", { class: "split" },
      h("section", { class: "import" },
        h("h2", {}, "Import"),
        h("div", { class: "form-row" }, file, h("label", { class: "inline" }, replaceBox, " replace the mocks of this workspace")),
        text,
        h("div", { class: "toolbar" }, previewButton, importButton)),
      h("section", { class: "export" },
        h("h2", {}, "Export"),
        h("p", { class: "muted" }, "Everything in ", workspaceName(), ", as a file."),
        h("div", { class: "form-row" }, h("label", {}, "Collection name", exportName)),
        exportList)),
    result,
  );

  const formats = await formatsPromise;
  const downloads = downloadsOf(formats);
  replace(exportList, downloads.length ? downloads.map((d) => {
    const button = h("button", { type: "button", "data-testid": d.testid, title: d.format.description || "" }, `Download ${d.label}`);
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const query = { ...d.query };
        if (exportName.value.trim()) query.name = exportName.value.trim();
        const response = await api("GET", d.path, { query, raw: true, scoped: true });
        downloadBlob(await response.blob(), filenameOf(response, d.filename));
      } catch (error) {
        showError(error);
      } finally {
        button.disabled = false;
      }
    });
    return h("div", { class: "export-item" }, button, h("span", { class: "muted" }, d.format.description || ""));
  }) : h("p", { class: "muted" }, "The server lists no export format."));
}
