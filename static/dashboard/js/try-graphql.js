// "Try it" GraphQL panel: GraphiQL (vendored: static/vendor/graphiql-3.8.3 with React 18 from
// static/vendor/react-18.3.1, loaded as classic scripts when the panel first opens) on the
// endpoint of a GraphQL mock on the data plane.
import { h, replace } from "./dom.js";
import { mockPicker, note } from "./try-common.js";

const VENDOR = `${document.body.dataset.static.replace(/dashboard\/$/, "")}vendor/`;
const SCRIPTS = ["react-18.3.1/react.production.min.js", "react-18.3.1/react-dom.production.min.js", "graphiql-3.8.3/graphiql.min.js"];
let loading = null;

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = h("script", { src });
    script.addEventListener("load", resolve);
    script.addEventListener("error", () => reject(new Error(`could not load ${src}`)));
    document.head.append(script);
  });
}

/** Load React, React DOM and GraphiQL once (in order: each needs the one before). */
export function loadGraphiQL() {
  if (!loading) {
    if (!document.querySelector(`link[href="${VENDOR}graphiql-3.8.3/graphiql.min.css"]`)) {
      document.head.append(h("link", { rel: "stylesheet", href: `${VENDOR}graphiql-3.8.3/graphiql.min.css` }));
    }
    loading = SCRIPTS.reduce((chain, name) => chain.then(() => loadScript(VENDOR + name)), Promise.resolve());
  }
  return loading;
}

export function graphqlPanel(root, mocks, base) {
  const graphqlMocks = mocks.filter((m) => m.type === "graphql");
  const endpoint = h("code", { "data-testid": "try-graphql-endpoint" }, "");
  const host = h("div", { class: "try-graphiql", "data-testid": "try-graphiql" });
  let reactRoot = null;
  let wanted = 0;

  async function show(mock) {
    const mine = ++wanted;
    if (reactRoot) { reactRoot.unmount(); reactRoot = null; }
    replace(host);
    if (!mock) { note(host, "No GraphQL mocks: create one first."); return; }
    const url = base + mock.graphql.path;
    endpoint.textContent = url;
    note(host, "Loading GraphiQL…");
    try {
      await loadGraphiQL();
    } catch (error) { note(host, error.message, "error"); return; }
    if (mine !== wanted) return;
    replace(host);
    const { React, ReactDOM, GraphiQL } = window;
    reactRoot = ReactDOM.createRoot(host);
    reactRoot.render(React.createElement(GraphiQL, {
      fetcher: GraphiQL.createFetcher({ url }),
      defaultEditorToolsVisibility: false,
      shouldPersistHeaders: false,
      storage: { getItem: () => null, setItem: () => {}, removeItem: () => {}, clear: () => {}, length: 0 },
    }));
  }
  const picker = mockPicker("try-graphql-mock", graphqlMocks, (m) => `${m.name || m.id} — ${m.graphql.path}`, show);
  root.append(h("div", { class: "form-row" }, h("label", {}, "Mock", picker), h("span", {}, "Endpoint ", endpoint)),
    h("p", { class: "muted" }, "The schema is read by introspection: the mock needs introspection: true for the docs and completion."),
    host);
  return () => { wanted += 1; if (reactRoot) reactRoot.unmount(); reactRoot = null; };
}
