// The "requests" area: the request log, live.
//
// #/requests              the newest entries of GET /requests, then every new entry from the
//                         admin SSE route GET /requests/stream (event "request"), filtered by
//                         matched/unmatched, method and path prefix.
// #/requests/<id>         one entry (GET /requests/<id>): headers, body, the answer; for an
//                         unmatched request its near misses side by side with what each near
//                         mock expected, and "Create a mock from this request".
//
// Keeping up with a busy data plane (1,000 requests/s): stream events are only parsed and
// queued; a timer renders the queue at most every RENDER_EVERY_MS, as one DOM insertion of the
// newest MAX_ROWS entries, and rows beyond MAX_ROWS are removed. Source: SPEC "Request stream
// (admin)"; behavior notes §1 "Request log", §4 (near misses).
import { ApiError, api, eventSource, get, workspace } from "../api.js";
import { h, jsonBlock, replace, showError, table, toast, useStylesheet, when } from "../dom.js";

/** Rows kept in the DOM (and entries kept in memory) at most. */
export const MAX_ROWS = 500;
/** Shortest time between two renders of queued stream entries (ms). */
export const RENDER_EVERY_MS = 250;
/** Longest time between two renders while entries wait (ms). */
export const MAX_RENDER_EVERY_MS = 2000;
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

export function render(root, { args, navigate }) {
  useStylesheet("requests");
  if (args.length) return renderDetail(root, args[0], navigate);
  return renderLog(root);
}

// --------------------------------------------------------------------------- the live log

