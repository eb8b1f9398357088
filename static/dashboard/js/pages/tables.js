// The "tables" area: the runtime state of tables and the custom operations.
//
// #/tables                 every table with its item count (GET /state), reset one or all to
//                          seed data, and the custom operations (GET /state/operations) with a
//                          form to execute one (JSON input, result shown).
// #/tables/<name>?page=N   the items of one table, PAGE_SIZE a page
//                          (GET /state/resources/<name>/items), each editable as JSON (PUT) or
//                          deleted (DELETE /state/resources/<name>/items/<id>); add an item
//                          (POST), reset the table to its seed data.
// Source: behavior notes §1 "State (tables) and custom operations", §6.
import { ApiError, api } from "../api.js";
import { h, jsonBlock, replace, showError, table, toast, useStylesheet, when } from "../dom.js";

/** Items shown on one page of a table. */
export const PAGE_SIZE = 25;

const path = (...parts) => parts.map(encodeURIComponent).join("/");
const scoped = (method, url, options = {}) => api(method, url, { ...options, scoped: true });

export function render(root, { args, query, navigate }) {
  useStylesheet("tables");
  if (args.length) return renderTable(root, args[0], query, navigate);
  return renderOverview(root);
}

// --------------------------------------------------------------------------- overview

async function renderOverview(root) {
  const tablesBox = h("div", { "data-testid": "tables" });
  const operationsBox = h("div", { "data-testid": "operations" });
  const runner = h("div", { class: "operation-runner" });
  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Tables"), h("span", { class: "spacer" }),
      h("button", { type: "button", "data-testid": "refresh-tables", onclick: () => loadTables() }, "Refresh"),
      h("button", { type: "button", class: "danger", "data-testid": "reset-all",
        onclick: async () => {
          if (!window.confirm("Reset every table to its seed data?")) return;
          try {
            const answer = await scoped("POST", "/reset");
            toast(`${answer.tables} table(s) reset to seed data`);
            loadTables();
          } catch (error) { showError(error); }
        } }, "Reset all to seed")),
    tablesBox,
    h("h2", {}, "Custom operations"), operationsBox, runner);

  async function loadTables() {
    try {
      const state = await scoped("GET", "/state");
      const resources = state.resources || [];
      replace(tablesBox,
        h("p", { class: "muted" }, `${resources.length} table(s), ${state.totalItems ?? 0} item(s) in all.`),
        table([
          { title: "Table", cell: (r) => h("a", { href: `#/tables/${encodeURIComponent(r.name)}`, "data-testid": "table-link" }, r.name), class: "mono" },
          { title: "Items", cell: (r) => h("span", { "data-testid": "item-count" }, String(r.itemCount)), class: "num" },
          { title: "Seed items", cell: (r) => String(r.seedCount ?? 0), class: "num" },
          { title: "Id field", cell: (r) => r.idField || "id", class: "mono" },
          { title: "Parent field", cell: (r) => r.parentField || "", class: "mono" },
          { title: "", cell: (r) => h("button", { type: "button", "data-testid": "reset-table",
            onclick: () => resetTable(r.name, loadTables) }, "Reset to seed") },
        ], resources, "No tables. Define them under `tables:` in a config, or POST /state/resources."));
      for (const [index, resource] of resources.entries()) {
        tablesBox.querySelectorAll("tbody tr")[index].dataset.table = resource.name;
      }
    } catch (error) {
      replace(tablesBox, h("p", { class: "error" }, error.message));
    }
  }

  async function loadOperations() {
    try {
      const answer = await scoped("GET", "/state/operations");
      const operations = answer.operations || [];
      replace(operationsBox, table([
        { title: "Operation", cell: (o) => o.name, class: "mono" },
        { title: "Steps", cell: (o) => String(o.stepCount ?? ""), class: "num" },
        { title: "Consistency", cell: (o) => o.consistency || "" },
        { title: "", cell: (o) => h("button", { type: "button", "data-testid": "open-operation",
          dataset: { operation: o.name }, onclick: () => openOperation(o.name) }, "Execute…") },
      ], operations, "No custom operations."));
    } catch (error) {
      replace(operationsBox, h("p", { class: "error" }, error.message));
    }
  }

  async function openOperation(name) {
    let definition = null;
    try {
      definition = await scoped("GET", `/state/operations/${path(name)}`);
    } catch (error) {
      showError(error);
      return;
    }
    const input = h("textarea", { class: "json-input", "aria-label": "Operation input",
      "data-testid": "operation-input" }, "{\n}");
    const result = h("div", { "data-testid": "operation-result" });
    const run = h("button", { type: "button", class: "primary", "data-testid": "execute-operation",
      onclick: async () => {
        const parsed = parseJson(input.value.trim() || "{}", result);
        if (parsed === undefined) return;
        run.disabled = true;
        try {
          const answer = await scoped("POST", `/state/operations/${path(name)}/execute`, { json: parsed });
          replace(result, h("h3", { class: "ok" }, "Result"), jsonBlock(answer));
          loadTables();
        } catch (error) {
          replace(result, h("h3", { class: "error" }, `Failed (${error.status || "?"} ${error.code || ""})`),
            h("p", { class: "field-error" }, error.message));
        } finally {
          run.disabled = false;
        }
      } }, "Execute");
    replace(runner, h("div", { class: "card" },
      h("h2", {}, `Execute ${name}`),
      definition && definition.description ? h("p", {}, definition.description) : null,
      h("details", {}, h("summary", {}, "Definition"), jsonBlock(definition)),
      h("label", {}, "Input (JSON)", input),
      h("div", { class: "toolbar" }, run),
      result));
    input.focus();
  }

  await Promise.all([loadTables(), loadOperations()]);
}

