// The "Streams" area (#/streams): the live connections of the data plane and the listeners of
// gRPC and MQTT mocks, refreshed every 2 s while the page is open.
//
// * WebSocket connections (GET /websocket/connections): close one (DELETE
//   /websocket/connections/{id}) or send it a text message (POST .../{id}/send {type: "text",
//   data}).
// * SSE connections (GET /sse/connections): close one (DELETE /sse/connections/{id}).
// * gRPC servers (GET /grpc: servers [{id, address, running, services, mocks}]) and the calls
//   in progress (GET /grpc/connections; cancel with DELETE /grpc/connections/{id}).
// * MQTT brokers (GET /mqtt: brokers [{id, address, running, clients, topics}]) and their
//   clients (GET /mqtt-connections; disconnect with DELETE /mqtt-connections/{id}).
//
// Source: behavior notes §1 "Connections, protocol handlers, stream recordings"; issue 30.
import { api, get } from "../api.js";
import { h, replace, showError, table, toast, useStylesheet, when } from "../dom.js";

/** Refresh period of the lists (ms). */
const REFRESH_MS = 2000;

function count(value) {
  return value === undefined || value === null ? "" : String(value);
}

function actionButton(label, testid, onclick, kind = "") {
  return h("button", { type: "button", class: kind, "data-testid": testid, onclick }, label);
}

function statusBadge(running) {
  return h("span", { class: `badge ${running ? "ok" : "error"}` }, running ? "running" : "stopped");
}

