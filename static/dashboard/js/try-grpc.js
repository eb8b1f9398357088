// "Try it" gRPC panel: a call form built from the mock's own descriptors (GET
// /grpc/{id}/describe: one input per message field, nested messages as field groups) and the
// call made by the admin API with grpcio (POST /grpc/{id}/call), whose NDJSON answer is shown
// line by line as the replies arrive.
import { api, get } from "./api.js";
import { h, jsonBlock, replace, showError } from "./dom.js";
import { logLine, mockPicker, note } from "./try-common.js";

const INTEGER = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32"]);
const FLOAT = new Set(["float", "double"]);

/** Inputs for the fields of `message` ({name, fields} from describe); returns a reader. */
export function messageInputs(container, message, prefix) {
  if (message.json) {
    const area = h("textarea", { class: "try-small", id: prefix, "aria-label": message.name, placeholder: `${message.name} as JSON` });
    container.append(area);
    return () => (area.value.trim() ? JSON.parse(area.value) : undefined);
  }
  const readers = [];
  for (const field of message.fields) {
    const id = `${prefix}.${field.jsonName}`;
    const title = `${field.name} (${field.repeated ? "repeated " : ""}${field.map ? `map<${field.map.key}, ${field.map.value}>` : field.message ? field.message.name : field.type})`;
    let read;
    if (field.repeated || field.map) {
      const area = h("textarea", { class: "try-small", id, "data-field": field.name, placeholder: field.map ? '{"key": "value"}' : "[ ... ] (JSON)" });
      container.append(h("label", {}, title, area));
      read = () => (area.value.trim() ? JSON.parse(area.value) : undefined);
    } else if (field.message) {
      const group = h("fieldset", { class: "try-fieldset" }, h("legend", {}, title));
      container.append(group);
      const inner = messageInputs(group, field.message, id);
      read = () => {
        const value = inner();
        return value && typeof value === "object" && !Array.isArray(value) && !Object.keys(value).length ? undefined : value;
      };
    } else if (field.enum) {
      const select = h("select", { id, "data-field": field.name }, h("option", { value: "" }, "(default)"), field.enum.map((v) => h("option", { value: v }, v)));
      container.append(h("label", {}, title, select));
      read = () => select.value || undefined;
    } else if (field.type === "bool") {
      const box = h("input", { type: "checkbox", id, "data-field": field.name });
      container.append(h("label", { class: "try-check" }, title, box));
      read = () => (box.checked ? true : undefined);
    } else {
      const numeric = INTEGER.has(field.type) || FLOAT.has(field.type);
      const input = h("input", { type: numeric ? "number" : "text", id, "data-field": field.name, step: FLOAT.has(field.type) ? "any" : null,
        placeholder: field.type === "bytes" ? "base64" : field.type });
      container.append(h("label", {}, title, input));
      read = () => {
        if (input.value === "") return undefined;
        return numeric ? Number(input.value) : input.value;
      };
    }
    readers.push([field.jsonName, read]);
  }
  return () => {
    const out = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) out[name] = value;
    }
    return out;
  };
}

export function grpcPanel(root, mocks) {
  const grpcMocks = mocks.filter((m) => m.type === "grpc");
  const methodSelect = h("select", { id: "try-grpc-method", "aria-label": "Method" });
  const form = h("div", { class: "try-grpc-fields", "data-testid": "try-grpc-fields" });
  const queue = h("ol", { class: "try-log", "data-testid": "try-grpc-queue" });
  const output = h("ol", { class: "try-log", "data-testid": "try-grpc-output" });
  const metadata = h("textarea", { class: "try-small", id: "try-grpc-metadata", placeholder: "x-tenant: vip", "aria-label": "Metadata" });
  const sendButton = h("button", { type: "button", class: "primary", "data-testid": "try-grpc-call" }, "Call");
  const addButton = h("button", { type: "button", "data-testid": "try-grpc-add", hidden: true }, "Add message to the stream");
  let described = null;
  let mockId = "";
  let read = () => ({});
  let queued = [];
  let current = null; // the reader of the call in progress

  function methods() {
    return described ? described.services.flatMap((s) => s.methods) : [];
  }
  function showMethod() {
    const method = methods().find((m) => m.path === methodSelect.value);
    replace(form);
    queued = [];
    replace(queue);
    if (!method) return;
    const streaming = method.streamType === "client_stream" || method.streamType === "bidi";
    addButton.hidden = !streaming;
    form.append(h("p", { class: "muted" }, `${method.streamType} · ${method.input.name} → ${method.output.name}`));
    read = messageInputs(form, method.input, "grpc");
  }
  async function pick(mock) {
    mockId = mock ? mock.id : "";
    replace(methodSelect);
    replace(form);
    if (!mock) return;
    try {
      described = await get(`/grpc/${encodeURIComponent(mock.id)}/describe`);
      replace(methodSelect, methods().map((m) => h("option", { value: m.path }, m.path)));
      showMethod();
    } catch (error) { showError(error); }
  }
  methodSelect.addEventListener("change", showMethod);
  addButton.addEventListener("click", () => {
    try {
      const message = read();
      queued.push(message);
      logLine(queue, JSON.stringify(message));
    } catch (error) { showError(new Error(`A JSON field does not parse: ${error.message}`)); }
  });
  sendButton.addEventListener("click", async () => {
    const method = methods().find((m) => m.path === methodSelect.value);
    if (!method) return;
    let body;
    try {
      const meta = {};
      for (const line of metadata.value.split("\n")) {
        const at = line.indexOf(":");
        if (at > 0) meta[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      }
      const streaming = method.streamType === "client_stream" || method.streamType === "bidi";
      body = { method: method.path, metadata: meta };
      if (streaming) body.messages = queued.length ? queued : [read()];
      else body.message = read();
    } catch (error) { showError(new Error(`A JSON field does not parse: ${error.message}`)); return; }
    replace(output);
    if (current) current.cancel();
    try {
      const response = await api("POST", `/grpc/${encodeURIComponent(mockId)}/call`, { json: body, raw: true });
      const reader = response.body.getReader();
      current = reader;
      const decoder = new TextDecoder();
      let pending = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        let at;
        while ((at = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, at);
          pending = pending.slice(at + 1);
          if (!line) continue;
          const item = JSON.parse(line);
          if (item.message) output.append(h("li", { class: "try-in" }, jsonBlock(item.message)));
          else if (item.status) {
            output.append(h("li", { class: item.status.code === 0 ? "ok" : "error", "data-testid": "try-grpc-status" },
              `status ${item.status.name} (${item.status.code})${item.status.message ? `: ${item.status.message}` : ""} · ${item.elapsedMs} ms`));
          }
        }
      }
    } catch (error) {
      showError(error);
    }
  });
  const picker = mockPicker("try-grpc-mock", grpcMocks, (m) => `${m.name || m.id} — :${m.grpc.port}`, pick);
  if (!grpcMocks.length) note(form, "No gRPC mocks: create one first.");
  root.append(
    h("div", { class: "form-row" }, h("label", {}, "Mock", picker), h("label", {}, "Method", methodSelect)),
    form,
    h("label", {}, "Metadata (one name: value per line)", metadata),
    h("div", { class: "form-row" }, addButton, sendButton),
    queue, h("h3", {}, "Replies"), output);
  return () => { if (current) current.cancel(); };
}
