// The dashboard's frame: the key prompt, the workspace switcher, the server status in the
// footer and the router. The URL fragment names the area and its arguments:
// "#/mocks/abc?tab=edit" loads pages/mocks.js and calls its render(root, {args: ["abc"],
// query: URLSearchParams, navigate}). A page may return a cleanup function (close its
// EventSource, stop its timers); it runs before the next page renders.
import { api, apiKey, onKeyNeeded, setApiKey, setWorkspace, workspace } from "./api.js";
import { h, replace, showError } from "./dom.js";

const AREAS = new Set([...document.querySelectorAll("#nav a[data-area]")].map((a) => a.dataset.area));
const root = document.getElementById("area");
let cleanup = null;
let generation = 0;

/** Go to an area: navigate("mocks", "abc") or navigate("#/mocks/abc?tab=edit"). */
export function navigate(...parts) {
  const target = parts.length === 1 && String(parts[0]).startsWith("#")
    ? parts[0] : `#/${parts.map(encodeURIComponent).join("/")}`;
  if (window.location.hash === target) route();
  else window.location.hash = target;
}

function parseHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [pathPart, queryPart = ""] = raw.split("?");
  const segments = pathPart.split("/").filter(Boolean).map(decodeURIComponent);
  const area = AREAS.has(segments[0]) ? segments[0] : "overview";
  return { area, args: AREAS.has(segments[0]) ? segments.slice(1) : [], query: new URLSearchParams(queryPart) };
}

async function route() {
  const mine = ++generation;
  const { area, args, query } = parseHash();
  if (cleanup) {
    try { cleanup(); } catch (error) { console.error(error); }
    cleanup = null;
  }
  for (const link of document.querySelectorAll("#nav a[data-area]")) {
    link.classList.toggle("active", link.dataset.area === area);
  }
  replace(root, h("p", { class: "muted" }, "Loading…"));
  try {
    const page = await import(`./pages/${area}.js`);
    if (mine !== generation) return;
    const container = h("section", { class: `page page-${area}` });
    replace(root, container);
    const result = await page.render(container, { args, query, navigate });
    if (mine !== generation) {
      if (typeof result === "function") result();
      return;
    }
    cleanup = typeof result === "function" ? result : null;
  } catch (error) {
    if (mine !== generation) return;
    replace(root, h("div", { class: "error-box" }, h("h2", {}, "This page could not load"),
      h("p", {}, error && error.message ? error.message : String(error))));
    console.error(error);
  }
}

// --- the key prompt ---------------------------------------------------------------------
const dialog = document.getElementById("key-dialog");
const keyInput = document.getElementById("key-input");
const keyError = document.getElementById("key-error");
const forget = document.getElementById("forget-key");

function askForKey(wrong) {
  return new Promise((resolve) => {
    keyError.hidden = !wrong;
    keyError.textContent = wrong ? "That key was not accepted. Try again." : "";
    keyInput.value = "";
    const done = () => {
      dialog.removeEventListener("close", done);
      const key = keyInput.value.trim();
      if (key) {
        setApiKey(key);
        forget.hidden = false;
      }
      resolve(key || null);
    };
    dialog.addEventListener("close", done);
    if (!dialog.open) dialog.showModal();
    keyInput.focus();
  });
}

let pendingPrompt = null;
onKeyNeeded((wrong) => {
  // Several calls may meet a 401 at once: one dialog answers them all.
  if (!pendingPrompt) pendingPrompt = askForKey(wrong).finally(() => { pendingPrompt = null; });
  return pendingPrompt;
});

forget.hidden = !apiKey();
forget.addEventListener("click", () => {
  setApiKey("");
  forget.hidden = true;
  route();
});

// --- workspaces and status -------------------------------------------------------------
async function loadWorkspaces() {
  const select = document.getElementById("workspace");
  try {
    const answer = await api("GET", "/workspaces");
    const items = answer.workspaces || [];
    replace(select, items.map((w) => h("option", { value: w.id === "local" ? "" : w.id, selected: (w.id === "local" ? "" : w.id) === workspace() }, w.name || w.id)));
  } catch (error) {
    if (error.status !== 401) showError(error);
  }
  select.addEventListener("change", () => {
    setWorkspace(select.value);
    route();
  });
}

async function refreshStatus() {
  const status = document.getElementById("server-status");
  try {
    const health = await fetch("/health");
    status.textContent = health.ok ? "server up" : `server answered ${health.status}`;
    status.className = health.ok ? "ok" : "error";
  } catch (_) {
    status.textContent = "server unreachable";
    status.className = "error";
  }
}

window.addEventListener("hashchange", route);
route().then(loadWorkspaces);
refreshStatus();
setInterval(refreshStatus, 10000);