export function render(root) {
  useStylesheet("streams");
  const sections = {
    websocket: h("div", { "data-testid": "ws-connections" }),
    sse: h("div", { "data-testid": "sse-connections" }),
    grpc: h("div", { "data-testid": "grpc-servers" }),
    grpcCalls: h("div", { "data-testid": "grpc-calls" }),
    mqtt: h("div", { "data-testid": "mqtt-brokers" }),
    mqttClients: h("div", { "data-testid": "mqtt-clients" }),
  };
  const updated = h("span", { class: "muted", "data-testid": "streams-updated" }, "");
  let target = null; // the WebSocket connection the send form talks to
  const sendTarget = h("code", {}, "");
  const sendInput = h("input", { type: "text", id: "ws-send-text", placeholder: "text message",
    "aria-label": "Message to send", size: 48 });
  const sendForm = h("form", { class: "streams-send", id: "ws-send-form", hidden: true,
    onsubmit: async (event) => {
      event.preventDefault();
      if (!target) return;
      try {
        await api("POST", `/websocket/connections/${encodeURIComponent(target)}/send`,
          { json: { type: "text", data: sendInput.value } });
        toast(`Sent to ${target}`);
        sendInput.value = "";
        refresh();
      } catch (error) { showError(error); }
    } },
  "Send text to ", sendTarget, " ", sendInput, " ",
  h("button", { type: "submit", class: "primary", "data-testid": "ws-send-submit" }, "Send"), " ",
  h("button", { type: "button", onclick: () => { target = null; sendForm.hidden = true; } }, "Cancel"));

  async function close(path, label) {
    try {
      await api("DELETE", path);
      toast(`${label} closed`);
      refresh();
    } catch (error) { showError(error); }
  }

  function websocketTable(answer) {
    const rows = answer.connections || [];
    if (target && !rows.some((row) => row.id === target)) {
      target = null;
      sendForm.hidden = true;
    }
    return table([
      { title: "Connection", cell: (c) => h("code", {}, c.id) },
      { title: "Mock", cell: (c) => c.mockId || "" },
      { title: "Path", cell: (c) => h("code", {}, c.path || "") },
      { title: "Client", cell: (c) => c.clientIp || "" },
      { title: "Since", cell: (c) => when(c.startTime) },
      { title: "In / out", cell: (c) => `${count(c.messagesReceived)} / ${count(c.messagesSent)}` },
      { title: "", cell: (c) => h("span", { class: "streams-actions" },
        actionButton("Send…", `ws-send-${c.id}`, () => {
          target = c.id;
          sendTarget.textContent = c.id;
          sendForm.hidden = false;
          sendInput.focus();
        }),
        actionButton("Close", `ws-close-${c.id}`,
          () => close(`/websocket/connections/${encodeURIComponent(c.id)}`, c.id), "danger")) },
    ], rows, "No open WebSocket connections.");
  }

  function sseTable(answer) {
    return table([
      { title: "Connection", cell: (c) => h("code", {}, c.id) },
      { title: "Mock", cell: (c) => c.mockId || "" },
      { title: "Path", cell: (c) => h("code", {}, c.path || "") },
      { title: "Client", cell: (c) => c.clientIp || c.remoteAddr || "" },
      { title: "Since", cell: (c) => when(c.startTime || c.connectedAt) },
      { title: "Events sent", cell: (c) => count(c.eventsSent ?? c.eventCount) },
      { title: "", cell: (c) => actionButton("Close", `sse-close-${c.id}`,
        () => close(`/sse/connections/${encodeURIComponent(c.id)}`, c.id), "danger") },
    ], answer.connections || [], "No open SSE connections.");
  }

  function grpcTables(servers, calls) {
    replace(sections.grpc, table([
      { title: "Server", cell: (s) => h("code", {}, s.id) },
      { title: "Address", cell: (s) => s.address || "" },
      { title: "Status", cell: (s) => [statusBadge(s.running), s.error ? h("span", { class: "error" }, ` ${s.error}`) : null] },
      { title: "Services", cell: (s) => (s.services || []).join(", ") },
      { title: "Mocks", cell: (s) => (s.mocks || []).join(", ") },
    ], servers.servers || [], "No gRPC mocks."));
    replace(sections.grpcCalls, table([
      { title: "Call", cell: (c) => h("code", {}, c.id) },
      { title: "Method", cell: (c) => h("code", {}, c.method || "") },
      { title: "Kind", cell: (c) => c.streamType || "" },
      { title: "Client", cell: (c) => c.clientAddr || "" },
      { title: "Since", cell: (c) => when(c.connectedAt) },
      { title: "In / out", cell: (c) => `${count(c.messagesReceived)} / ${count(c.messagesSent)}` },
      { title: "", cell: (c) => actionButton("Cancel", `grpc-cancel-${c.id}`,
        () => close(`/grpc/connections/${encodeURIComponent(c.id)}`, c.id), "danger") },
    ], calls.connections || [], "No gRPC calls in progress."));
  }

  function mqttTables(brokers, clients) {
    replace(sections.mqtt, table([
      { title: "Broker", cell: (b) => h("code", {}, b.id) },
      { title: "Address", cell: (b) => b.address || `:${b.port}` },
      { title: "Status", cell: (b) => statusBadge(b.running) },
      { title: "Clients", cell: (b) => count(b.clients) },
      { title: "Topics", cell: (b) => (b.topics || []).join(", ") },
      { title: "Recording", cell: (b) => (b.recordingEnabled ? "on" : "off") },
    ], brokers.brokers || [], "No MQTT mocks."));
    replace(sections.mqttClients, table([
      { title: "Client", cell: (c) => h("code", {}, c.clientId || c.id) },
      { title: "Broker", cell: (c) => c.brokerId || `:${c.port}` },
      { title: "Address", cell: (c) => c.clientAddr || c.remoteAddr || "" },
      { title: "Since", cell: (c) => when(c.connectedAt) },
      { title: "Subscriptions", cell: (c) => (c.subscriptions || []).map((s) => (typeof s === "string" ? s : s.topic)).join(", ") },
      { title: "", cell: (c) => actionButton("Disconnect", `mqtt-close-${c.id}`,
        () => close(`/mqtt-connections/${encodeURIComponent(c.id)}`, c.clientId || c.id), "danger") },
    ], clients.connections || [], "No MQTT clients connected."));
  }

  // What each list was last drawn from (JSON): a list is drawn again only when its answer
  // changed, so a button under the pointer is not replaced every 2 s (a click landing while
  // its row is swapped for an identical one would be lost).
  const shown = new Map();
  function changed(name, ...answers) {
    const key = JSON.stringify(answers);
    if (shown.get(name) === key) return false;
    shown.set(name, key);
    return true;
  }

  let busy = false;
  let failed = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const [ws, sse, grpc, grpcCalls, mqtt, mqttClients] = await Promise.all([
        get("/websocket/connections"), get("/sse/connections"), get("/grpc"),
        get("/grpc/connections"), get("/mqtt"), get("/mqtt-connections")]);
      if (changed("websocket", ws)) replace(sections.websocket, websocketTable(ws));
      if (changed("sse", sse)) replace(sections.sse, sseTable(sse));
      if (changed("grpc", grpc, grpcCalls)) grpcTables(grpc, grpcCalls);
      if (changed("mqtt", mqtt, mqttClients)) mqttTables(mqtt, mqttClients);
      updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
      failed = false;
    } catch (error) {
      if (!failed) showError(error); // one toast per outage, not one every 2 s
      failed = true;
    } finally {
      busy = false;
    }
  }

  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Streams and connections"), h("span", { class: "spacer" }),
      updated, h("button", { type: "button", onclick: refresh, "data-testid": "streams-refresh" }, "Refresh")),
    h("h2", {}, "WebSocket connections"), sections.websocket, sendForm,
    h("h2", {}, "SSE connections"), sections.sse,
    h("h2", {}, "gRPC servers"), sections.grpc,
    h("h3", {}, "gRPC calls in progress"), sections.grpcCalls,
    h("h2", {}, "MQTT brokers"), sections.mqtt,
    h("h3", {}, "MQTT clients"), sections.mqttClients,
  );
  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}