async function resetTable(name, then) {
  try {
    await scoped("POST", `/state/resources/${path(name)}/reset`);
    toast(`${name} reset to its seed data`);
    then();
  } catch (error) {
    showError(error);
  }
}

/** JSON.parse that reports a syntax error in `errorBox`; undefined when not JSON. */
function parseJson(text, errorBox) {
  try {
    return JSON.parse(text);
  } catch (error) {
    replace(errorBox, h("p", { class: "field-error" }, `Not valid JSON: ${error.message}`));
    return undefined;
  }
}

// --------------------------------------------------------------------------- one table

async function renderTable(root, name, query, navigate) {
  const page = Math.max(0, Number.parseInt(query.get("page") || "0", 10) || 0);
  let resource;
  try {
    resource = await scoped("GET", `/state/resources/${path(name)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      root.append(h("p", {}, h("a", { href: "#/tables" }, "← Tables")),
        h("div", { class: "error-box" }, h("h2", {}, "No such table"), h("p", {}, error.message)));
      return;
    }
    throw error;
  }
  const idField = resource.idField || "id";
  const itemsBox = h("div", { "data-testid": "items" });
  const pager = h("div", { class: "toolbar pager" });
  const editor = h("div", { class: "item-editor" });
  const count = h("span", { class: "badge", "data-testid": "table-item-count" });
  root.append(
    h("p", {}, h("a", { href: "#/tables" }, "← Tables")),
    h("div", { class: "toolbar" }, h("h1", { class: "mono" }, name), count,
      h("span", { class: "spacer" }),
      h("button", { type: "button", "data-testid": "add-item", onclick: () => edit(null) }, "Add item"),
      h("button", { type: "button", "data-testid": "refresh-items", onclick: () => load() }, "Refresh"),
      h("button", { type: "button", class: "danger", "data-testid": "reset-table",
        onclick: () => resetTable(name, () => load()) }, "Reset to seed")),
    editor, itemsBox, pager);

  async function load() {
    const answer = await scoped("GET", `/state/resources/${path(name)}/items`,
      { query: { limit: PAGE_SIZE, offset: page * PAGE_SIZE } });
    const items = answer.data || [];
    const meta = answer.meta || {};
    const total = meta.total ?? items.length;
    count.textContent = `${total} item(s)`;
    replace(itemsBox, table([
      { title: idField, cell: (item) => String(item[idField] ?? ""), class: "mono item-id" },
      { title: "Fields", cell: (item) => h("code", { class: "item-fields" }, summary(item, idField)) },
      { title: "Updated", cell: (item) => when(item.updatedAt || item.createdAt), class: "nowrap muted" },
      { title: "", class: "nowrap", cell: (item) => [
        h("button", { type: "button", "data-testid": "edit-item", onclick: () => edit(item) }, "Edit"), " ",
        h("button", { type: "button", class: "danger", "data-testid": "delete-item",
          onclick: () => remove(item) }, "Delete")] },
    ], items, "This table is empty."));
    itemsBox.querySelectorAll("tbody tr").forEach((tr, index) => {
      if (items[index]) {
        tr.dataset.testid = "item-row";
        tr.dataset.id = String(items[index][idField]);
      }
    });
    const first = total ? page * PAGE_SIZE + 1 : 0;
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    replace(pager,
      h("button", { type: "button", disabled: page === 0, "data-testid": "previous-page",
        onclick: () => navigate(`#/tables/${encodeURIComponent(name)}?page=${page - 1}`) }, "← Previous"),
      h("span", { class: "muted" }, `${first}–${page * PAGE_SIZE + items.length} of ${total} · page ${page + 1} of ${pages}`),
      h("button", { type: "button", disabled: !meta.has_more && (page + 1) * PAGE_SIZE >= total,
        "data-testid": "next-page",
        onclick: () => navigate(`#/tables/${encodeURIComponent(name)}?page=${page + 1}`) }, "Next →"));
  }

  function edit(item) {
    const creating = item === null;
    const shown = creating ? {} : withoutStamps(item);
    const input = h("textarea", { class: "json-input", "aria-label": "Item JSON", "data-testid": "item-json" },
      JSON.stringify(shown, null, 2));
    const errors = h("div", { "data-testid": "item-error" });
    const save = h("button", { type: "button", class: "primary", "data-testid": "save-item",
      onclick: async () => {
        const body = parseJson(input.value, errors);
        if (body === undefined) return;
        save.disabled = true;
        try {
          if (creating) await scoped("POST", `/state/resources/${path(name)}/items`, { json: body });
          else await scoped("PUT", `/state/resources/${path(name)}/items/${path(String(item[idField]))}`, { json: body });
          toast(creating ? "Item created" : `Item ${item[idField]} saved`);
          replace(editor);
          await load();
        } catch (error) {
          replace(errors, h("p", { class: "field-error" }, error.message));
          save.disabled = false;
        }
      } }, creating ? "Create" : "Save");
    replace(editor, h("div", { class: "card" },
      h("h2", {}, creating ? "New item" : `Edit ${item[idField]}`),
      h("p", { class: "muted" }, creating
        ? `Leave out ${idField} to have one generated.`
        : `Saving replaces the item's fields; ${idField} and createdAt are kept.`),
      input, errors,
      h("div", { class: "toolbar" }, save,
        h("button", { type: "button", "data-testid": "cancel-edit", onclick: () => replace(editor) }, "Cancel"))));
    input.focus();
  }

  async function remove(item) {
    const id = String(item[idField]);
    if (!window.confirm(`Delete item ${id} of ${name}?`)) return;
    try {
      await scoped("DELETE", `/state/resources/${path(name)}/items/${path(id)}`);
      toast(`Item ${id} deleted`);
      await load();
    } catch (error) {
      showError(error);
    }
  }

  await load();
}

function withoutStamps(item) {
  const copy = { ...item };
  delete copy.createdAt;
  delete copy.updatedAt;
  return copy;
}

function summary(item, idField) {
  const rest = withoutStamps(item);
  delete rest[idField];
  const text = JSON.stringify(rest);
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
