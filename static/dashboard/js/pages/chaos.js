// The "chaos" area: fault injection on the data plane (global to the server, not per
// workspace, not persisted).
//
// #/chaos   the current config (GET /chaos) with "Turn off" (PUT /chaos {"enabled": false}) and
//           a JSON editor (PUT /chaos); the named profiles (GET /chaos/profiles) with "Apply"
//           (POST /chaos/profiles/<name>/apply); fault statistics (GET /chaos/stats, reset);
//           the circuit breakers and other stateful faults (GET /chaos/faults) with trip/reset
//           (POST /chaos/circuit-breakers/<key>/trip|reset). Statistics and fault state refresh
//           every REFRESH_MS while the page is open.
// Source: behavior notes §1 "Chaos", §11.
import { api, get } from "../api.js";
import { h, jsonBlock, replace, showError, table, toast, useStylesheet, when } from "../dom.js";

/** How often statistics and fault state are read again (ms). */
export const REFRESH_MS = 2000;

const STAT_LABELS = [
  ["totalRequests", "Requests seen"], ["injectedFaults", "Faults injected"],
  ["latencyInjected", "Latency"], ["errorsInjected", "Errors"],
  ["timeoutsInjected", "Timeouts"], ["bandwidthInjected", "Bandwidth"],
];

export async function render(root) {
  useStylesheet("chaos");
  const stateBadge = h("span", { class: "badge", "data-testid": "chaos-state" });
  const configBox = h("div", { "data-testid": "chaos-config" });
  const editorBox = h("div", {});
  const profilesBox = h("div", { "data-testid": "chaos-profiles" });
  const statsBox = h("div", { "data-testid": "chaos-stats" });
  const faultsBox = h("div", { "data-testid": "chaos-faults" });
  const offButton = h("button", { type: "button", class: "danger", "data-testid": "chaos-off",
    onclick: () => change(() => api("PUT", "/chaos", { json: { enabled: false } }), "Chaos turned off") },
  "Turn off");
  root.append(
    h("div", { class: "toolbar" }, h("h1", {}, "Chaos"), stateBadge, h("span", { class: "spacer" }),
      h("button", { type: "button", "data-testid": "edit-chaos", onclick: openEditor }, "Edit config…"),
      offButton),
    h("p", { class: "muted" }, "Faults apply to every request of the data plane while chaos is on. It is not saved: a restart starts without it unless the config file's serverConfig.chaos sets it."),
    editorBox,
    h("div", { class: "split" },
      h("section", {}, h("h2", {}, "Current configuration"), configBox),
      h("section", {}, h("div", { class: "toolbar" }, h("h2", {}, "Statistics"), h("span", { class: "spacer" }),
        h("button", { type: "button", "data-testid": "reset-stats",
          onclick: () => change(() => api("POST", "/chaos/stats/reset"), "Statistics reset") }, "Reset")),
      statsBox)),
    h("h2", {}, "Circuit breakers and other stateful faults"), faultsBox,
    h("h2", {}, "Profiles"), profilesBox);

  let config = { enabled: false };

  async function change(call, message) {
    try {
      await call();
      toast(message);
      await Promise.all([loadConfig(), loadLive()]);
    } catch (error) {
      showError(error);
    }
  }

  async function loadConfig() {
    config = await get("/chaos");
    const on = Boolean(config.enabled);
    stateBadge.textContent = on ? "on" : "off";
    stateBadge.className = `badge ${on ? "error" : "ok"}`;
    offButton.disabled = !on;
    replace(configBox, on ? [summary(config), h("details", {}, h("summary", {}, "JSON"), jsonBlock(config))]
      : h("p", { class: "muted" }, "Chaos is off: requests are answered untouched."));
  }

  function openEditor() {
    const input = h("textarea", { class: "json-input", "aria-label": "Chaos config JSON",
      "data-testid": "chaos-json" }, JSON.stringify(config, null, 2));
    const errors = h("div", { "data-testid": "chaos-error" });
    const save = h("button", { type: "button", class: "primary", "data-testid": "save-chaos",
      onclick: async () => {
        let document;
        try { document = JSON.parse(input.value); } catch (error) {
          replace(errors, h("p", { class: "field-error" }, `Not valid JSON: ${error.message}`));
          return;
        }
        try {
          await api("PUT", "/chaos", { json: document });
          replace(editorBox);
          toast("Chaos configuration saved");
          await Promise.all([loadConfig(), loadLive()]);
        } catch (error) {
          replace(errors, h("p", { class: "field-error" }, error.message));
        }
      } }, "Save");
    replace(editorBox, h("div", { class: "card" }, h("h2", {}, "Chaos configuration"),
      h("p", { class: "muted" }, "{enabled, latency: {min, max, probability}, errorRate: {probability, statusCodes, defaultCode}, bandwidth: {bytesPerSecond, probability}, rules: [{pathPattern, methods, probability, faults: [{type, probability, config}]}]}"),
      input, errors, h("div", { class: "toolbar" }, save,
        h("button", { type: "button", onclick: () => replace(editorBox) }, "Cancel"))));
    input.focus();
  }

  async function loadProfiles() {
    const profiles = await get("/chaos/profiles");
    replace(profilesBox, table([
      { title: "Profile", cell: (p) => p.name, class: "mono" },
      { title: "Description", cell: (p) => p.description || "" },
      { title: "Does", cell: (p) => summaryText(p.config) },
      { title: "", cell: (p) => h("button", { type: "button", "data-testid": "apply-profile",
        dataset: { profile: p.name },
        onclick: () => change(() => api("POST", `/chaos/profiles/${encodeURIComponent(p.name)}/apply`),
          `Profile ${p.name} applied`) }, "Apply") },
    ], profiles, "No profiles."));
  }

  let shownFaults = null; // the JSON of the faults answer the table shows
  async function loadLive() {
    const [stats, faults] = await Promise.all([get("/chaos/stats"), get("/chaos/faults")]);
    const byType = Object.entries(stats.faultsByType || {}).filter(([, n]) => n);
    replace(statsBox,
      h("div", { class: "cards" }, STAT_LABELS.map(([key, label]) =>
        h("div", { class: "card" }, h("div", { class: "muted" }, label),
          h("div", { class: "value", dataset: { stat: key } }, String(stats[key] ?? 0))))),
      byType.length ? h("p", { class: "muted" }, "By fault: ", byType.map(([t, n]) => `${t} ${n}`).join(" · ")) : null);
    // The faults table (with its Trip and Reset buttons) is drawn again only when the answer
    // changed, so a button under the pointer is not swapped at every poll (a click lost).
    const faultsKey = JSON.stringify(faults);
    if (faultsKey === shownFaults) return;
    shownFaults = faultsKey;
    const breakers = Object.entries(faults.circuitBreakers || {}).map(([key, b]) => ({ key, ...b }));
    const others = [["Retry-after trackers", faults.retryAfterTrackers],
      ["Progressive degradation", faults.progressiveDegradation || faults.progressiveDegradations]]
      .filter(([, value]) => value && Object.keys(value).length);
    replace(faultsBox,
      table([
        { title: "Breaker", cell: (b) => h("span", { title: "rule index : fault index" }, b.key), class: "mono" },
        { title: "State", cell: (b) => h("span", { class: `badge ${b.state === "closed" ? "ok" : b.state === "open" ? "error" : "warn"}`,
          "data-testid": "breaker-state" }, b.state) },
        { title: "Trips", cell: (b) => String(b.totalTrips ?? b.tripCount ?? 0), class: "num" },
        { title: "Rejected", cell: (b) => String(b.totalRejected ?? 0), class: "num" },
        { title: "Passed", cell: (b) => String(b.totalPassed ?? 0), class: "num" },
        { title: "Opened", cell: (b) => when(b.openedAt), class: "muted" },
        { title: "", cell: (b) => [
          h("button", { type: "button", "data-testid": "trip-breaker", disabled: b.state === "open",
            onclick: () => breaker(b.key, "trip") }, "Trip"), " ",
          h("button", { type: "button", "data-testid": "reset-breaker", disabled: b.state === "closed",
            onclick: () => breaker(b.key, "reset") }, "Reset")] },
      ], breakers, "No circuit breakers: add a circuit_breaker fault to a rule to get one."),
      others.map(([title, value]) => [h("h3", {}, title), jsonBlock(value)]));
    faultsBox.querySelectorAll("tbody tr").forEach((tr, index) => {
      if (breakers[index]) tr.dataset.breaker = breakers[index].key;
    });
  }

  function breaker(key, action) {
    return change(() => api("POST", `/chaos/circuit-breakers/${encodeURIComponent(key)}/${action}`),
      `Circuit breaker ${key} ${action === "trip" ? "tripped" : "reset"}`);
  }

  await Promise.all([loadConfig(), loadProfiles(), loadLive()]);
  let busy = false;
  const timer = setInterval(async () => {
    if (busy || document.hidden) return;
    busy = true;
    try { await loadLive(); } catch (_) { /* the next round tries again */ } finally { busy = false; }
  }, REFRESH_MS);
  return () => clearInterval(timer);
}

