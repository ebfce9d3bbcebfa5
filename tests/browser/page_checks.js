// Run in the page by page_checks.py: see its docstring.
(scrolls) => {
  const parse = (value) => {
    const m = value.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const luminance = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const visible = (el) => {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  const describe = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""} "${(el.innerText || el.value || "").trim().slice(0, 40)}"`;
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  // A page that may scroll (a phone with the longest texts) is only held to the viewport's width.
  const outside = (r) => r.left < -0.5 || r.right > vw + 0.5 || (!scrolls && (r.top < -0.5 || r.bottom > vh + 0.5));
  const problems = [];
  let texts = 0;
  let lowest = Infinity;
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg, script, style, template")) continue;
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const field = el.matches("input:not([type=checkbox]):not([type=radio]), textarea");
    if ((!ownText && !field) || !visible(el)) continue;
    texts += 1;
    const style = getComputedStyle(el);
    let colour = parse(style.color);
    let alpha = colour.a;
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const s = getComputedStyle(node);
      alpha *= Number(s.opacity);
      if (s.backgroundImage !== "none") problems.push(`background image behind ${describe(el)}`);
      const bg = parse(s.backgroundColor);
      if (bg && bg.a > 0) {
        layers.push(bg);
        if (bg.a >= 1) break;
      }
    }
    let background = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) background = over(layer, background);
    const shown = over({ ...colour, a: alpha }, background);
    const contrast = ratio(shown, background);
    lowest = Math.min(lowest, contrast);
    if (contrast < 4.5) problems.push(`contrast ${contrast.toFixed(2)} for ${describe(el)} (${style.color} on rgb(${background.r|0},${background.g|0},${background.b|0}))`);
    if (outside(el.getBoundingClientRect())) problems.push(`text outside the viewport: ${describe(el)}`);
    if (["hidden", "clip"].includes(style.overflowY) && el.scrollHeight > el.clientHeight + 1) problems.push(`text cut off: ${describe(el)}`);
  }
  let controls = 0;
  for (const el of document.querySelectorAll("button, a[href], input, select, textarea, summary, .option")) {
    if (!visible(el)) continue;
    controls += 1;
    if (outside(el.getBoundingClientRect())) problems.push(`control outside the viewport: ${describe(el)}`);
    if (el.matches(".option") && el.scrollHeight > el.clientHeight + 1) problems.push(`option cut off: ${describe(el)}`);
  }
  return { problems, texts, controls, lowest, width: vw, height: vh, scrollHeight: document.documentElement.scrollHeight };
}
