// "Try it" MQTT panel: publish and subscribe from the browser over a broker's MQTT over
// WebSocket listener (the mock's `mqtt.websocket {port, path}`), with the vendored MQTT.js
// client (static/vendor/mqtt-5.16.0, loaded when this panel opens).
import { h } from "./dom.js";
import { logLine, mockPicker, note } from "./try-common.js";

const MQTT_JS = "../../vendor/mqtt-5.16.0/mqtt.esm.js";

export function mqttPanel(root, mocks) {
  const brokers = mocks.filter((m) => m.type === "mqtt");
  const url = h("input", { id: "try-mqtt-url", type: "text", size: 40, "aria-label": "WebSocket URL" });
  const topic = h("input", { id: "try-mqtt-topic", type: "text", value: "#", size: 24, "aria-label": "Subscribe topic" });
  const pubTopic = h("input", { id: "try-mqtt-pub-topic", type: "text", size: 24, "aria-label": "Publish topic" });
  const payload = h("input", { id: "try-mqtt-payload", type: "text", size: 40, "aria-label": "Payload" });
  const qos = h("select", { id: "try-mqtt-qos", "aria-label": "QoS" }, [0, 1, 2].map((q) => h("option", { value: q }, `QoS ${q}`)));
  const retain = h("input", { type: "checkbox", id: "try-mqtt-retain" });
  const state = h("span", { class: "badge", "data-testid": "try-mqtt-state" }, "disconnected");
  const log = h("ol", { class: "try-log", "data-testid": "try-mqtt-log" });
  const hint = h("p", { class: "muted" });
  let client = null;

  const picker = mockPicker("try-mqtt-mock", brokers, (m) => `${m.name || m.id} — :${m.mqtt.port}`, (mock) => {
    const ws = mock && mock.mqtt.websocket;
    url.value = ws ? `ws://127.0.0.1:${ws.port}${ws.path || "/mqtt"}` : "";
    hint.textContent = mock && !ws ? "This broker has no WebSocket listener: add mqtt.websocket {port, path} to the mock to use it from the browser." : "";
    const first = mock && (mock.mqtt.topics || [])[0];
    if (first && !pubTopic.value) pubTopic.value = first.topic.replace(/[#+].*$/, "test");
  });

  function setState(text, kind) {
    state.textContent = text;
    state.className = `badge ${kind}`;
  }
  function disconnect() {
    if (client) client.end(true);
    client = null;
    setState("disconnected", "");
  }
  async function connect() {
    disconnect();
    if (!url.value) return;
    const mqtt = (await import(MQTT_JS)).default;
    setState("connecting", "warn");
    client = mqtt.connect(url.value, { clientId: `mockd-dashboard-${Math.random().toString(16).slice(2, 10)}`, reconnectPeriod: 0, connectTimeout: 10000, timerVariant: "native" });
    client.on("connect", () => {
      setState("connected", "ok");
      logLine(log, `connected to ${url.value}`, "muted");
      client.subscribe(topic.value || "#", { qos: 0 }, (error) => logLine(log, error ? `subscribe failed: ${error.message}` : `subscribed to ${topic.value || "#"}`, error ? "error" : "muted"));
    });
    client.on("message", (name, message) => logLine(log, `← ${name}: ${new TextDecoder().decode(message)}`, "try-in"));
    client.on("error", (error) => logLine(log, `error: ${error.message}`, "error"));
    client.on("close", () => setState("disconnected", ""));
  }
  root.append(
    h("div", { class: "form-row" }, h("label", {}, "Broker", picker), h("label", {}, "WebSocket URL", url), h("label", {}, "Subscribe to", topic),
      h("button", { type: "button", class: "primary", "data-testid": "try-mqtt-connect", onclick: connect }, "Connect"),
      h("button", { type: "button", "data-testid": "try-mqtt-disconnect", onclick: disconnect }, "Disconnect"), state),
    hint,
    h("form", { class: "form-row", onsubmit: (event) => {
      event.preventDefault();
      if (!client || !client.connected) { logLine(log, "not connected", "error"); return; }
      client.publish(pubTopic.value, payload.value, { qos: Number(qos.value), retain: retain.checked });
      logLine(log, `→ ${pubTopic.value}: ${payload.value}`, "try-out");
    } }, h("label", {}, "Topic", pubTopic), h("label", {}, "Payload", payload), h("label", {}, "QoS", qos),
    h("label", { class: "try-check" }, "Retain", retain),
    h("button", { type: "submit", "data-testid": "try-mqtt-publish" }, "Publish")),
    log);
  if (!brokers.length) note(hint, "No MQTT mocks: create one first.");
  return disconnect;
}