function renderLog(root) {
  const filters = { matched: "all", method: "", path: "" };
  let entries = []; // newest first, at most MAX_ROWS, all passing the filters
  let pending = []; // parsed stream entries not rendered yet, oldest first
  let received = 0;
  let paused = false;
  let loadGeneration = 0;
  let source = null;
  let timer = null;

  const status = h("span", { class: "badge", "data-testid": "stream-status" }, "connecting…");
  const counter = h("span", { class: "muted", "data-testid": "request-count" });
  // The rows: a scroll box of grid rows (not a <table>), each skipped by layout and paint
  // while off screen (`content-visibility: auto` in requests.css), so a batch of new rows costs
  // about one screen of layout whatever MAX_ROWS is.
  const body = h("div", { class: "request-rows", role: "rowgroup", "data-testid": "request-rows" });
  const emptyRow = h("div", { class: "empty-row muted" },
    "No requests yet. Call the data plane and they appear here.");
  const pauseButton = h("button", { type: "button", "data-testid": "pause", onclick: () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    if (!paused) flush();
  } }, "Pause");

  const matchedSelect = h("select", { "aria-label": "Matched", "data-testid": "filter-matched",
    onchange: () => { filters.matched = matchedSelect.value; reload(); } },
  h("option", { value: "all" }, "All requests"),
  h("option", { value: "matched" }, "Matched"),
  h("option", { value: "unmatched" }, "Unmatched"));
  const methodSelect = h("select", { "aria-label": "Method", "data-testid": "filter-method",
    onchange: () => { filters.method = methodSelect.value; reload(); } },
  h("option", { value: "" }, "Any method"), METHODS.map((m) => h("option", { value: m }, m)));
  let typing = null;
  const pathInput = h("input", { type: "search", placeholder: "Path starts with…",
    "aria-label": "Path", "data-testid": "filter-path", oninput: () => {
      clearTimeout(typing);
      typing = setTimeout(() => { filters.path = pathInput.value.trim(); reload(); }, 300);
    } });

  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Request log"), status, h("span", { class: "spacer" }),
      counter),
    h("div", { class: "toolbar" }, matchedSelect, methodSelect, pathInput,
      h("span", { class: "spacer" }), pauseButton,
      h("button", { type: "button", class: "danger", "data-testid": "clear-log", onclick: clearLog },
        "Clear log")),
    h("div", { class: "requests-log", role: "table", "aria-label": "Request log" },
      h("div", { class: "request-row request-head", role: "row" },
        ["Time", "Method", "Path", "Status", "Mock", "ms"].map((title) =>
          h("span", { role: "columnheader" }, title))),
      body));

  function passes(entry) {
    if (filters.matched === "matched" && !matchedId(entry)) return false;
    if (filters.matched === "unmatched" && matchedId(entry)) return false;
    if (filters.method && String(entry.method || "").toUpperCase() !== filters.method) return false;
    if (filters.path && !String(entry.path || "").startsWith(filters.path)) return false;
    const scope = workspace();
    // The stream spans every workspace; unmatched requests belong to the default one.
    if (scope && (entry.workspaceId || "local") !== scope) return false;
    return true;
  }

  function showCount() {
    counter.textContent = `${entries.length} shown${received ? ` · ${received} received live` : ""}`
      + (paused && pending.length ? ` · ${pending.length} waiting` : "");
  }

  function showEmpty() {
    if (!entries.length && !body.contains(emptyRow)) body.append(emptyRow);
    if (entries.length && body.contains(emptyRow)) emptyRow.remove();
  }

  /** Load the newest entries passing the filters; `merge` keeps the rows shown too (after
   * a reconnect), else they are replaced (a filter changed). */
  async function reload(merge = false) {
    const mine = ++loadGeneration;
    const query = { limit: MAX_ROWS, method: filters.method, path: filters.path };
    if (filters.matched === "unmatched") query.unmatchedOnly = "true";
    try {
      const answer = await api("GET", "/requests", { query, scoped: true });
      if (mine !== loadGeneration) return;
      const loadedEntries = (answer.requests || []).filter(passes);
      if (merge) {
        const ids = new Set(loadedEntries.map((e) => e.id));
        loadedEntries.push(...entries.filter((e) => !ids.has(e.id)));
        // Timestamps are RFC 3339 UTC with milliseconds: text order is time order.
        loadedEntries.sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0));
      }
      entries = loadedEntries.slice(0, MAX_ROWS);
      // The stream is open already: keep what it brought that the page does not hold.
      const loaded = new Set(entries.map((e) => e.id));
      pending = pending.filter((e) => passes(e) && !loaded.has(e.id));
      replace(body, entries.map(row));
      showEmpty();
      showCount();
    } catch (error) {
      if (mine === loadGeneration) showError(error);
    }
  }

  /** Render the queued entries; returns whether rows were added. */
  function flush() {
    if (paused || !pending.length) return false;
    // Newest first; only the newest MAX_ROWS of the batch can be shown.
    const batch = pending.slice(-MAX_ROWS).reverse();
    pending = [];
    const known = new Set(entries.slice(0, batch.length + 50).map((e) => e.id));
    const fresh = batch.filter((entry) => !known.has(entry.id));
    if (!fresh.length) return false;
    const fragment = document.createDocumentFragment();
    for (const entry of fresh) fragment.append(row(entry));
    body.prepend(fragment);
    entries = fresh.concat(entries);
    if (entries.length > MAX_ROWS) {
      entries.length = MAX_ROWS;
      // The oldest rows are the last ones: remove them in one range.
      const range = document.createRange();
      range.setStartBefore(body.children[MAX_ROWS]);
      range.setEndAfter(body.lastElementChild);
      range.deleteContents();
    }
    showEmpty();
    showCount();
    return true;
  }

  function connect() {
    source = eventSource("/requests/stream");
    let dropped = false;
    source.addEventListener("connected", () => {
      status.textContent = "live";
      status.className = "badge ok";
      // Back after a dropped connection (a server restart): what came meanwhile is in the log.
      if (dropped) reload(true);
      dropped = false;
    });
    source.addEventListener("request", (event) => {
      let entry;
      try { entry = JSON.parse(event.data); } catch (_) { return; }
      received += 1;
      if (!passes(entry)) return;
      pending.push(entry);
      if (pending.length > MAX_ROWS * 2) pending = pending.slice(-MAX_ROWS);
    });
    source.onerror = () => {
      dropped = true;
      // EventSource reconnects by itself; say so meanwhile.
      status.textContent = "reconnecting…";
      status.className = "badge warn";
    };
  }

  async function clearLog() {
    if (!window.confirm("Clear the whole request log of this server?")) return;
    try {
      const answer = await api("DELETE", "/requests");
      toast(`${answer.cleared} request(s) cleared`);
      entries = [];
      pending = [];
      replace(body);
      showEmpty();
      showCount();
    } catch (error) {
      showError(error);
    }
  }

  showEmpty();
  connect();
  reload();
  // Render every RENDER_EVERY_MS, or less often when a render costs more than a fifth of
  // that time (a slow machine), so rendering never takes most of the page's time.
  let delay = RENDER_EVERY_MS;
  const tick = () => {
    const started = performance.now();
    if (flush()) void body.offsetHeight; // lay out now, to count its cost
    const cost = performance.now() - started;
    delay = Math.min(MAX_RENDER_EVERY_MS, Math.max(RENDER_EVERY_MS, cost * 5));
    timer = setTimeout(tick, delay);
  };
  timer = setTimeout(tick, delay);
  return () => {
    loadGeneration = -1;
    clearTimeout(timer);
    clearTimeout(typing);
    if (source) source.close();
  };
}

function matchedId(entry) {
  return entry.matchedMockId || entry.matchedMockID || "";
}

function statusKind(code) {
  return code >= 500 ? "error" : code >= 400 ? "warn" : "ok";
}

function statusBadge(code) {
  return h("span", { class: `badge ${statusKind(code)}` }, String(code ?? ""));
}

const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

function timeOf(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso || "") : TIME.format(date);
}

