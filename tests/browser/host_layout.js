// Run in the host's page by page_checks.check_host_layout: the boxes a room reads from the back (the round's
// title, the top bar's controls, the phase's question, options, buttons, notes and boards) must each be inside
// the viewport, overlap none of the others, hold their own text (no overflow) and stay at a readable size.
() => {
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  const problems = [];
  const shown = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && el.getBoundingClientRect().width > 1;
  const name = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : ""} "${(el.innerText || "").trim().slice(0, 30)}"`;
  const box = (el) => el.getBoundingClientRect();
  const px = (el) => parseFloat(getComputedStyle(el).fontSize);
  const list = (selector) => [...document.querySelectorAll(selector)].filter(shown);
  const openList = document.querySelector("#time-panel[open] #time-list");
  const floating = (el) => openList && openList.contains(el); // the open panel drops over the stage by design

  const bar = document.querySelector(".stage-bar");
  const title = document.getElementById("round-title");
  const barControls = list(".stage-bar a, .stage-bar button, .stage-bar summary").filter((el) => !floating(el));
  const barTexts = list(".stage-bar p").filter((el) => el !== title && el.textContent.trim());
  const phase = [...document.querySelectorAll(".phase")].find((el) => !el.hidden);
  const inPhase = (selector) => (phase ? [...phase.querySelectorAll(selector)].filter(shown) : []);
  const options = inPhase(".option");
  const phaseParts = [
    ...inPhase(".q-progress, .q-text, .countdown, .answered, .extra-time-note, .explanation, .source, .crowd-marker, .voided-note"),
    ...inPhase(".stage-controls .btn, .stage-controls .toggle, h1, .join-url, .join-label, .qr, .big-code, #player-more"),
    ...options,
    ...inPhase(".player-list > li, .leaderboard > li, .podium > li"),
  ].filter((el) => el.textContent.trim() || el.matches(".qr"));
  const measured = [title, ...barControls, ...barTexts, ...phaseParts];

  // Readable from the back of a room: nothing that carries words below 1.7 % of the screen's height (13 px at 768).
  const minFont = Math.max(13, 0.017 * vh);
  for (const el of measured) {
    const r = box(el);
    if (r.left < -0.5 || r.right > vw + 0.5 || r.top < -0.5 || r.bottom > vh + 0.5) problems.push(`outside the screen: ${name(el)} ${JSON.stringify([r.left, r.top, r.right, r.bottom].map(Math.round))}`);
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible") problems.push(`text overflows across: ${name(el)}`);
    if (el.scrollHeight > el.clientHeight + 1 && getComputedStyle(el).overflowY !== "visible") problems.push(`text overflows down: ${name(el)}`);
    if (el.textContent.trim() && px(el) < minFont - 0.05) problems.push(`too small (${px(el).toFixed(1)} px < ${minFont.toFixed(1)}): ${name(el)}`);
  }
  // Words drawn outside their box (overflow visible) still overlap their neighbours: measure the text itself.
  const textBox = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const r = range.getBoundingClientRect();
    const b = box(el);
    return r.width > 0 ? { left: Math.min(r.left, b.left), top: Math.min(r.top, b.top), right: Math.max(r.right, b.right), bottom: Math.max(r.bottom, b.bottom) } : b;
  };
  const boxes = measured.map((el) => [el, textBox(el)]);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, ra] = boxes[i], [b, rb] = boxes[j];
      if (a.contains(b) || b.contains(a)) continue;
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left), h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (w > 1 && h > 1) problems.push(`overlap ${Math.round(w)}x${Math.round(h)}: ${name(a)} / ${name(b)}`);
    }
  }
  // The title keeps room for its words: at least a quarter of the width, and a one-line title on one line.
  const t = box(title);
  if (t.width < 0.25 * vw) problems.push(`the title is squeezed to ${Math.round(t.width)} px of ${vw}`);
  const lineHeight = parseFloat(getComputedStyle(title).lineHeight) || px(title) * 1.2;
  const oneLine = title.textContent.length * px(title) * 0.6 < t.width;
  if (oneLine && t.height > lineHeight * 1.5) problems.push(`the title wraps (${Math.round(t.height)} px high) though it would fit on one line`);
  const b = box(bar);
  if (b.height > 0.16 * vh) problems.push(`the top bar takes ${Math.round(b.height)} px of ${vh}`);
  if (phase && box(phase).top < b.bottom - 0.5) problems.push("the phase starts under the top bar");
  // Options big enough to read and tap: each at least 6 % of the screen's height.
  for (const el of options) if (box(el).height < 0.06 * vh) problems.push(`option squashed to ${Math.round(box(el).height)} px: ${name(el)}`);
  if (openList) {
    const r = box(openList);
    if (r.left < -0.5 || r.right > vw + 0.5 || r.top < -0.5 || r.bottom > vh + 0.5) problems.push("the open extra-time list leaves the screen");
  }
  return {
    problems,
    bar: Math.round(b.height),
    title: [Math.round(t.width), Math.round(t.height)],
    options: options.map((el) => Math.round(box(el).height)),
    measured: measured.length,
  };
}
