// The "mocks" area: the mocks of the selected workspace and one mock's page.
//
//   #/mocks                   the list: type, name, method, path, status, enabled toggle and
//                             hit count (GET /mocks?workspaceId= and GET /metrics: two calls
//                             whatever the number of mocks), a filter box and a type filter;
//                             rows are built once and filtered in memory
//   #/mocks/new               create from a template of GET /templates, edited as YAML/JSON
//   #/mocks/<id>[?tab=edit]   the definition highlighted; edit as YAML or JSON (PUT
//                             /mocks/<id>: the server's validation errors are shown at their
//                             keys and nothing changes); enable/disable, duplicate, delete
//
// Admin routes: behavior notes §1 "Mocks", "Verification", "Other routes" (/templates).
import { api, ApiError } from "../api.js";
import { codeEditor, highlighted, toText } from "../code.js";
import { h, replace, showError, toast, useStylesheet, when } from "../dom.js";
import { confirmAction, loadCounters, summarize } from "../mocks-data.js";

/** Fields the server keeps itself: left out of a duplicate. */
const SERVER_FIELDS = ["id", "createdAt", "updatedAt", "workspaceId"];

export async function render(root, { args, query, navigate }) {
  useStylesheet("mocks");
  if (args[0] === "new") return renderNew(root, navigate);
  if (args[0]) return renderMock(root, args[0], query, navigate);
  return renderList(root, navigate);
}

// ---------------------------------------------------------------------------- list

async function renderList(root, navigate) {
  const filter = h("input", { type: "search", placeholder: "Filter by name, path, method, id…", "data-testid": "mock-filter", "aria-label": "Filter mocks" });
  const typeSelect = h("select", { "data-testid": "mock-type-filter", "aria-label": "Mock type" }, h("option", { value: "" }, "all types"));
  const count = h("span", { class: "muted", "data-testid": "mock-count" });
  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Mocks"), filter, typeSelect, count, h("span", { class: "spacer" }),
      h("button", { type: "button", class: "primary", "data-testid": "new-mock", onclick: () => navigate("mocks", "new") }, "New mock")),
  );
  const holder = h("div", { class: "mock-list" }, h("p", { class: "muted" }, "Loading…"));
  root.append(holder);

  const [listed, counters] = await Promise.all([
    api("GET", "/mocks", { scoped: true }),
    loadCounters().catch(() => null),
  ]);
  const mocks = listed.mocks || [];
  const hits = counters ? counters.hits : new Map();

  const rows = mocks.map((mock) => {
    const s = summarize(mock);
    const toggle = h("input", { type: "checkbox", checked: Boolean(mock.enabled), "data-testid": "mock-toggle", "aria-label": `Enable ${mock.name || mock.id}` });
    const tr = h("tr", { dataset: { mockId: mock.id }, class: mock.enabled ? "" : "disabled" },
      h("td", {}, toggle),
      h("td", {}, h("span", { class: `badge type-${s.type}` }, s.type)),
      h("td", {}, h("a", { href: `#/mocks/${encodeURIComponent(mock.id)}`, "data-testid": "mock-link" }, mock.name || mock.id),
        h("div", { class: "muted mono small" }, mock.id)),
      h("td", { class: "mono" }, s.method),
      h("td", { class: "mono" }, s.path),
      h("td", { class: "mono" }, s.status),
      h("td", { class: "num", "data-testid": "mock-hits" }, String(hits.get(mock.id) || 0)));
    toggle.addEventListener("change", async () => {
      toggle.disabled = true;
      try {
        const answer = await api("POST", `/mocks/${encodeURIComponent(mock.id)}/toggle`);
        mock.enabled = answer.mock.enabled;
        toast(`${mock.name || mock.id}: ${answer.message}`);
      } catch (error) {
        showError(error);
      } finally {
        toggle.checked = Boolean(mock.enabled);
        tr.classList.toggle("disabled", !mock.enabled);
        toggle.disabled = false;
      }
    });
    const text = [mock.id, mock.name, s.type, s.method, s.path, s.status, mock.description].filter(Boolean).join(" ").toLowerCase();
    return { tr, text, type: s.type };
  });

  const types = [...new Set(rows.map((r) => r.type))].sort();
  typeSelect.append(...types.map((t) => h("option", { value: t }, t)));

  const tbody = h("tbody", {}, rows.map((r) => r.tr));
  const empty = h("p", { class: "muted empty", hidden: rows.length > 0 }, "No mocks in this workspace yet. ",
    h("a", { href: "#/mocks/new" }, "Create one from a template"), " or ", h("a", { href: "#/transfer" }, "import a file"), ".");
  const tableEl = h("table", { class: "grid mocks", "data-testid": "mock-table" },
    h("thead", {}, h("tr", {}, ["On", "Type", "Name", "Method", "Path", "Status", "Hits"].map((t) => h("th", { class: t === "Hits" ? "num" : null }, t)))),
    tbody);
  replace(holder, tableEl, empty);

  const apply = () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const type = typeSelect.value;
    let shown = 0;
    for (const row of rows) {
      const visible = (!type || row.type === type) && words.every((w) => row.text.includes(w));
      row.tr.hidden = !visible;
      if (visible) shown += 1;
    }
    count.textContent = shown === rows.length ? `${rows.length} mock${rows.length === 1 ? "" : "s"}` : `${shown} of ${rows.length}`;
  };
  filter.addEventListener("input", apply);
  typeSelect.addEventListener("change", apply);
  apply();
  filter.focus();
}

