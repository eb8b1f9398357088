// "Try it" WebSocket console and SSE viewer: a browser WebSocket to a WebSocket mock on the
// data plane (the engine admits loopback origins) and an EventSource on an SSE mock's path.
import { h, replace } from "./dom.js";
import { dataPlaneWs, logLine, mockPicker } from "./try-common.js";

function samplePath(path) {
  return (path || "/").replace(/\{[^}]+\}/g, "1");
}

export function websocketPanel(root, mocks, base) {
  const wsMocks = mocks.filter((m) => m.type === "websocket");
  const path = h("input", { id: "try-ws-path", type: "text", value: "/", size: 32, "aria-label": "Path" });
  const message = h("input", { id: "try-ws-message", type: "text", size: 48, placeholder: "message", "aria-label": "Message" });
  const log = h("ol", { class: "try-log", "data-testid": "try-ws-log" });
  const state = h("span", { class: "badge", "data-testid": "try-ws-state" }, "closed");
  let socket = null;
  const picker = mockPicker("try-ws-mock", wsMocks, (m) => `${m.name || m.id} — ${m.websocket.path}`, (mock) => {
    if (mock) path.value = samplePath(mock.websocket.path);
  });
  function setState(text, kind) {
    state.textContent = text;
    state.className = `badge ${kind}`;
  }
  function connect() {
    disconnect();
    const url = dataPlaneWs(base, path.value.startsWith("/") ? path.value : `/${path.value}`);
    socket = new WebSocket(url);
    setState("connecting", "warn");
    socket.onopen = () => { setState("open", "ok"); logLine(log, `connected to ${url}`, "muted"); };
    socket.onmessage = (event) => logLine(log, typeof event.data === "string" ? `← ${event.data}` : "← (binary message)", "try-in");
    socket.onclose = (event) => { setState("closed", ""); logLine(log, `closed (${event.code}${event.reason ? ` ${event.reason}` : ""})`, "muted"); };
    socket.onerror = () => logLine(log, "connection error", "error");
  }
  function disconnect() {
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000);
    socket = null;
  }
  root.append(
    h("div", { class: "form-row" }, h("label", {}, "Mock", picker), h("label", {}, "Path", path),
      h("button", { type: "button", class: "primary", "data-testid": "try-ws-connect", onclick: connect }, "Connect"),
      h("button", { type: "button", "data-testid": "try-ws-disconnect", onclick: disconnect }, "Disconnect"), state),
    h("form", { class: "form-row", onsubmit: (event) => {
      event.preventDefault();
      if (!socket || socket.readyState !== WebSocket.OPEN) { logLine(log, "not connected", "error"); return; }
      socket.send(message.value);
      logLine(log, `→ ${message.value}`, "try-out");
      message.value = "";
    } }, message, h("button", { type: "submit", "data-testid": "try-ws-send" }, "Send")),
    log);
  return disconnect;
}

export function ssePanel(root, mocks, base) {
  const sseMocks = mocks.filter((m) => m.type === "http" && m.http && (m.http.sse || m.http.chunked));
  const path = h("input", { id: "try-sse-path", type: "text", value: "/", size: 32, "aria-label": "Path" });
  const log = h("ol", { class: "try-log", "data-testid": "try-sse-log" });
  const state = h("span", { class: "badge", "data-testid": "try-sse-state" }, "closed");
  let source = null;
  const picker = mockPicker("try-sse-mock", sseMocks, (m) => `${m.name || m.id} — ${(m.http.matcher || {}).path || ""}`, (mock) => {
    if (mock) path.value = samplePath((mock.http.matcher || {}).path);
  });
  function stop() {
    if (source) source.close();
    source = null;
    state.textContent = "closed";
    state.className = "badge";
  }
  function start() {
    stop();
    replace(log);
    const url = base + (path.value.startsWith("/") ? path.value : `/${path.value}`);
    source = new EventSource(url);
    state.textContent = "connecting";
    state.className = "badge warn";
    const show = (event) => logLine(log, `${event.type}${event.lastEventId ? ` #${event.lastEventId}` : ""}: ${event.data}`, "try-in");
    source.onopen = () => { state.textContent = "open"; state.className = "badge ok"; };
    source.onmessage = show;
    // Named events (event: x) do not reach onmessage: listen for the types the mock declares.
    const mock = sseMocks.find((m) => (m.http.matcher || {}).path && samplePath(m.http.matcher.path) === path.value);
    const types = new Set(((mock && mock.http.sse && mock.http.sse.events) || []).map((e) => e.type).filter((t) => t && t !== "message"));
    for (const type of types) source.addEventListener(type, show);
    source.onerror = () => {
      // EventSource reconnects on its own; a stream the mock ended shows here once.
      logLine(log, source && source.readyState === EventSource.CLOSED ? "stream closed" : "stream ended (the browser reconnects)", "muted");
      if (source && source.readyState === EventSource.CLOSED) stop();
    };
  }
  root.append(
    h("div", { class: "form-row" }, h("label", {}, "Mock", picker), h("label", {}, "Path", path),
      h("button", { type: "button", class: "primary", "data-testid": "try-sse-start", onclick: start }, "Open stream"),
      h("button", { type: "button", "data-testid": "try-sse-stop", onclick: stop }, "Close"), state),
    log);
  return stop;
}
