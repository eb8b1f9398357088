// The "transfer" area: import a document of any supported format into the selected workspace
// and export it in each format the server offers.
//
// Import: a file (read in the browser) or pasted text. The format is detected (the rules of
// GET /formats, behavior notes §13) or chosen; options: replace the workspace's mocks, HAR
// static assets, an id namespace (`as`). "Preview" asks the server for a dry run and lists
// the mocks that would be created or replaced, with the warnings (items skipped, approximations,
// existing ids replaced, the workspace emptied first with "replace"); nothing changes. "Import"
// then sends the same document.
// * A mockd collection goes through POST /config?dryRun=true and POST /config: the server checks
//   the whole document and a 400 names the keys, shown under their lines.
// * Every other format (OpenAPI/Swagger, Postman, HAR, WireMock, Mockoon, WSDL, curl, .proto)
//   goes through POST /import?dryRun=true and POST /import, the raw text as the body: the
//   server converts it as `mockd import` does; a 400 names the format and where it failed.
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
/** Warnings listed in a preview; the count says how many more there are. */
const MAX_WARNINGS = 50;

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

/** The parsed value of a JSON/YAML text, or undefined (XML, curl commands, .proto text). */
async function tryParse(text) {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("<") || /^curl\s/.test(trimmed)) return undefined;
  try {
    return (await parseDocument(text)).value;
  } catch (_) {
    return undefined;
  }
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** The warnings block of a preview (null when there are none). */
function warningsBlock(warnings) {
  if (!warnings.length) return null;
  return h("div", { class: "warnings", "data-testid": "import-warnings" }, h("strong", {}, "Warnings"),
    h("ul", {}, warnings.slice(0, MAX_WARNINGS).map((w) => h("li", {}, w))),
    warnings.length > MAX_WARNINGS ? h("p", { class: "muted" }, `… and ${warnings.length - MAX_WARNINGS} more`) : null);
}

