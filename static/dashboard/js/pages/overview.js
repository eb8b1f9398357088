// The "overview" area, the landing page: the server at a glance, refreshed every 2 s while
// the page is open (the cleanup stops the timer).
//
// Each refresh makes two admin calls whatever the number of mocks: GET /metrics (requests and
// their statuses, hits per mock, mocks by type: behavior notes §17) and GET /status (uptime,
// counts, version). GET /ports and the mock names (GET /mocks, for the top-mocks table) are
// read once when the page opens. Requests per second are the difference of the request
// total between two refreshes over the time between them; the sparkline keeps the last
// 2 minutes (60 points) as an SVG polyline.
import { api } from "../api.js";
import { h, replace, useStylesheet } from "../dom.js";
import { duration, loadCounters } from "../mocks-data.js";

const POLL_MS = 2000;
const POINTS = 60;
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  return element;
}

/** The sparkline of `values` (>= 0) as an SVG polyline scaled to the largest value. */
function sparkline(values) {
  const width = 240;
  const height = 40;
  const top = Math.max(1, ...values);
  const step = width / Math.max(1, POINTS - 1);
  const offset = (POINTS - values.length) * step;
  // One value is drawn as a short level segment so the line is visible from the first refresh.
  if (values.length === 1) values = [values[0], values[0]];
  const points = values.map((v, i) => `${(offset + i * step).toFixed(1)},${(height - 2 - (v / top) * (height - 4)).toFixed(1)}`);
  const chart = svg("svg", { class: "sparkline", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", role: "img", "aria-label": "Requests per second, last 2 minutes", "data-testid": "rps-sparkline" });
  chart.append(svg("line", { class: "baseline", x1: 0, y1: height - 2, x2: width, y2: height - 2 }),
    svg("polyline", { points: points.join(" ") }));
  return chart;
}

function card(title, testid) {
  const value = h("div", { class: "value", "data-testid": testid }, "…");
  const detail = h("div", { class: "muted detail" });
  const element = h("div", { class: "card" }, h("div", { class: "muted" }, title), value, detail);
  return { element, value, detail };
}

const percent = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "0%");

export async function render(root) {
  useStylesheet("overview");
  const mocksCard = card("Mocks", "mocks-total");
  const requestsCard = card("Requests served", "requests-total");
  const rpsCard = card("Requests per second", "rps");
  const errorCard = card("Error rate (status ≥ 400)", "error-rate");
  const serverCard = card("Server", "server-state");
  const topHolder = h("div", { "data-testid": "top-mocks" });
  const portsHolder = h("div", { "data-testid": "ports" });
  root.append(
    h("h1", {}, "Overview"),
    h("div", { class: "cards" }, serverCard.element, mocksCard.element, requestsCard.element, rpsCard.element, errorCard.element),
    h("div", { class: "split" },
      h("section", {}, h("h2", {}, "Top mocks by hits"), topHolder),
      h("section", {}, h("h2", {}, "Ports"), portsHolder)),
  );

  const names = new Map();
  const [portsAnswer, mocksAnswer] = await Promise.all([
    api("GET", "/ports").catch(() => ({ ports: [] })),
    api("GET", "/mocks", { scoped: true }).catch(() => ({ mocks: [] })),
  ]);
  for (const mock of mocksAnswer.mocks || []) names.set(mock.id, mock);
  replace(portsHolder, (portsAnswer.ports || []).length
    ? h("table", { class: "grid" }, h("thead", {}, h("tr", {}, ["Port", "Protocol", "Component", "Status"].map((t) => h("th", {}, t)))),
      h("tbody", {}, portsAnswer.ports.map((p) => h("tr", {}, h("td", { class: "mono" }, String(p.port)), h("td", {}, p.protocol + (p.tls ? " (TLS)" : "")),
        h("td", {}, p.component), h("td", {}, h("span", { class: `badge ${p.status === "running" ? "ok" : "warn"}` }, p.status))))))
    : h("p", { class: "muted" }, "No ports reported."));

  const history = []; // {t (ms), requests, errors}
  let timer = null;
  let stopped = false;

  const show = (counters, status) => {
    const now = performance.now();
    history.push({ t: now, requests: counters.requests, errors: counters.errors });
    if (history.length > POINTS + 1) history.shift();
    const rates = [];
    for (let i = 1; i < history.length; i += 1) {
      const seconds = (history[i].t - history[i - 1].t) / 1000;
      rates.push(seconds > 0 ? Math.max(0, history[i].requests - history[i - 1].requests) / seconds : 0);
    }
    const last = rates.length ? rates[rates.length - 1] : 0;
    rpsCard.value.textContent = last.toFixed(1);
    replace(rpsCard.detail, sparkline(rates.length ? rates : [0]));

    requestsCard.value.textContent = String(counters.requests);
    requestsCard.detail.textContent = `${counters.misses} matched no mock`;

    const first = history[0];
    const windowRequests = counters.requests - first.requests;
    const windowErrors = counters.errors - first.errors;
    errorCard.value.textContent = history.length > 1 && windowRequests > 0
      ? percent(windowErrors, windowRequests) : percent(counters.errors, counters.requests);
    errorCard.detail.textContent = `${counters.errors} of ${counters.requests} since start`
      + (history.length > 1 ? `; ${windowErrors} of ${windowRequests} in the last ${Math.round((now - first.t) / 1000)} s` : "");

    const types = Object.entries(counters.mocksByType).filter(([, v]) => v.total > 0).sort((a, b) => b[1].total - a[1].total);
    const total = types.reduce((sum, [, v]) => sum + v.total, 0);
    mocksCard.value.textContent = String(status ? status.mockCount : total);
    replace(mocksCard.detail, types.length
      ? h("ul", { class: "by-type", "data-testid": "mocks-by-type" }, types.map(([type, v]) => h("li", { dataset: { type } },
        h("span", { class: `badge type-${type}` }, type), ` ${v.total}`, v.enabled !== v.total ? h("span", { class: "muted" }, ` (${v.enabled} enabled)`) : "")))
      : "No mocks yet");

    if (status) {
      serverCard.value.textContent = status.status;
      serverCard.value.className = `value ${status.status === "running" ? "ok" : "warn"}`;
      serverCard.detail.textContent = `mockd ${status.version} · up ${duration(status.uptime)} · data plane :${status.httpPort}`
        + (status.httpsPort ? `, HTTPS :${status.httpsPort}` : "") + ` · admin :${status.adminPort}`;
    }

    const top = [...counters.hits.entries()].filter(([id, hits]) => hits > 0 && names.has(id))
      .sort((a, b) => b[1] - a[1]).slice(0, 10);
    replace(topHolder, top.length
      ? h("table", { class: "grid" }, h("thead", {}, h("tr", {}, h("th", {}, "Mock"), h("th", {}, "Type"), h("th", { class: "num" }, "Hits"))),
        h("tbody", {}, top.map(([id, hits]) => h("tr", { dataset: { mockId: id } },
          h("td", {}, h("a", { href: `#/mocks/${encodeURIComponent(id)}` }, names.get(id).name || id)),
          h("td", {}, names.get(id).type),
          h("td", { class: "num", "data-testid": "top-mock-hits" }, String(hits))))))
      : h("p", { class: "muted" }, "No mock of this workspace has been called yet."));
  };

  const poll = async () => {
    try {
      const [counters, status] = await Promise.all([loadCounters(), api("GET", "/status").catch(() => null)]);
      if (!stopped) show(counters, status);
    } catch (error) {
      if (!stopped) {
        serverCard.value.textContent = "unreachable";
        serverCard.value.className = "value error";
        serverCard.detail.textContent = error && error.message ? error.message : String(error);
      }
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  };
  await poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