/** One line of what a config does: "latency 200ms–800ms · errors 5% [503] · 51200 B/s · 1 rule". */
function summaryText(config) {
  if (!config || !config.enabled) return "off";
  const parts = [];
  if (config.latency) parts.push(`latency ${config.latency.min ?? "0ms"}–${config.latency.max ?? "?"}`);
  if (config.errorRate && config.errorRate.probability) {
    parts.push(`errors ${Math.round(config.errorRate.probability * 100)}% [${(config.errorRate.statusCodes || [config.errorRate.defaultCode || 500]).join(", ")}]`);
  }
  if (config.bandwidth && config.bandwidth.bytesPerSecond) parts.push(`${config.bandwidth.bytesPerSecond} B/s`);
  const rules = (config.rules || []).length;
  if (rules) parts.push(`${rules} rule${rules === 1 ? "" : "s"}`);
  return parts.join(" · ") || "on, no faults";
}

function summary(config) {
  const rules = config.rules || [];
  return h("div", {},
    h("p", { "data-testid": "chaos-summary" }, summaryText(config)),
    rules.length ? table([
      { title: "#", cell: (r) => String(r.index), class: "num" },
      { title: "Path (regex)", cell: (r) => r.pathPattern || "", class: "mono" },
      { title: "Methods", cell: (r) => (r.methods || []).join(", ") || "any" },
      { title: "Faults", cell: (r) => (r.faults || []).map((f) => f.type).join(", ") },
    ], rules.map((rule, index) => ({ ...rule, index }))) : null);
}