// ---------------------------------------------------------------------------- one mock

function withoutServerFields(mock) {
  const copy = { ...mock };
  for (const key of SERVER_FIELDS) delete copy[key];
  return copy;
}

async function renderMock(root, id, query, navigate) {
  let mock;
  try {
    mock = await api("GET", `/mocks/${encodeURIComponent(id)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      root.append(h("div", { class: "error-box" }, h("h2", {}, "No such mock"),
        h("p", {}, `There is no mock ${id}. `, h("a", { href: "#/mocks" }, "Back to the list"))));
      return undefined;
    }
    throw error;
  }
  const lang = query.get("format") === "json" ? "json" : "yaml";
  const tab = query.get("tab") === "edit" ? "edit" : "definition";

  const title = h("h1", { "data-testid": "mock-name" }, mock.name || mock.id);
  const enabled = h("input", { type: "checkbox", checked: Boolean(mock.enabled), "data-testid": "mock-enabled" });
  const summaryLine = h("p", { class: "mono summary", "data-testid": "mock-summary" });
  const calls = h("span", { class: "muted", "data-testid": "mock-calls" });
  const showSummary = () => {
    const s = summarize(mock);
    title.textContent = mock.name || mock.id;
    replace(summaryLine, h("span", { class: `badge type-${s.type}` }, s.type), " ",
      [s.method, s.path].filter(Boolean).join(" "), s.status ? ` → ${s.status}` : "");
  };
  showSummary();
  api("GET", `/mocks/${encodeURIComponent(id)}/verify`).then((v) => {
    calls.textContent = `${v.callCount} call${v.callCount === 1 ? "" : "s"}${v.lastCalledAt ? `, last ${when(v.lastCalledAt)}` : ""}`;
  }).catch(() => { calls.textContent = ""; });

  enabled.addEventListener("change", async () => {
    enabled.disabled = true;
    try {
      const answer = await api("POST", `/mocks/${encodeURIComponent(id)}/toggle`);
      mock = answer.mock;
      toast(answer.message);
      showDefinition();
    } catch (error) {
      showError(error);
    } finally {
      enabled.checked = Boolean(mock.enabled);
      enabled.disabled = false;
    }
  });

  const duplicate = h("button", { type: "button", "data-testid": "duplicate-mock" }, "Duplicate");
  duplicate.addEventListener("click", async () => {
    duplicate.disabled = true;
    try {
      const copy = withoutServerFields(mock);
      copy.name = `${mock.name || mock.id} (copy)`;
      const answer = await api("POST", "/mocks", { json: copy, scoped: true });
      toast(`Duplicated as ${answer.id}`);
      navigate("mocks", answer.id);
    } catch (error) {
      showError(error);
      duplicate.disabled = false;
    }
  });
  const remove = h("button", { type: "button", class: "danger", "data-testid": "delete-mock" }, "Delete");
  remove.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the mock “${mock.name || mock.id}”? This cannot be undone.`))) return;
    try {
      await api("DELETE", `/mocks/${encodeURIComponent(id)}`);
      toast(`Deleted ${mock.name || mock.id}`);
      navigate("mocks");
    } catch (error) {
      showError(error);
    }
  });

  root.append(
    h("p", {}, h("a", { href: "#/mocks" }, "← Mocks")),
    h("div", { class: "toolbar" }, title, h("label", { class: "inline" }, enabled, " enabled"), h("span", { class: "spacer" }), calls, duplicate, remove),
    h("div", { class: "toolbar" }, summaryLine, h("span", { class: "muted mono" }, mock.id)),
  );

  const tabs = h("div", { class: "tabs", role: "tablist" });
  const body = h("div", { class: "tab-body" });
  root.append(tabs, body);
  const definition = h("div", { "data-testid": "mock-definition" });
  let formatNow = lang;
  const formatSwitch = h("select", { "data-testid": "definition-format", "aria-label": "Format" },
    h("option", { value: "yaml", selected: lang === "yaml" }, "YAML"), h("option", { value: "json", selected: lang === "json" }, "JSON"));
  formatSwitch.addEventListener("change", () => { formatNow = formatSwitch.value; showDefinition(); });
  async function showDefinition() {
    replace(definition, highlighted(await toText(mock, formatNow), formatNow));
  }
  const editor = await codeEditor({
    value: mock,
    lang,
    testid: "mock-editor",
    onSave: async (value) => {
      const answer = await api("PUT", `/mocks/${encodeURIComponent(id)}`, { json: value });
      mock = answer.mock;
      toast(answer.message);
      enabled.checked = Boolean(mock.enabled);
      showSummary();
      await showDefinition();
      await editor.setValue(mock);
    },
  });
  const panes = {
    definition: h("div", {}, h("div", { class: "toolbar" }, h("label", { class: "inline" }, "Format ", formatSwitch)), definition),
    edit: editor.element,
  };
  const select = (name) => {
    for (const button of tabs.children) button.classList.toggle("active", button.dataset.tab === name);
    replace(body, panes[name]);
  };
  for (const [name, label] of [["definition", "Definition"], ["edit", "Edit"]]) {
    tabs.append(h("button", { type: "button", role: "tab", dataset: { tab: name }, "data-testid": `tab-${name}`, onclick: () => select(name) }, label));
  }
  await showDefinition();
  select(tab);
  return undefined;
}

