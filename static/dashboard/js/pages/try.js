// The "Try it" area (#/try?tab=http|graphql|grpc|websocket|sse|mqtt&mock=<id>): call the
// running mocks as a client would, one panel per protocol:
//
// * HTTP: a request builder sent from the browser to the data plane, shown beside the
//   request-log entry it produced (try-http.js);
// * GraphQL: GraphiQL on a GraphQL mock's endpoint (try-graphql.js);
// * gRPC: a call form built from the mock's descriptors, called by the admin API with
//   grpcio, replies streamed as they arrive (try-grpc.js);
// * WebSocket console and SSE viewer on the data plane (try-streams.js);
// * MQTT publish/subscribe over the broker's WebSocket listener (try-mqtt.js).
//
// The mocks come from GET /mocks of the selected workspace. Source: issue 30.
import { api } from "../api.js";
import { h, replace, showError, useStylesheet, dataPlaneUrl } from "../dom.js";
import { httpPanel } from "../try-http.js";
import { graphqlPanel } from "../try-graphql.js";
import { grpcPanel } from "../try-grpc.js";
import { ssePanel, websocketPanel } from "../try-streams.js";
import { mqttPanel } from "../try-mqtt.js";

const TABS = [
  ["http", "HTTP", httpPanel],
  ["graphql", "GraphQL", graphqlPanel],
  ["grpc", "gRPC", grpcPanel],
  ["websocket", "WebSocket", websocketPanel],
  ["sse", "SSE", ssePanel],
  ["mqtt", "MQTT", mqttPanel],
];

export async function render(root, { query, navigate }) {
  useStylesheet("try");
  const active = TABS.some(([name]) => name === query.get("tab")) ? query.get("tab") : "http";
  let mocks = [];
  try {
    const answer = await api("GET", "/mocks", { scoped: true });
    mocks = (answer.mocks || answer || []).filter((m) => m.enabled !== false);
  } catch (error) { showError(error); }
  const panel = h("div", { class: "try-panel", "data-testid": `try-panel-${active}` });
  root.append(
    h("h1", {}, "Try it"),
    h("div", { class: "tabs", role: "tablist" }, TABS.map(([name, title]) => h("button", {
      type: "button", role: "tab", class: name === active ? "active" : "", "data-testid": `try-tab-${name}`,
      "aria-selected": name === active ? "true" : "false", onclick: () => navigate(`#/try?tab=${name}`),
    }, title))),
    panel);
  const [, , build] = TABS.find(([name]) => name === active);
  replace(panel);
  const cleanup = build(panel, mocks, dataPlaneUrl());
  return typeof cleanup === "function" ? cleanup : undefined;
}
