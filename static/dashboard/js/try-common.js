// Helpers shared by the panels of the "Try it" area (pages/try.js): the mock picker and the
// URLs of the data plane.
import { h, replace } from "./dom.js";

/**
 * A <select> of `mocks` (documents of GET /mocks) with `label(mock)` as text; calls
 * `onpick(mock)` on change and once for the first mock (or with null when there is none).
 */
export function mockPicker(id, mocks, label, onpick, selectedId = "") {
  const select = h("select", { id, "aria-label": "Mock" },
    mocks.length ? mocks.map((m) => h("option", { value: m.id, selected: m.id === selectedId }, label(m)))
      : h("option", { value: "" }, "no mock of this kind"));
  select.addEventListener("change", () => onpick(mocks.find((m) => m.id === select.value) || null));
  queueMicrotask(() => onpick(mocks.find((m) => m.id === select.value) || null));
  return select;
}

/** A WebSocket URL on the data plane for `path`. */
export function dataPlaneWs(base, path) {
  return base.replace(/^http/, "ws") + path;
}

/** Append a line to a log box (a <pre> or <ol>), keeping at most `max` lines. */
export function logLine(box, text, kind = "", max = 500) {
  box.append(h("li", { class: kind }, h("span", { class: "muted" }, `${new Date().toLocaleTimeString()} `), text));
  while (box.childElementCount > max) box.firstElementChild.remove();
  box.scrollTop = box.scrollHeight;
}

/** Replace `box` with a titled message. */
export function note(box, text, kind = "muted") {
  replace(box, h("p", { class: kind }, text));
}
