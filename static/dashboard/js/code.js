// Code display and editing helpers of the dashboard: JSON and YAML syntax highlighting (a
// small line tokenizer, text only: every token goes in as a text node), YAML read/write with
// the vendored js-yaml (loaded on first use), the key path of each line of a document, and
// the admin API's validation errors ("http.response.statusCode: <reason>; ...") placed under
// the line of the key they name.
//
// Exports:
//   highlighted(text, lang)            -> <pre class="code hl"> of the whole text
//   annotated(text, lang, issues)      -> <pre class="code hl"> with one .field-error row per
//                                         issue under the line of its key
//   loadYaml()                         -> Promise of js-yaml ({load, dump, YAMLException})
//   toText(value, lang)                -> Promise of the value as "yaml" or "json" text
//   parseText(text, lang)              -> Promise of the value; throws ParseError {line, message}
//   issuesOf(error)                    -> [{path, reason}] from an ApiError's message
//   pathLines(text, lang)              -> Map("http.response.statusCode" -> 0-based line)
//   lineOfPath(lines, path)            -> the line of path, else of its nearest parent, else 0
import { h } from "./dom.js";

const YAML_MODULE = "../../vendor/js-yaml-4.1.1/js-yaml.min.js";
let yamlPromise = null;

/** js-yaml (`load`, `dump`, `YAMLException`), imported once: the UMD bundle sets globalThis.jsyaml. */
export function loadYaml() {
  if (!yamlPromise) {
    yamlPromise = import(YAML_MODULE).then(() => {
      if (!globalThis.jsyaml) throw new Error("js-yaml did not load");
      return globalThis.jsyaml;
    });
  }
  return yamlPromise;
}

/** A document that cannot be parsed: `line` is 0-based (or null when unknown). */
export class ParseError extends Error {
  constructor(message, line) {
    super(message);
    this.line = line;
  }
}

