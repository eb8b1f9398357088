// DOM helpers of the dashboard. Every text goes in as text (never innerHTML), so what a mock,
// a request or a recording contains cannot run in the page. The page runs under
// `Content-Security-Policy: default-src 'self'`: no inline scripts, no style attributes in
// markup (set element.style from script, or use the classes of app.css).

/**
 * Build an element: h("a", {href: "#/mocks", class: "x", onclick: fn, dataset: {id: 1}},
 * "text", child, [more children]). Attributes whose value is null/undefined/false are left out.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "class") {
      element.className = value;
    } else if (name === "value" || name === "checked" || name === "disabled" || name === "selected") {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace the children of `element` with `children`. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/**
 * A table: columns = [{title, cell: row => Node|string, class?}], rows = [...].
 * `empty` is shown in one cell when there are no rows.
 */
export function table(columns, rows, empty = "Nothing here yet.") {
  const head = h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.class }, c.title))));
  const body = h("tbody", {}, rows.length
    ? rows.map((row) => h("tr", {}, columns.map((c) => h("td", { class: c.class }, c.cell(row)))))
    : h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, empty)));
  return h("table", { class: "grid" }, head, body);
}

/** Pretty JSON as a <pre> block (text only). */
export function jsonBlock(value) {
  return h("pre", { class: "code" }, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

/** A short message at the top of the page: kind "info" | "error". */
export function toast(message, kind = "info") {
  const box = document.getElementById("toasts");
  const item = h("div", { class: `toast ${kind}` }, message);
  box.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 8000 : 4000);
}

/** Show an ApiError (or any error) as an error toast; returns it for chaining. */
export function showError(error) {
  toast(error && error.message ? error.message : String(error), "error");
  return error;
}

/** Format an ISO timestamp in the user's locale (time only when it is today). */
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const today = new Date();
  return date.toDateString() === today.toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
}

/** Load `static/dashboard/css/<name>.css` once (a page's own styles beside app.css). */
export function useStylesheet(name) {
  const href = `${document.body.dataset.static}css/${name}.css`;
  if (!document.querySelector(`link[href="${href}"]`)) {
    document.head.append(h("link", { rel: "stylesheet", href }));
  }
}

/** The data plane's base URL ("http://127.0.0.1:4280"), for calling mocks as a client. */
export function dataPlaneUrl() {
  return document.body.dataset.dataUrl || `${window.location.protocol}//${window.location.hostname}:4280`;
}