/** The 400 of a preview or an import: the server's problems, one per line. */
function refusal(error, ...more) {
  const issues = issuesOf(error);
  return [h("div", { class: "error-box", "data-testid": "import-errors" },
    h("h2", {}, "The server refuses this document; nothing was imported"),
    h("ul", {}, issues.map((i) => h("li", { class: "field-error" }, i.path ? `${i.path}: ${i.reason}` : i.reason)))),
  ...more];
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
  const file = h("input", { type: "file", accept: ".json,.yaml,.yml,.har,.wsdl,.xml,.proto,.sh,.txt", "data-testid": "import-file", "aria-label": "File to import" });
  const text = h("textarea", { spellcheck: "false", placeholder: "Paste a document here (OpenAPI, Postman, HAR, WireMock, Mockoon, WSDL, curl commands, .proto or a mockd collection), or choose a file.", "data-testid": "import-text", "aria-label": "Document to import" });
  const formatSelect = h("select", { "data-testid": "import-format", "aria-label": "Format" }, h("option", { value: "" }, "Detect the format"));
  const replaceBox = h("input", { type: "checkbox", "data-testid": "import-replace" });
  const staticBox = h("input", { type: "checkbox", "data-testid": "import-include-static" });
  const asInput = h("input", { type: "text", placeholder: "e.g. petstore", maxlength: "255", "data-testid": "import-as", "aria-label": "Id namespace" });
  const previewButton = h("button", { type: "button", class: "primary", "data-testid": "import-preview" }, "Preview (dry run)");
  const importButton = h("button", { type: "button", "data-testid": "import-apply", disabled: true }, "Import");
  const result = h("div", { class: "import-result", "data-testid": "import-result" });
  let filename = "";
  // What the last preview accepted: {native: true, document, replace} for POST /config, or
  // {native: false, text, query} for POST /import.
  let prepared = null;

  formatsPromise.then((formats) => {
    for (const format of formats.import || []) {
      formatSelect.append(h("option", { value: format.name }, format.title || format.name));
    }
  });

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
  for (const control of [replaceBox, staticBox, formatSelect, asInput]) {
    control.addEventListener(control === asInput ? "input" : "change", invalidate);
  }

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
    } catch (error) {
      showError(error);
    } finally {
      previewButton.disabled = false;
    }
  });

  async function preview(source) {
    const value = await tryParse(source);
    const kind = formatSelect.value || detect(source, value, filename);
    if (kind === "mockd" && value && typeof value === "object" && !Array.isArray(value)) {
      await previewCollection(source, value);
    } else {
      await previewOther(source, kind);
    }
  }

  /** The warnings shared by both previews: the workspace emptied first, ids that exist. */
  async function replacementNotes(ids, replaceAll) {
    const existing = await api("GET", "/mocks", { scoped: true });
    const existingIds = new Set((existing.mocks || []).map((m) => m.id));
    const warnings = [];
    if (replaceAll && existing.total) {
      warnings.push(`Replace: the ${plural(existing.total, "mock")} now in ${workspaceName()} are deleted first, with its tables, bindings and custom operations.`);
    }
    const actions = ids.map((id) => {
      const replaced = Boolean(id) && existingIds.has(id) && !replaceAll;
      if (replaced) warnings.push(`${id}: a mock with this id exists; the import replaces it.`);
      return replaced ? "replace" : "create";
    });
    return { warnings, actions };
  }

  function previewTable(columns, rows) {
    const shown = rows.slice(0, MAX_PREVIEW_ROWS);
    return [h("table", { class: "grid", "data-testid": "import-preview-table" },
      h("thead", {}, h("tr", {}, ["Action", ...columns.map((c) => c.title)].map((t) => h("th", {}, t)))),
      h("tbody", {}, shown.map((row) => h("tr", { dataset: { action: row.action } },
        h("td", {}, h("span", { class: `badge ${row.action === "create" ? "ok" : "warn"}` }, row.action)),
        columns.map((c) => h("td", { class: c.mono ? "mono" : null }, c.cell(row))))))),
    rows.length > shown.length ? h("p", { class: "muted" }, `… and ${rows.length - shown.length} more mocks`) : null];
  }

  /** A mockd collection: POST /config?dryRun=true, then the rows from the document itself. */
  async function previewCollection(source, document) {
    const replaceAll = replaceBox.checked;
    let dry;
    try {
      dry = await api("POST", "/config", { json: { config: document, replace: replaceAll }, query: { dryRun: "true" }, scoped: true });
    } catch (error) {
      if (!error.status || error.status >= 500) throw error;
      replace(result, ...refusal(error, annotated(source, source.trimStart().startsWith("{") ? "json" : "yaml", issuesOf(error))));
      return;
    }
    const mocks = (Array.isArray(document.mocks) ? document.mocks : []).map((m) => m || {});
    const { warnings, actions } = await replacementNotes(mocks.map((m) => m.id), replaceAll);
    const tables = (document.tables || document.statefulResources || []).length;
    if (tables) warnings.push(`${plural(tables, "table")} (with their seed data) replace the tables of the same name.`);
    if ((document.customOperations || []).length) warnings.push(`${document.customOperations.length} custom operation(s) replace those of the same name.`);
    if (dry.mocks !== mocks.length) warnings.push(`The server counts ${dry.mocks} mocks, the preview ${mocks.length}.`);
    const noId = mocks.filter((m) => !m.id).length;

    prepared = { native: true, document, replace: replaceAll };
    importButton.disabled = false;
    const rows = mocks.map((mock, index) => ({ mock, action: actions[index], s: summarize(mock) }));
    replace(result,
      h("h2", {}, "Dry run"),
      h("p", { "data-testid": "import-summary" },
        `${plural(dry.mocks, "mock")} would be imported into ${workspaceName()} `,
        replaceAll ? "(replacing everything there)" : "(merged with what is there)",
        dry.statefulResources ? `, with ${dry.statefulResources} stateful resource(s)` : "",
        ". The server checked the whole document; nothing has changed yet.",
        noId ? ` ${noId} mock${noId === 1 ? " has" : "s have"} no id and get${noId === 1 ? "s" : ""} a new one.` : ""),
      warningsBlock(warnings),
      ...previewTable([
        { title: "Id", mono: true, cell: (r) => r.mock.id || "(new)" },
        { title: "Name", cell: (r) => r.mock.name || "" },
        { title: "Type", cell: (r) => r.s.type },
        { title: "Method", mono: true, cell: (r) => r.s.method },
        { title: "Path", mono: true, cell: (r) => r.s.path },
        { title: "Status", mono: true, cell: (r) => r.s.status },
      ], rows));
  }

  /** The query of POST /import for the current choices (without dryRun). */
  function importQuery(kind) {
    const query = { replace: replaceBox.checked ? "true" : "" };
    // curl commands are converted only when asked for (SPEC): the choice or the detection says so.
    if (formatSelect.value) query.format = formatSelect.value;
    else if (kind === "curl") query.format = "curl";
    if (filename) query.filename = filename;
    if (staticBox.checked) query.includeStatic = "true";
    if (asInput.value.trim()) query.as = asInput.value.trim();
    return query;
  }

  /** Any other format: POST /import?dryRun=true converts it on the server. */
  async function previewOther(source, kind) {
    const query = importQuery(kind);
    let dry;
    try {
      dry = await api("POST", "/import", { body: source, headers: { "Content-Type": "text/plain; charset=utf-8" }, query: { ...query, dryRun: "true" }, scoped: true });
    } catch (error) {
      if (!error.status || error.status >= 500) throw error;
      replace(result, ...refusal(error));
      return;
    }
    const formats = await formatsPromise;
    const known = (formats.import || []).find((f) => f.name === dry.format);
    const rows = dry.mocks || [];
    const { warnings, actions } = await replacementNotes(rows.map((r) => r.id), replaceBox.checked);
    warnings.push(...(dry.warnings || []));
    if (dry.tables) warnings.push(`${plural(dry.tables, "table")} replace the tables of the same name.`);

    prepared = { native: false, text: source, query };
    importButton.disabled = false;
    replace(result,
      h("h2", {}, "Dry run"),
      h("p", { "data-testid": "import-summary" },
        `${plural(dry.count, "mock")} would be imported into ${workspaceName()} from this `,
        h("strong", { "data-testid": "import-detected-format" }, known ? known.title : dry.format),
        " document ", replaceBox.checked ? "(replacing everything there)" : "(merged with what is there)",
        ". The server converted and checked it; nothing has changed yet.",
        (dry.skipped || []).length ? ` ${plural(dry.skipped.length, "item")} of the document cannot be converted and ${dry.skipped.length === 1 ? "is" : "are"} skipped.` : ""),
      warningsBlock(warnings),
      ...previewTable([
        { title: "Id", mono: true, cell: (r) => r.id },
        { title: "Name", cell: (r) => r.name || "" },
        { title: "Method", mono: true, cell: (r) => r.method || "" },
        { title: "Path", mono: true, cell: (r) => r.path || "" },
      ], rows.map((row, index) => ({ ...row, action: actions[index] }))),
      dry.truncated ? h("p", { class: "muted" }, `The server listed the first ${rows.length} of ${dry.count}.`) : null);
  }

  importButton.addEventListener("click", async () => {
    if (!prepared) return;
    importButton.disabled = true;
    try {
      const answer = prepared.native
        ? await api("POST", "/config", { json: { config: prepared.document, replace: prepared.replace }, scoped: true })
        : await api("POST", "/import", { body: prepared.text, headers: { "Content-Type": "text/plain; charset=utf-8" }, query: prepared.query, scoped: true });
      const message = answer.message || `Imported ${plural(answer.imported, "mock")}${answer.format ? ` (format: ${answer.format})` : ""}`;
      replace(result, h("div", { class: "import-done", "data-testid": "import-done" },
        h("h2", {}, message),
        h("p", {}, `${plural(answer.imported, "mock")} imported; ${answer.total} in ${workspaceName()} now. `,
          h("a", { href: "#/mocks" }, "See the mocks")),
        (answer.warnings || []).length ? h("ul", { class: "warnings" }, answer.warnings.slice(0, MAX_WARNINGS).map((w) => h("li", {}, typeof w === "string" ? w : JSON.stringify(w)))) : null));
      toast(message);
      prepared = null;
    } catch (error) {
      importButton.disabled = false;
      if (error.status === 400) replace(result, ...refusal(error));
      else showError(error);
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
        h("div", { class: "form-row" }, file, h("label", {}, "Format", formatSelect)),
        text,
        h("div", { class: "form-row import-options" },
          h("label", { class: "inline" }, replaceBox, " replace the mocks of this workspace"),
          h("label", { class: "inline", title: "HAR: keep scripts, styles, images and fonts" }, staticBox, " keep static assets (HAR)"),
          h("label", {}, "Id namespace (OpenAPI operationIds)", asInput)),
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