// One row of the log, cloned from a template and filled as text: a busy stream builds
// hundreds of rows a second, and cloning costs a fraction of building each node.
const ROW_TEMPLATE = h("div", { role: "row", "data-testid": "request-row", class: "request-row" },
  h("span", { role: "cell", class: "muted" }),
  h("span", { role: "cell", class: "mono" }),
  h("span", { role: "cell", class: "mono" }, h("a", { "data-testid": "request-link" })),
  h("span", { role: "cell", class: "status" }),
  h("span", { role: "cell" }),
  h("span", { role: "cell", class: "num muted" }));

function row(entry) {
  const mock = matchedId(entry);
  const misses = (entry.nearMisses || []).length;
  const path = entry.path + (entry.queryString ? `?${entry.queryString}` : "");
  const code = entry.statusCode ?? entry.responseStatus;
  const element = ROW_TEMPLATE.cloneNode(true);
  const [time, method, pathCell, status, mockCell, duration] = element.children;
  element.dataset.id = entry.id;
  element.classList.add(mock ? "matched" : "unmatched");
  time.textContent = timeOf(entry.timestamp);
  time.title = entry.timestamp || "";
  method.textContent = entry.method || entry.protocol || "";
  const link = pathCell.firstChild;
  link.href = `#/requests/${encodeURIComponent(entry.id)}`;
  link.textContent = path;
  link.title = path;
  status.textContent = String(code ?? "");
  status.classList.add(statusKind(code));
  if (mock) {
    mockCell.append(h("a", { href: `#/mocks/${encodeURIComponent(mock)}` }, mock));
  } else {
    mockCell.className = "warn";
    mockCell.textContent = misses ? `unmatched · ${misses} near` : "unmatched";
  }
  duration.textContent = entry.durationMs !== undefined ? String(entry.durationMs) : "";
  return element;
}

// --------------------------------------------------------------------------- one request

async function renderDetail(root, id, navigate) {
  root.append(h("p", {}, h("a", { href: "#/requests" }, "← Request log")));
  let entry;
  try {
    entry = await get(`/requests/${encodeURIComponent(id)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      root.append(h("div", { class: "error-box" }, h("h2", {}, "Not in the log"),
        h("p", {}, `Request ${id} is no longer in the request log (it keeps the newest entries only) or the log was cleared.`)));
      return undefined;
    }
    throw error;
  }
  const mock = matchedId(entry);
  const code = entry.statusCode ?? entry.responseStatus;
  root.append(
    h("h1", { class: "mono" }, `${entry.method || entry.protocol} ${entry.path}`
      + (entry.queryString ? `?${entry.queryString}` : "")),
    h("div", { class: "toolbar" }, statusBadge(code),
      mock ? h("span", {}, "answered by ", h("a", { href: `#/mocks/${encodeURIComponent(mock)}`,
        "data-testid": "matched-mock" }, mock))
        : h("span", { class: "badge warn", "data-testid": "unmatched" }, "no mock matched"),
      h("span", { class: "muted" }, `${when(entry.timestamp)} · ${entry.durationMs ?? "?"} ms · ${entry.protocol || "http"} · from ${entry.remoteAddr || "?"}`)));

  if (!mock && (entry.protocol || "http") === "http") root.append(await nearMissSection(entry));
  if ((entry.protocol || "http") === "http" && entry.method) root.append(createMockSection(entry, navigate));

  const headerRows = Object.entries(entry.headers || {}).flatMap(([name, values]) =>
    (Array.isArray(values) ? values : [values]).map((value) => ({ name, value })));
  root.append(h("div", { class: "split" },
    h("section", {}, h("h2", {}, "Request"),
      table([{ title: "Header", cell: (r) => r.name, class: "mono" },
        { title: "Value", cell: (r) => r.value, class: "mono" }], headerRows, "No headers."),
      entry.queryString ? [h("h2", {}, "Query"), h("pre", { class: "code" }, entry.queryString)] : null,
      h("h2", {}, `Body (${entry.bodySize ?? 0} bytes${entry.bodyTruncated ? ", cut" : ""})`),
      entry.body ? bodyBlock(entry.body, "request-body") : h("p", { class: "muted" }, "No body.")),
    h("section", {}, h("h2", {}, "Answer"),
      h("p", {}, "Status ", statusBadge(code), entry.error ? h("span", { class: "error" }, ` ${entry.error}`) : null),
      entry.responseBody !== undefined
        ? bodyBlock(entry.responseBody, "response-body") : h("p", { class: "muted" }, "No body logged."),
      protocolDetails(entry))));
  return undefined;
}

function bodyBlock(text, testid) {
  let shown = text;
  try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (_) { /* not JSON */ }
  const block = jsonBlock(shown);
  block.dataset.testid = testid;
  return block;
}

