// The "Recordings" area (#/recordings): the recording proxy, its sessions and HTTP recordings,
// the stream recordings (WebSocket frames, SSE events) and the proxy CA.
//
// * Proxy: GET /proxy/status (polled every 3 s), POST /proxy/start {port, mode, sessionName},
//   POST /proxy/stop, PUT /proxy/mode {mode}.
// * CA: GET /proxy/ca, POST /proxy/ca {caPath: "ca"} (in the data directory), GET
//   /proxy/ca/download (PEM, saved through a blob link).
// * Sessions: GET /sessions, DELETE /sessions/{id}, POST /recordings/sessions/{id}/to-mocks.
// * HTTP recordings: GET /recordings?session=, GET /recordings/{id} (bodies are base64 and
//   shown decoded), DELETE /recordings/{id}, POST /recordings/convert {recordingIds}.
// * Stream recordings: GET /stream-recordings, POST /stream-recordings/{id}/stop, POST
//   /stream-recordings/{id}/convert (a mock config, then POST /mocks), DELETE
//   /stream-recordings/{id}.
//
// Source: behavior notes §1 "Proxy, CA, sessions, recordings" and "stream recordings";
// docs/proxy.md, docs/recording.md, docs/stream-recordings.md; issue 30.
import { api, get } from "../api.js";
import { h, jsonBlock, replace, showError, table, toast, useStylesheet, when } from "../dom.js";

const MODES = ["record", "passthrough", "playback"];
const STATUS_POLL_MS = 3000;

