// The admin API from the dashboard: one fetch wrapper that sends the API key kept in this
// tab's session storage (asking for it once when the server answers 401), adds the workspace
// the header selects to scoped routes (`workspaceId`), and turns error answers
// ({error, message}) into ApiError.

const KEY_STORAGE = "mockd.apiKey";
const WORKSPACE_STORAGE = "mockd.workspace";

/** An error answer of the admin API: status, code (`error`) and message. */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

/** The workspace id the header selects ("" for the default one). */
export function workspace() {
  return sessionStorage.getItem(WORKSPACE_STORAGE) || "";
}

export function setWorkspace(id) {
  if (id) sessionStorage.setItem(WORKSPACE_STORAGE, id);
  else sessionStorage.removeItem(WORKSPACE_STORAGE);
}

let keyPrompt = null; // set by app.js: async () => key entered, or null

export function onKeyNeeded(prompt) {
  keyPrompt = prompt;
}

function buildUrl(path, query) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  return url;
}

/**
 * Call the admin API.
 * @param {string} method  GET, POST, PUT, PATCH, DELETE
 * @param {string} path    e.g. "/mocks"
 * @param {object} [options] {json: body sent as JSON, body: raw body, headers, query: {name:
 *   value}, raw: true to get the Response itself, workspace: false to leave the header out}
 * @returns parsed JSON (null for 204 or an empty body), the text for a non-JSON answer, or
 *   the Response with `raw`. Throws ApiError for a 4xx/5xx answer.
 */
export async function api(method, path, options = {}) {
  const headers = new Headers(options.headers || {});
  let body = options.body;
  if (options.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(options.json);
  }
  const query = { ...(options.query || {}) };
  if (options.scoped && workspace() && !("workspaceId" in query)) {
    query.workspaceId = workspace();
  }
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const key = apiKey();
    if (key) headers.set("X-API-Key", key);
    const response = await fetch(buildUrl(path, query), { method, headers, body });
    if (response.status === 401 && keyPrompt) {
      const entered = await keyPrompt(attempt > 0 || Boolean(key));
      if (entered) continue;
    }
    if (options.raw && response.ok) return response;
    const text = response.status === 204 ? "" : await response.text();
    let parsed = text;
    const type = response.headers.get("content-type") || "";
    if (text && type.includes("json")) {
      try { parsed = JSON.parse(text); } catch (_) { parsed = text; }
    } else if (!text) {
      parsed = null;
    }
    if (!response.ok) {
      const code = parsed && parsed.error ? parsed.error : `http_${response.status}`;
      const message = parsed && parsed.message ? parsed.message : (typeof parsed === "string" && parsed) || response.statusText;
      throw new ApiError(response.status, code, message, parsed);
    }
    return parsed;
  }
  throw new ApiError(401, "invalid_api_key", "The API key was not accepted");
}

/**
 * An EventSource on an admin SSE route (EventSource cannot send headers, so the key goes in
 * the `api_key` query parameter, which the admin API accepts).
 */
export function eventSource(path, query = {}) {
  const all = { ...query };
  if (apiKey()) all.api_key = apiKey();
  return new EventSource(buildUrl(path, all));
}

/** GET shorthand. */
export const get = (path, query) => api("GET", path, { query });
