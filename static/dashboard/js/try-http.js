// "Try it" HTTP panel: a request builder that sends the request from the browser to the data
// plane (fetch; the data plane answers CORS for loopback origins) and shows the answer beside
// the request-log entry it produced (GET /requests?method=&path=, the newest entry at or after
// the send).
import { get } from "./api.js";
import { h, jsonBlock, replace, showError } from "./dom.js";
import { mockPicker } from "./try-common.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/** "Name: value" lines as a Headers object (blank lines skipped). */
export function parseHeaders(text) {
  const headers = new Headers();
  for (const line of text.split("\n")) {
    const at = line.indexOf(":");
    if (line.trim() && at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}

function samplePath(path) {
  return (path || "/").replace(/\{[^}]+\}/g, "1");
}

export function httpPanel(root, mocks, base) {
  const httpMocks = mocks.filter((m) => m.type === "http" && m.http && !m.http.sse);
  const method = h("select", { id: "try-http-method", "aria-label": "Method" }, METHODS.map((m) => h("option", { value: m }, m)));
  const path = h("input", { id: "try-http-path", type: "text", value: "/", size: 40, "aria-label": "Path and query" });
  const headers = h("textarea", { id: "try-http-headers", class: "try-small", placeholder: "Content-Type: application/json", "aria-label": "Headers" });
  const body = h("textarea", { id: "try-http-body", class: "try-small", placeholder: "request body", "aria-label": "Body" });
  const answer = h("div", { "data-testid": "try-http-response" });
  const logged = h("div", { "data-testid": "try-http-log-entry" });
  const picker = mockPicker("try-http-mock", httpMocks, (m) => `${m.name || m.id} — ${(m.http.matcher || {}).method || "ANY"} ${(m.http.matcher || {}).path || (m.http.matcher || {}).pathPattern || ""}`, (mock) => {
    const matcher = (mock && mock.http.matcher) || {};
    if (matcher.method && METHODS.includes(matcher.method)) method.value = matcher.method;
    if (matcher.path) path.value = samplePath(matcher.path);
  });

  async function send(event) {
    event.preventDefault();
    const target = path.value.startsWith("/") ? path.value : `/${path.value}`;
    const init = { method: method.value, headers: parseHeaders(headers.value) };
    if (!["GET", "HEAD"].includes(method.value) && body.value) init.body = body.value;
    const sentAt = Date.now();
    replace(answer, h("p", { class: "muted" }, "Sending…"));
    replace(logged);
    let response;
    try {
      response = await fetch(base + target, init);
    } catch (error) {
      replace(answer, h("p", { class: "error" }, `No answer: ${error.message} (a header outside the CORS list, or the data plane is down)`));
      return;
    }
    const text = await response.text();
    const shownHeaders = [...response.headers.entries()].map(([n, v]) => `${n}: ${v}`).join("\n");
    let shown = text;
    if ((response.headers.get("content-type") || "").includes("json")) {
      try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (_) { /* as sent */ }
    }
    replace(answer, h("h3", {}, "Response ", h("span", { class: `badge ${response.ok ? "ok" : "error"}`, "data-testid": "try-http-status" }, `${response.status} ${response.statusText}`),
      h("span", { class: "muted" }, ` ${Date.now() - sentAt} ms`)),
    h("pre", { class: "code" }, shownHeaders), jsonBlock(shown));
    try {
      const log = await get("/requests", { method: method.value, path: target.split("?")[0], limit: 20 });
      const entry = (log.requests || []).find((r) => Date.parse(r.timestamp) >= sentAt - 1000 && r.path === target.split("?")[0]);
      replace(logged, h("h3", {}, "Request log entry"), entry
        ? [h("p", {}, entry.matchedMockId ? ["matched ", h("code", { "data-testid": "try-http-matched" }, entry.matchedMockId)] : h("span", { class: "warn", "data-testid": "try-http-matched" }, "no mock matched"), ` · ${entry.durationMs} ms · `, h("a", { href: `#/requests/${encodeURIComponent(entry.id)}` }, entry.id)),
          jsonBlock(entry)]
        : h("p", { class: "muted" }, "No log entry found (log filters, or the log is full)."));
    } catch (error) { showError(error); }
  }

  root.append(h("form", { id: "try-http-form", onsubmit: send },
    h("div", { class: "form-row" }, h("label", {}, "Mock", picker), h("label", {}, "Method", method), h("label", {}, "Path", path),
      h("button", { type: "submit", class: "primary", "data-testid": "try-http-send" }, "Send")),
    h("div", { class: "split" }, h("label", {}, "Headers (one per line)", headers), h("label", {}, "Body", body)),
    h("p", { class: "muted" }, `Sent from this browser to ${base}. Only headers the data plane's CORS answer allows can be sent.`)),
  h("div", { class: "split" }, answer, logged));
  return null;
}
