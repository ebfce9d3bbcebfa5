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