function protocolDetails(entry) {
  const extra = ["grpc", "websocket", "sse", "mqtt", "soap", "graphql"].filter((k) => entry[k]);
  return extra.map((k) => [h("h2", {}, k), jsonBlock(entry[k])]);
}

/** The near misses with their per-field comparison: the no-match answer's `nearMisses` (with
 * `fields`) when the logged answer holds them, else the entry's short rows. */
async function nearMissSection(entry) {
  let misses = entry.nearMisses || [];
  try {
    const answer = JSON.parse(entry.responseBody || "");
    if (answer && Array.isArray(answer.nearMisses)) misses = answer.nearMisses;
  } catch (_) { /* not the no-match answer */ }
  const section = h("section", { class: "near-misses", "data-testid": "near-misses" },
    h("h2", {}, "Near misses"));
  if (!misses.length) {
    section.append(h("p", { class: "muted" }, "No mock came close: no enabled HTTP mock matched any part of this request."));
    return section;
  }
  const mocks = await Promise.all(misses.map((miss) =>
    get(`/mocks/${encodeURIComponent(miss.mockId)}`).catch(() => null)));
  misses.forEach((miss, index) => section.append(nearMissCard(entry, miss, mocks[index])));
  return section;
}

function nearMissCard(entry, miss, mock) {
  const matcher = (mock && mock.http && mock.http.matcher) || {};
  const rows = [];
  for (const field of miss.fields || []) {
    if (Array.isArray(field.details) && field.details.length) {
      const kind = field.field === "headers" ? "header" : field.field === "queryParams" ? "query" : field.field;
      for (const detail of field.details) {
        rows.push({ field: `${kind} ${detail.key}`, actual: detail.actual, expected: detail.expected,
          matched: detail.matched });
      }
    } else {
      rows.push({ field: field.field, matched: field.matched,
        actual: field.actual ?? requestSide(entry, field.field),
        expected: field.expected ?? matcherSide(matcher, field.field) });
    }
  }
  if (!rows.length) {
    rows.push({ field: "why", matched: false, actual: "", expected: miss.reason || "" });
  }
  const title = miss.mockName ? `${miss.mockName} (${miss.mockId})` : miss.mockId;
  return h("div", { class: "card near-miss", "data-testid": "near-miss", dataset: { mock: miss.mockId } },
    h("div", { class: "toolbar" },
      h("a", { href: `#/mocks/${encodeURIComponent(miss.mockId)}`, class: "mono" }, title),
      h("span", { class: "badge" }, `${miss.matchPercentage ?? 0}% match`),
      h("span", { class: "muted" }, miss.reason || "")),
    table([
      { title: "", cell: (r) => h("span", { class: r.matched ? "ok" : "error" }, r.matched ? "✓" : "✗"), class: "mark" },
      { title: "Field", cell: (r) => r.field, class: "mono" },
      { title: "This request had", cell: (r) => display(r.actual), class: "mono" },
      { title: "The mock expected", cell: (r) => display(r.expected), class: "mono" },
    ], rows));
}

function display(value) {
  if (value === undefined || value === null || value === "") return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function requestSide(entry, field) {
  if (field === "method") return entry.method;
  if (field === "path" || field === "pathPattern") return entry.path;
  if (field.startsWith("body")) return entry.body;
  return undefined;
}

function matcherSide(matcher, field) {
  const keys = { bodyJSONPath: "bodyJsonPath" };
  return matcher[keys[field] || field];
}

/** "Create a mock from this request": an HTTP mock matching its method and path, answering
 * 200 with the body in the box (editable first), then the new mock's page. */
function createMockSection(entry, navigate) {
  const initial = entry.matchedMockId ? (entry.responseBody || "") : '{\n  "ok": true\n}';
  const bodyInput = h("textarea", { class: "answer-body", "aria-label": "Answer body",
    "data-testid": "new-mock-body", rows: 5 }, initial);
  const button = h("button", { type: "button", class: "primary", "data-testid": "create-mock",
    onclick: async () => {
      button.disabled = true;
      const method = (entry.method || "GET").toUpperCase();
      const document = { type: "http", name: `${method} ${entry.path}`, enabled: true,
        http: { matcher: { method, path: entry.path },
          response: { statusCode: 200, body: bodyInput.value } } };
      try {
        const created = await api("POST", "/mocks", { json: document, scoped: true });
        const id = created.id || (created.mock && created.mock.id);
        toast(`Mock ${id} created`);
        navigate("mocks", id);
      } catch (error) {
        showError(error);
        button.disabled = false;
      }
    } }, "Create a mock from this request");
  return h("section", { class: "create-mock" }, h("h2", {}, "Create a mock"),
    h("p", { class: "muted" }, `An HTTP mock matching ${entry.method || "GET"} ${entry.path}, answering 200 with this body:`),
    bodyInput, h("div", { class: "toolbar" }, button));
}