// ---------------------------------------------------------------------------- new mock

async function renderNew(root, navigate) {
  root.append(h("p", {}, h("a", { href: "#/mocks" }, "← Mocks")), h("h1", {}, "New mock"),
    h("p", { class: "muted" }, "Pick a template, change what you need, and create it in the selected workspace."));
  const answer = await api("GET", "/templates");
  const templates = answer.templates || [];
  const byType = new Map();
  for (const template of templates) {
    if (!byType.has(template.type)) byType.set(template.type, []);
    byType.get(template.type).push(template);
  }
  const picker = h("div", { class: "template-picker" });
  const editorHolder = h("div", { class: "template-editor" });
  root.append(picker, editorHolder);
  const choose = async (template, button) => {
    for (const other of picker.querySelectorAll("button.template")) other.classList.toggle("active", other === button);
    const asConfig = Boolean(template.config);
    const editor = await codeEditor({
      value: asConfig ? template.config : template.mock,
      lang: "yaml",
      testid: "new-editor",
      saveLabel: asConfig ? "Create mocks and tables" : "Create mock",
      onSave: async (value) => {
        if (asConfig) {
          const result = await api("POST", "/config", { json: { config: value }, scoped: true });
          toast(result.message || "Created");
          navigate("mocks");
          return;
        }
        const created = await api("POST", "/mocks", { json: value, scoped: true });
        toast(created.message || `Created ${created.id}`);
        navigate("mocks", created.id);
      },
    });
    replace(editorHolder,
      h("h2", {}, template.name),
      h("p", { class: "muted" }, template.description || "",
        asConfig ? " This template is a small configuration (tables and several mocks): it is imported as a whole." : ""),
      editor.element);
  };

  for (const [type, list] of byType) {
    picker.append(h("div", { class: "template-group" }, h("h2", {}, type),
      list.map((template) => {
        const button = h("button", { type: "button", class: "template", "data-testid": `template-${template.id}`, title: template.description || "" },
          h("strong", {}, template.name), h("span", { class: "muted" }, template.description || ""));
        button.addEventListener("click", () => choose(template, button).catch(showError));
        return button;
      })));
  }
  if (templates.length) await choose(templates[0], picker.querySelector("button.template"));
  return undefined;
}