/** Decode a base64 body: {text} when it is UTF-8, else {binary: byte count}. */
export function decodeBody(base64) {
  if (!base64) return { text: "" };
  let bytes;
  try {
    bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch (_) {
    return { text: String(base64) };
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch (_) {
    return { binary: bytes.length };
  }
}

function headerValue(headers, name) {
  for (const [key, value] of Object.entries(headers || {})) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(", ") : String(value);
  }
  return "";
}

/** A body block: pretty JSON when it parses, else text, else "binary, N bytes". */
function bodyBlock(side, testid) {
  const decoded = decodeBody(side && side.body);
  if (decoded.binary !== undefined) {
    return h("p", { class: "muted", "data-testid": testid }, `binary body, ${decoded.binary} bytes (base64 in the export)`);
  }
  if (!decoded.text) return h("p", { class: "muted", "data-testid": testid }, "empty body");
  let shown = decoded.text;
  if (headerValue(side.headers, "content-type").includes("json")) {
    try { shown = JSON.stringify(JSON.parse(decoded.text), null, 2); } catch (_) { /* as sent */ }
  }
  const block = jsonBlock(shown);
  block.dataset.testid = testid;
  return [block, side.bodyTruncated ? h("p", { class: "warn" }, "truncated at the body cap") : null];
}

function headersTable(headers) {
  const rows = Object.entries(headers || {}).map(([name, values]) => ({ name, value: Array.isArray(values) ? values.join(", ") : String(values) }));
  return table([
    { title: "Header", cell: (r) => h("code", {}, r.name) },
    { title: "Value", cell: (r) => h("code", {}, r.value) },
  ], rows, "No headers.");
}

function button(label, testid, onclick, kind = "") {
  return h("button", { type: "button", class: kind, "data-testid": testid, onclick }, label);
}

async function saveBlob(response, fallbackName) {
  const disposition = response.headers.get("content-disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(disposition);
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: match ? match[1] : fallbackName });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function render(root, { query }) {
  useStylesheet("recordings");
  const state = { session: query.get("session") || "", selected: new Set(), detail: null };

  // --- proxy -------------------------------------------------------------------------
  const proxyStatus = h("div", { class: "cards", "data-testid": "proxy-status" });
  const portInput = h("input", { type: "number", id: "proxy-port", min: 0, max: 65535, value: "8888", "aria-label": "Proxy port" });
  const modeInput = h("select", { id: "proxy-mode", "aria-label": "Mode" }, MODES.map((m) => h("option", { value: m }, m)));
  const sessionInput = h("input", { type: "text", id: "proxy-session", value: "default", "aria-label": "Session name" });
  const startForm = h("form", { class: "form-row", id: "proxy-start-form", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api("POST", "/proxy/start", { json: { port: Number(portInput.value), mode: modeInput.value, sessionName: sessionInput.value || "default" } });
      toast("Proxy started");
      await Promise.all([loadProxy(), loadSessions(), loadCa()]);
    } catch (error) { showError(error); }
  } },
  h("label", {}, "Port", portInput), h("label", {}, "Mode", modeInput), h("label", {}, "Session", sessionInput),
  h("button", { type: "submit", class: "primary", "data-testid": "proxy-start" }, "Start proxy"));
  const switchMode = h("select", { id: "proxy-switch-mode", "aria-label": "Switch mode" }, MODES.map((m) => h("option", { value: m }, m)));
  const runningForm = h("div", { class: "form-row", hidden: true },
    h("label", {}, "Mode", switchMode),
    button("Switch mode", "proxy-switch", async () => {
      try {
        await api("PUT", "/proxy/mode", { json: { mode: switchMode.value } });
        toast(`Proxy mode: ${switchMode.value}`);
        loadProxy();
      } catch (error) { showError(error); }
    }),
    button("Stop proxy", "proxy-stop", async () => {
      try {
        await api("POST", "/proxy/stop");
        toast("Proxy stopped");
        await Promise.all([loadProxy(), loadSessions()]);
      } catch (error) { showError(error); }
    }, "danger"));

  function card(title, value, testid) {
    return h("div", { class: "card" }, h("div", { class: "muted" }, title), h("div", { class: "value", "data-testid": testid }, value));
  }

  let lastCount = null;
  async function loadProxy() {
    const status = await get("/proxy/status");
    replace(proxyStatus,
      card("Proxy", status.running ? "running" : "stopped", "proxy-running"),
      status.running ? card("Port", String(status.port), "proxy-port-value") : null,
      status.running ? card("Mode", status.mode || "", "proxy-mode-value") : null,
      status.running ? card("Recordings", String(status.recordingCount ?? 0), "proxy-count") : null,
      status.running && status.sessionId ? h("div", { class: "card" }, h("div", { class: "muted" }, "Session"), h("code", {}, status.sessionId)) : null);
    startForm.hidden = Boolean(status.running);
    runningForm.hidden = !status.running;
    if (status.running && document.activeElement !== switchMode) switchMode.value = status.mode;
    if (status.running && lastCount !== null && status.recordingCount !== lastCount) {
      loadRecordings();
      loadSessions();
    }
    lastCount = status.running ? status.recordingCount : null;
  }

  // --- CA ----------------------------------------------------------------------------
  const caBox = h("div", { "data-testid": "proxy-ca" });
  async function loadCa() {
    const ca = await get("/proxy/ca");
    replace(caBox, ca.exists
      ? h("div", { class: "form-row" },
        h("span", {}, "CA ", h("span", { class: "badge ok" }, "present"), " ", h("code", {}, ca.organization || "")),
        h("span", { class: "mono recordings-fingerprint" }, ca.fingerprint || ""),
        h("span", { class: "muted" }, ca.expiresAt ? `expires ${when(ca.expiresAt)}` : ""),
        button("Download CA certificate", "ca-download", async () => {
          try { await saveBlob(await api("GET", "/proxy/ca/download", { raw: true }), "mockd-ca.pem"); } catch (error) { showError(error); }
        }))
      : h("div", { class: "form-row" },
        h("span", { class: "muted" }, "No proxy CA: HTTPS through the proxy is tunnelled, not recorded."),
        button("Create CA", "ca-create", async () => {
          try {
            await api("POST", "/proxy/ca", { json: { caPath: "ca" } });
            toast("Proxy CA created (restart the proxy to intercept HTTPS)");
            loadCa();
          } catch (error) { showError(error); }
        })));
  }

  // --- sessions ----------------------------------------------------------------------
  const sessionsBox = h("div", { "data-testid": "sessions" });
  const sessionFilter = h("select", { id: "recordings-session", "aria-label": "Session", onchange: () => {
    state.session = sessionFilter.value;
    loadRecordings();
  } });
  async function loadSessions() {
    const sessions = await get("/sessions");
    const items = Array.isArray(sessions) ? sessions : (sessions.sessions || []);
    replace(sessionsBox, table([
      { title: "Session", cell: (s) => [h("strong", {}, s.name || ""), " ", h("code", { class: "muted" }, s.id)] },
      { title: "Started", cell: (s) => when(s.startTime) },
      { title: "Ended", cell: (s) => (s.endTime ? when(s.endTime) : h("span", { class: "badge ok" }, "open")) },
      { title: "Recordings", cell: (s) => String(s.recordingCount ?? 0) },
      { title: "", cell: (s) => h("span", { class: "recordings-actions" },
        button("Show", `session-show-${s.id}`, () => { state.session = s.id; sessionFilter.value = s.id; loadRecordings(); }),
        button("Convert to mocks", `session-convert-${s.id}`, async () => {
          try {
            const answer = await api("POST", `/recordings/sessions/${encodeURIComponent(s.id)}/to-mocks`, { json: {} });
            toast(`${answer.count} mock(s) created: ${(answer.mockIds || []).join(", ")}`);
          } catch (error) { showError(error); }
        }),
        button("Delete", `session-delete-${s.id}`, async () => {
          if (!window.confirm(`Delete session ${s.name || s.id} and its recordings?`)) return;
          try {
            await api("DELETE", `/sessions/${encodeURIComponent(s.id)}`);
            if (state.session === s.id) state.session = "";
            await Promise.all([loadSessions(), loadRecordings()]);
          } catch (error) { showError(error); }
        }, "danger")) },
    ], items, "No sessions: start the proxy to record one."));
    replace(sessionFilter, h("option", { value: "" }, "All sessions"),
      items.map((s) => h("option", { value: s.id, selected: s.id === state.session }, `${s.name || s.id} (${s.recordingCount ?? 0})`)));
  }

  // --- HTTP recordings ---------------------------------------------------------------
  const recordingsBox = h("div", { "data-testid": "http-recordings" });
  const detailBox = h("div", { class: "recordings-detail", "data-testid": "recording-detail" });
  const convertSelected = button("Convert selected to mocks", "recordings-convert", async () => {
    try {
      const answer = await api("POST", "/recordings/convert", { json: { recordingIds: [...state.selected] } });
      toast(`${answer.count} mock(s) created: ${(answer.mockIds || []).join(", ")}`);
      state.selected.clear();
      loadRecordings();
    } catch (error) { showError(error); }
  }, "primary");

  async function showDetail(id) {
    try {
      const recording = await get(`/recordings/${encodeURIComponent(id)}`);
      state.detail = id;
      const request = recording.request || {};
      const response = recording.response || {};
      replace(detailBox,
        h("div", { class: "toolbar" }, h("h2", {}, `${request.method || ""} ${request.url || request.path || ""}`),
          h("span", { class: "spacer" }), button("Close", "recording-detail-close", () => { state.detail = null; replace(detailBox); })),
        h("p", { class: "muted" }, `${when(recording.timestamp)} · ${response.statusCode ?? ""} ${response.statusText || ""} · ${recording.duration ? (recording.duration / 1e6).toFixed(1) : "?"} ms · session `, h("code", {}, recording.sessionId || "")),
        h("div", { class: "split" },
          h("div", {}, h("h3", {}, "Request"), headersTable(request.headers), h("h3", {}, "Body"), bodyBlock(request, "recording-request-body")),
          h("div", {}, h("h3", {}, "Response"), headersTable(response.headers), h("h3", {}, "Body"), bodyBlock(response, "recording-response-body"))));
    } catch (error) { showError(error); }
  }

  async function loadRecordings() {
    const answer = await get("/recordings", { session: state.session, limit: 200 });
    const rows = answer.recordings || [];
    const present = new Set(rows.map((r) => r.id));
    for (const id of [...state.selected]) if (!present.has(id)) state.selected.delete(id);
    convertSelected.disabled = state.selected.size === 0;
    replace(recordingsBox, table([
      { title: "", cell: (r) => h("input", { type: "checkbox", "aria-label": `Select ${r.id}`, "data-testid": `recording-select-${r.id}`, checked: state.selected.has(r.id),
        onchange: (event) => {
          if (event.target.checked) state.selected.add(r.id); else state.selected.delete(r.id);
          convertSelected.disabled = state.selected.size === 0;
        } }) },
      { title: "Method", cell: (r) => h("code", {}, (r.request || {}).method || "") },
      { title: "Path", cell: (r) => h("button", { type: "button", class: "link", "data-testid": `recording-open-${r.id}`, onclick: () => showDetail(r.id) },
        `${(r.request || {}).host || ""}${(r.request || {}).path || ""}`) },
      { title: "Status", cell: (r) => String((r.response || {}).statusCode ?? "") },
      { title: "When", cell: (r) => when(r.timestamp) },
      { title: "", cell: (r) => button("Delete", `recording-delete-${r.id}`, async () => {
        try {
          await api("DELETE", `/recordings/${encodeURIComponent(r.id)}`);
          if (state.detail === r.id) replace(detailBox);
          loadRecordings();
        } catch (error) { showError(error); }
      }, "danger") },
    ], rows, "No HTTP recordings."), answer.total > rows.length ? h("p", { class: "muted" }, `${rows.length} of ${answer.total} shown.`) : null);
  }

  // --- stream recordings -------------------------------------------------------------
  const streamsBox = h("div", { "data-testid": "stream-recordings" });
  async function loadStreams() {
    const answer = await get("/stream-recordings", { limit: 200 });
    replace(streamsBox, table([
      { title: "Recording", cell: (r) => [h("strong", {}, r.name || ""), " ", h("code", { class: "muted" }, r.id)] },
      { title: "Protocol", cell: (r) => r.protocol || "" },
      { title: "Path", cell: (r) => h("code", {}, (r.metadata || {}).path || r.path || "") },
      { title: "Status", cell: (r) => h("span", { class: `badge ${r.status === "recording" ? "warn" : r.status === "complete" ? "ok" : "error"}` }, r.status || "") },
      { title: "Started", cell: (r) => when(r.startTime) },
      { title: "Frames", cell: (r) => String((r.stats || {}).frameCount ?? "") },
      { title: "", cell: (r) => h("span", { class: "recordings-actions" },
        r.status === "recording" ? button("Stop", `stream-stop-${r.id}`, async () => {
          try { await api("POST", `/stream-recordings/${encodeURIComponent(r.id)}/stop`); loadStreams(); } catch (error) { showError(error); }
        }) : null,
        button("Convert to mock", `stream-convert-${r.id}`, async () => {
          try {
            const mock = await api("POST", `/stream-recordings/${encodeURIComponent(r.id)}/convert`, { json: { simplifyTiming: true } });
            const created = await api("POST", "/mocks", { json: mock, scoped: true });
            toast(`Mock ${created.id || mock.id} created`);
          } catch (error) { showError(error); }
        }),
        button("Delete", `stream-delete-${r.id}`, async () => {
          try { await api("DELETE", `/stream-recordings/${encodeURIComponent(r.id)}`); loadStreams(); } catch (error) { showError(error); }
        }, "danger")) },
    ], answer.recordings || [], "No stream recordings."));
  }

  async function loadAll() {
    try {
      await Promise.all([loadProxy(), loadCa(), loadSessions(), loadRecordings(), loadStreams()]);
    } catch (error) { showError(error); }
  }

  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Recordings and proxy"), h("span", { class: "spacer" }),
      button("Refresh", "recordings-refresh", loadAll)),
    h("h2", {}, "Recording proxy"), proxyStatus, startForm, runningForm,
    h("h3", {}, "CA certificate"), caBox,
    h("h2", {}, "Sessions"), sessionsBox,
    h("div", { class: "toolbar" }, h("h2", {}, "HTTP recordings"), h("span", { class: "spacer" }), sessionFilter, convertSelected),
    recordingsBox, detailBox,
    h("h2", {}, "Stream recordings"), streamsBox);
  loadAll();
  let failed = false;
  const timer = setInterval(() => {
    loadProxy().then(() => { failed = false; }, (error) => { if (!failed) showError(error); failed = true; });
  }, STATUS_POLL_MS);
  return () => clearInterval(timer);
}
