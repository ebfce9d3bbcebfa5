// Small helpers every page script uses. Text from the server goes on the page with textContent, never as HTML.

export function $(id) {
  return document.getElementById(id);
}

export function el(tag, { text, className, attrs } = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

// Small line icons drawn as inline SVG: an emoji (🔊, ⛔) needs an emoji font, which many machines (and headless
// browsers) lack, and shows an empty box there. The icon is decoration: its button's aria-label names it.
const ICONS = {
  "sound-on": ["M3 9v6h4l5 4V5L7 9z", "M15.5 8.5a5 5 0 0 1 0 7", "M18.5 5.5a9 9 0 0 1 0 13"],
  "sound-off": ["M3 9v6h4l5 4V5L7 9z", "M16 9.5l5 5", "M21 9.5l-5 5"],
  block: ["M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z", "M7.5 12h9"],
};

export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [key, value] of Object.entries({ viewBox: "0 0 24 24", class: `icon icon-${name}`, "aria-hidden": "true", focusable: "false" })) svg.setAttribute(key, value);
  for (const d of ICONS[name]) {
    const path = document.createElementNS(ns, "path");
    for (const [key, value] of Object.entries({ d, fill: "none", stroke: "currentColor", "stroke-width": "2.2", "stroke-linecap": "round", "stroke-linejoin": "round" })) path.setAttribute(key, value);
    svg.append(path);
  }
  return svg;
}

// An error in the page's alert box; with hideAfterMs it goes away by itself.
export function showError(box, text, { hideAfterMs } = {}) {
  box.textContent = text;
  box.hidden = false;
  clearTimeout(box.hideTimer);
  if (hideAfterMs) box.hideTimer = setTimeout(() => (box.hidden = true), hideAfterMs);
}

export function hideError(box) {
  clearTimeout(box.hideTimer);
  box.hidden = true;
}

// Each phase is a <section class="phase" id="phase-NAME">; one is shown at a time.
export function showPhase(phase) {
  for (const section of document.querySelectorAll(".phase")) {
    section.hidden = section.id !== `phase-${phase}`;
  }
}

// Rendering by phase through one map: show the phase's section, then call its render function with the new
// state and the one before it. A phase without an entry only shows its section.
export function phaseRenderer(renderers) {
  let previous = null;
  return (state) => {
    showPhase(state.phase);
    renderers[state.phase]?.(state, previous);
    previous = state;
  };
}
