// Shared pieces of the Mocks, Overview and Import/export areas: a one-line summary of a mock
// of any type, the server's counters read from the admin `GET /metrics` (one call for every
// mock's hit count, the request totals by status and the mocks by type: behavior notes §17),
// and a confirmation dialog.
import { api } from "./api.js";
import { h } from "./dom.js";

/**
 * What a list shows of a mock: {type, method, path, status} as strings ("" when the type
 * has no such thing). HTTP: matcher method (ANY when absent), path or pathPattern, the
 * response status or the kind of answer (SSE, chunked, table action); GraphQL, SOAP and
 * WebSocket: their path; gRPC and MQTT: their port; identity provider: its issuer.
 */
export function summarize(mock) {
  const type = String(mock && mock.type ? mock.type : "http");
  const block = (mock && mock[type]) || {};
  const out = { type, method: "", path: "", status: "" };
  if (type === "http") {
    const matcher = block.matcher || {};
    const response = block.response || {};
    out.method = matcher.method ? String(matcher.method) : "ANY";
    out.path = matcher.path || (matcher.pathPattern ? `~ ${matcher.pathPattern}` : "");
    if (block.sse) out.status = "SSE";
    else if (block.chunked) out.status = "chunked";
    else if (block.statefulBinding) out.status = `table ${block.statefulBinding.table || ""} ${block.statefulBinding.action || ""}`.trim();
    else if (block.customOperation || block.statefulOperation) out.status = "operation";
    else if (response.statusCode !== undefined) out.status = String(response.statusCode);
    else out.status = "200";
  } else if (type === "graphql" || type === "soap") {
    out.method = "POST";
    out.path = block.path || "";
  } else if (type === "websocket") {
    out.method = "WS";
    out.path = block.path || "";
  } else if (type === "grpc" || type === "mqtt") {
    out.path = block.port !== undefined ? `port ${block.port}` : "";
    const count = type === "grpc" ? Object.keys(block.services || {}).length : (block.topics || []).length;
    out.status = `${count} ${type === "grpc" ? "service" : "topic"}${count === 1 ? "" : "s"}`;
  } else if (type === "oauth") {
    out.path = block.issuer || "";
  }
  return out;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/**
 * Parse Prometheus text (the admin `GET /metrics` answer) into [{name, labels, value}];
 * comment lines are skipped. Bounded by the text given (the server's scrape).
 */
export function parseMetrics(text) {
  const samples = [];
  for (const line of String(text || "").split("\n")) {
    if (!line || line[0] === "#") continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels = {};
    if (match[2]) {
      LABEL.lastIndex = 0;
      let label;
      while ((label = LABEL.exec(match[2])) !== null) labels[label[1]] = label[2].replace(/\\(.)/g, "$1");
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The counters the dashboard shows, from one `GET /metrics`: {hits: Map(mockId -> hits),
 * requests (data-plane answers since start), errors (answers with status >= 400), misses
 * (requests no mock matched), mocksByType: {type: {total, enabled}}, uptime (s)}.
 */
/** The `/metrics` families loadCounters reads (`?name[]=`: about 100 KB with 1,000 mocks
 * instead of every family with its histograms, 2.5 MB). */
const COUNTER_FAMILIES = ["mockd_match_hits_total", "mockd_http_requests_total",
  "mockd_match_misses_total", "mockd_mocks_total", "mockd_mocks_enabled", "mockd_uptime_seconds"];

export async function loadCounters() {
  const query = COUNTER_FAMILIES.map((name) => `name[]=${encodeURIComponent(name)}`).join("&");
  const text = await api("GET", `/metrics?${query}`);
  const counters = { hits: new Map(), requests: 0, errors: 0, misses: 0, mocksByType: {}, uptime: null };
  for (const sample of parseMetrics(text)) {
    switch (sample.name) {
      case "mockd_match_hits_total":
        counters.hits.set(sample.labels.mock_id, sample.value);
        break;
      case "mockd_http_requests_total":
        counters.requests += sample.value;
        if (Number(sample.labels.status) >= 400) counters.errors += sample.value;
        break;
      case "mockd_match_misses_total":
        counters.misses = sample.value;
        break;
      case "mockd_mocks_total":
      case "mockd_mocks_enabled": {
        const entry = counters.mocksByType[sample.labels.type] || { total: 0, enabled: 0 };
        entry[sample.name === "mockd_mocks_total" ? "total" : "enabled"] = sample.value;
        counters.mocksByType[sample.labels.type] = entry;
        break;
      }
      case "mockd_uptime_seconds":
        counters.uptime = sample.value;
        break;
      default:
    }
  }
  return counters;
}

/** Ask before doing something that cannot be undone: resolves true when confirmed. */
export function confirmAction(message, action = "Delete") {
  return new Promise((resolve) => {
    const yes = h("button", { type: "submit", value: "yes", class: "danger", "data-testid": "confirm-yes" }, action);
    const no = h("button", { type: "submit", value: "no", "data-testid": "confirm-no" }, "Cancel");
    const dialog = h("dialog", { class: "confirm", "data-testid": "confirm-dialog" },
      h("form", { method: "dialog" }, h("p", {}, message), h("menu", {}, no, yes)));
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "yes");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}

/** "3 h 4 min", "52 s": a duration in seconds for people. */
export function duration(seconds) {
  const s = Math.max(0, Math.floor(Number(seconds) || 0));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
