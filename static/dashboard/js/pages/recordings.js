// The "recordings" area of the dashboard: render(root, {args, query, navigate}) fills root and may
// return a cleanup function.
import { h } from "../dom.js";

export function render(root) {
  root.append(h("h1", {}, "recordings"), h("p", { class: "muted" }, "This area is being built."));
}