/** The value as text: "yaml" (js-yaml block style, keys in their order) or "json" (2 spaces). */
export async function toText(value, lang) {
  if (lang === "yaml") {
    const yaml = await loadYaml();
    return yaml.dump(value, { noRefs: true, lineWidth: 100, sortKeys: false });
  }
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Parse "yaml" or "json" text; throws ParseError naming the line. */
export async function parseText(text, lang) {
  if (lang === "yaml") {
    const yaml = await loadYaml();
    try {
      // The core schema: no timestamps, so a date stays the string the server stored.
      return yaml.load(text, { schema: yaml.CORE_SCHEMA });
    } catch (error) {
      const line = error && error.mark ? error.mark.line : null;
      throw new ParseError(`YAML: ${error.reason || error.message}`, line);
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const match = /position (\d+)/.exec(error.message) || /line (\d+)/.exec(error.message);
    let line = null;
    if (match && /position/.test(match[0])) line = text.slice(0, Number(match[1])).split("\n").length - 1;
    else if (match) line = Number(match[1]) - 1;
    throw new ParseError(`JSON: ${error.message}`, line);
  }
}

/**
 * The problems of an admin API 400 answer as [{path, reason}]: the message lists them as
 * "<path>: <reason>" joined by "; " (mocks/control/errors.py ConfigValidationError). A message
 * without a path gives one issue with path "".
 */
export function issuesOf(error) {
  const message = error && error.message ? String(error.message) : String(error);
  const issues = [];
  for (const part of message.split(/;\s+(?=[\w$[\].-]+: )/)) {
    const match = /^([A-Za-z_$][\w$-]*(?:\[\d+\]|\.[\w$-]+|\.\[?[^\s:]+\]?)*): (.+)$/s.exec(part.trim());
    if (match) issues.push({ path: match[1], reason: match[2] });
    else if (part.trim()) issues.push({ path: "", reason: part.trim() });
  }
  return issues;
}

// ---------------------------------------------------------------------------- tokenizer

const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])|\b(true|false)\b|\b(null)\b|([{}[\],:])|([^"{}[\],:\s]+|\s+)/g;

function tok(kind, text) {
  return kind ? h("span", { class: `tok-${kind}` }, text) : document.createTextNode(text);
}

function jsonTokens(text) {
  const out = [];
  JSON_TOKEN.lastIndex = 0;
  let match;
  while ((match = JSON_TOKEN.exec(text)) !== null) {
    if (match[1] !== undefined) {
      out.push(tok(match[2] ? "key" : "str", match[1]));
      if (match[2]) out.push(tok("punct", match[2]));
    } else if (match[3] !== undefined) out.push(tok("num", match[3]));
    else if (match[4] !== undefined) out.push(tok("bool", match[4]));
    else if (match[5] !== undefined) out.push(tok("null", match[5]));
    else if (match[6] !== undefined) out.push(tok("punct", match[6]));
    else out.push(tok(null, match[7]));
  }
  return out;
}

function yamlScalar(value) {
  const trimmed = value.trim();
  if (!trimmed) return [tok(null, value)];
  const lead = value.slice(0, value.indexOf(trimmed));
  const tail = value.slice(lead.length + trimmed.length);
  let kind = "str";
  if (/^[[{]/.test(trimmed)) return [tok(null, lead), ...jsonTokens(trimmed), tok(null, tail)];
  if (/^#/.test(trimmed)) kind = "comment";
  else if (/^-?(\d+(\.\d+)?([eE][+-]?\d+)?|0x[0-9a-fA-F]+|\.inf|\.nan)$/.test(trimmed)) kind = "num";
  else if (/^(true|false|True|False|TRUE|FALSE)$/.test(trimmed)) kind = "bool";
  else if (/^(null|Null|NULL|~)$/.test(trimmed)) kind = "null";
  else if (/^[|>][-+]?\d*$/.test(trimmed) || /^[&*!]/.test(trimmed)) kind = "punct";
  return [tok(null, lead), tok(kind, trimmed), tok(null, tail)];
}

const YAML_KEY = /^(\s*)((?:-\s+)*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"{}[\],:-][^:#]*?|-[^\s:][^:#]*?)(\s*:)(?=\s|$)(.*)$/;
const YAML_ITEM = /^(\s*)((?:-\s+)+|-$)(.*)$/;

function yamlTokens(line) {
  if (/^\s*#/.test(line)) return [tok("comment", line)];
  if (/^(---|\.\.\.)\s*$/.test(line)) return [tok("punct", line)];
  let match = YAML_KEY.exec(line);
  if (match) {
    return [tok(null, match[1]), match[2] ? tok("punct", match[2]) : null, tok("key", match[3]),
      tok("punct", match[4]), ...yamlScalar(match[5])].filter(Boolean);
  }
  match = YAML_ITEM.exec(line);
  if (match) return [tok(null, match[1]), tok("punct", match[2]), ...yamlScalar(match[3])];
  return yamlScalar(line);
}

function lineNodes(text, lang) {
  const lines = String(text).replace(/\n$/, "").split("\n");
  return lines.map((line) => (lang === "yaml" ? yamlTokens(line) : jsonTokens(line)));
}

let sheetAdded = false;

/** The token colours, added once as a constructed stylesheet (allowed under the page's CSP). */
function addTokenStyles() {
  if (sheetAdded || typeof CSSStyleSheet === "undefined" || !document.adoptedStyleSheets) return;
  sheetAdded = true;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(`
    pre.hl { white-space: pre; word-break: normal; }
    pre.hl .line { display: block; min-height: 1.2em; }
    pre.hl .tok-key { color: #0550ae; } pre.hl .tok-str { color: #0a3069; }
    pre.hl .tok-num { color: #953800; } pre.hl .tok-bool, pre.hl .tok-null { color: #8250df; }
    pre.hl .tok-punct { color: #6e7781; } pre.hl .tok-comment { color: #6e7781; font-style: italic; }
    pre.hl .line.has-error { background: rgba(207, 34, 46, .12); }
    pre.hl .field-error { display: block; white-space: pre-wrap; padding: 2px 0 2px 1.5em; }
    @media (prefers-color-scheme: dark) {
      pre.hl .tok-key { color: #79c0ff; } pre.hl .tok-str { color: #a5d6ff; }
      pre.hl .tok-num { color: #ffa657; } pre.hl .tok-bool, pre.hl .tok-null { color: #d2a8ff; }
      pre.hl .tok-punct, pre.hl .tok-comment { color: #8b949e; }
    }`);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** The text as a highlighted block: <pre class="code hl" data-lang> of <span class="line">. */
export function highlighted(text, lang = "json") {
  return annotated(text, lang, []);
}

/**
 * The text highlighted, with each issue ({path, reason} or {line, reason}) as a
 * `.field-error` row (data-path, data-testid "field-error") right under the line of its key
 * (or of the nearest parent key the text has); that line gets class `has-error`.
 */
export function annotated(text, lang, issues) {
  addTokenStyles();
  const nodes = lineNodes(text, lang);
  const paths = issues.length ? pathLines(text, lang) : null;
  const byLine = new Map();
  for (const issue of issues) {
    const line = Number.isInteger(issue.line) ? Math.min(Math.max(issue.line, 0), nodes.length - 1)
      : lineOfPath(paths, issue.path);
    if (!byLine.has(line)) byLine.set(line, []);
    byLine.get(line).push(issue);
  }
  const children = [];
  nodes.forEach((tokens, index) => {
    const errors = byLine.get(index) || [];
    children.push(h("span", { class: errors.length ? "line has-error" : "line", dataset: { line: index + 1 } }, tokens));
    for (const issue of errors) {
      children.push(h("span", { class: "field-error", "data-testid": "field-error", dataset: { path: issue.path || "" } },
        `↳ ${issue.path ? `${issue.path}: ` : ""}${issue.reason}`));
    }
  });
  return h("pre", { class: "code hl", dataset: { lang } }, children);
}

// ---------------------------------------------------------------------------- key paths

function joinPath(segments) {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

function unquote(key) {
  const trimmed = key.trim();
  if (/^".*"$/.test(trimmed)) {
    try { return JSON.parse(trimmed); } catch (_) { return trimmed.slice(1, -1); }
  }
  if (/^'.*'$/.test(trimmed)) return trimmed.slice(1, -1).replace(/''/g, "'");
  return trimmed;
}

/**
 * The key path of every line of a block-style YAML or pretty-printed JSON document that
 * opens a key or an array item: Map(path -> first 0-based line). Paths are written as the
 * admin API writes them: `http.response.statusCode`, `mocks[0].http.matcher.path`.
 */
export function pathLines(text, lang) {
  const map = new Map();
  const lines = String(text).split("\n");
  // stack of {indent, segment, array: counter or null}
  const stack = [];
  const record = (line) => {
    const path = joinPath(stack.map((entry) => entry.segment).filter((s) => s !== null));
    if (path && !map.has(path)) map.set(path, line);
  };
  const popTo = (indent) => { while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop(); };
  const parentArray = (indent) => {
    for (let i = stack.length - 1; i >= 0; i -= 1) {
      if (stack[i].indent < indent) return stack[i].array !== null ? stack[i] : null;
    }
    return null;
  };
  lines.forEach((raw, index) => {
    if (!raw.trim() || /^\s*#/.test(raw)) return;
    const indent = raw.length - raw.trimStart().length;
    if (lang === "yaml") {
      let rest = raw.slice(indent);
      let column = indent;
      while (/^-(\s+|$)/.test(rest)) {
        // An item closes deeper entries and the previous item; its array's key may sit at
        // the same indent ("key:\n- a") or above it.
        while (stack.length && (stack[stack.length - 1].indent > column
          || (stack[stack.length - 1].indent === column && stack[stack.length - 1].array === null))) stack.pop();
        const top = stack[stack.length - 1];
        const owner = top && top.array !== null ? top : null;
        const position = owner ? owner.array++ : 0;
        stack.push({ indent: column, segment: position, array: null });
        record(index);
        const dash = /^-\s*/.exec(rest)[0].length;
        column += dash;
        rest = rest.slice(dash);
      }
      const key = /^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#'"{}[\],:][^:#]*?)\s*:(\s|$)(.*)$/.exec(rest);
      if (key) {
        popTo(column);
        const value = key[3].trim();
        // A key whose value follows on the next lines: an array when they start with "-".
        stack.push({ indent: column, segment: unquote(key[1]), array: value === "" ? 0 : null });
        record(index);
      }
      return;
    }
    // JSON, pretty-printed: one key or element per line.
    const body = raw.trim();
    if (/^[\]}]/.test(body)) {
      popTo(indent + 1);
      return;
    }
    const key = /^("(?:[^"\\]|\\.)*")\s*:\s*(.*)$/.exec(body);
    popTo(indent);
    if (key) {
      stack.push({ indent, segment: unquote(key[1]), array: /^\[\s*$/.test(key[2]) ? 0 : null });
      record(index);
    } else {
      const owner = parentArray(indent);
      if (owner) {
        stack.push({ indent, segment: owner.array++, array: /^\[\s*$/.test(body) ? 0 : null });
        record(index);
      } else if (/^\[\s*$/.test(body)) {
        stack.push({ indent: -1, segment: null, array: 0 });
      }
    }
  });
  return map;
}

/** The line of `path` in `lines` (from pathLines), else of its nearest parent, else 0. */
export function lineOfPath(lines, path) {
  let current = String(path || "");
  while (current) {
    if (lines && lines.has(current)) return lines.get(current);
    const cut = Math.max(current.lastIndexOf("."), current.lastIndexOf("["));
    current = cut > 0 ? current.slice(0, cut) : "";
  }
  return 0;
}

// ---------------------------------------------------------------------------- editor

/**
 * A YAML/JSON editor of one document: a textarea, a highlighted preview beside it that shows
 * the problems of the last save under the lines of their keys, a format switch and a save
 * button. `onSave(value, lang)` gets the parsed document and returns a promise; when it
 * throws an error with a status (an ApiError: 400 `validation_error`, `invalid_json`, 409...)
 * its message's "<path>: <reason>" problems are shown at their keys and the text is kept.
 *
 * @param {object} options {value, lang: "yaml"|"json", onSave, saveLabel, testid (prefix of
 *   the data-testid values: "<testid>-text", "-save", "-format", "-preview", "-errors")}
 * @returns {Promise<{element, setValue(value), text()}>}
 */
export async function codeEditor({ value, lang = "yaml", onSave, saveLabel = "Save", testid = "editor" }) {
  let current = lang;
  let issues = [];
  const textarea = h("textarea", { spellcheck: "false", "data-testid": `${testid}-text`, "aria-label": "Definition" });
  const preview = h("div", { class: "code-preview", "data-testid": `${testid}-preview` });
  const errors = h("div", { class: "error-box", "data-testid": `${testid}-errors`, hidden: true });
  const format = h("select", { "data-testid": `${testid}-format`, "aria-label": "Format" },
    h("option", { value: "yaml", selected: lang === "yaml" }, "YAML"),
    h("option", { value: "json", selected: lang === "json" }, "JSON"));
  const save = h("button", { type: "button", class: "primary", "data-testid": `${testid}-save` }, saveLabel);
  let original = "";
  const revert = h("button", { type: "button", "data-testid": `${testid}-revert` }, "Revert");

  const showIssues = (list) => {
    issues = list;
    preview.replaceChildren(annotated(textarea.value, current, issues));
    errors.hidden = !issues.length;
    errors.replaceChildren(...(issues.length ? [h("strong", {}, issues.length === 1 ? "1 problem" : `${issues.length} problems`),
      h("ul", {}, issues.map((i) => h("li", { class: "field-error" }, i.path ? `${i.path}: ${i.reason}` : i.reason)))] : []));
  };
  let timer = null;
  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => preview.replaceChildren(annotated(textarea.value, current, issues)), 250);
  });
  format.addEventListener("change", async () => {
    try {
      const parsed = await parseText(textarea.value, current);
      current = format.value;
      textarea.value = await toText(parsed, current);
      showIssues([]);
    } catch (error) {
      format.value = current;
      showIssues([{ line: error.line, path: "", reason: error.message }]);
    }
  });
  revert.addEventListener("click", () => {
    textarea.value = original;
    showIssues([]);
  });
  save.addEventListener("click", async () => {
    let parsed;
    try {
      parsed = await parseText(textarea.value, current);
    } catch (error) {
      showIssues([{ line: error.line, path: "", reason: error.message }]);
      return;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      showIssues([{ line: 0, path: "", reason: "The definition must be an object (a mapping of keys)." }]);
      return;
    }
    save.disabled = true;
    try {
      await onSave(parsed, current);
      showIssues([]);
    } catch (error) {
      if (error && error.status) showIssues(issuesOf(error));
      else showIssues([{ line: 0, path: "", reason: error && error.message ? error.message : String(error) }]);
    } finally {
      save.disabled = false;
    }
  });

  const setValue = async (next) => {
    original = await toText(next, current);
    textarea.value = original;
    showIssues([]);
  };
  await setValue(value);
  const element = h("div", { class: "code-editor" },
    h("div", { class: "toolbar" }, h("label", { class: "inline" }, "Format ", format), h("span", { class: "spacer" }), revert, save),
    errors,
    h("div", { class: "split" }, textarea, preview));
  return { element, setValue, text: () => textarea.value };
}
