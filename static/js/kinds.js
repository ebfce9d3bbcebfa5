// How each question kind is drawn (quiz/kinds on the server says what each frame carries): on the host's
// screen while it is open and at its reveal, and on a phone as the controls that answer it. Every text goes
// in as text, never as HTML. A new kind: one entry in KINDS.

import { optionContent } from "./room.js";
import { el } from "./ui.js";

// The options a phone picks from: a true/false question's are named here, in the page's language.
export function choices(q) {
  return q.kind === "true_false" ? [gettext("True"), gettext("False")] : q.options;
}

function submitButton(label, onClick) {
  const button = el("button", { text: label, className: "btn btn-primary btn-big submit-answer", attrs: { type: "button" } });
  button.addEventListener("click", onClick);
  return button;
}

// A list of option cards with the room's counts as bars; `marked` says which are right (none for a poll).
function tallyList(container, q, reveal, marked) {
  const texts = choices(q);
  const total = reveal.distribution.reduce((a, b) => a + b, 0) || 1;
  container.replaceChildren(
    ...texts.map((text, i) => {
      const item = optionContent(el("li", { className: "option" }), i, text);
      const count = reveal.distribution[i];
      const bar = el("span", { className: "bar" });
      // Through the CSSOM, not a style attribute: the Content-Security-Policy refuses inline styles.
      bar.style.setProperty("--share", String(count / total));
      if (marked === null) item.classList.add("poll");
      else if (marked.includes(i)) {
        item.classList.add("correct");
        item.append(el("span", { text: gettext("✔ Correct"), className: "correct-mark" }));
      } else item.classList.add("wrong");
      item.append(bar, el("span", { text: `${count}`, className: "count", attrs: { "aria-label": interpolate(ngettext("%s answer", "%s answers", count), [count]) } }));
      return item;
    }),
  );
}

function noteItem(text, className = "kind-note") {
  return el("li", { text, className });
}

// The host's one-click hide for a player's words on the big screen (an open answer's word, a typed answer): the
// page sends {"type": "hide_word"} on the "hide-word" event, and the server drops it from every later frame.
function hideButton(key, word, container, text = gettext("Hide")) {
  const button = el("button", { text, className: "hide-word", attrs: { type: "button", "aria-label": interpolate(gettext("Hide “%s”"), [word]) } });
  button.addEventListener("click", () => container.dispatchEvent(new CustomEvent("hide-word", { bubbles: true, detail: key })));
  return button;
}

// One option to pick, on the phone (single, true/false, poll): a tap answers.
const pickOne = {
  showsOption: true, // the phone's reveal shows the answer given as that option's card
  hostQuestion(q, container) {
    container.replaceChildren(...choices(q).map((text, i) => optionContent(el("li", { className: "option" }), i, text)));
  },
  playerControls(q, container, send) {
    container.replaceChildren(
      ...choices(q).map((text, i) => {
        const button = optionContent(el("button", { className: "option", attrs: { type: "button" } }), i, text);
        button.addEventListener("click", () => send({ option: i }));
        return button;
      }),
    );
  },
  keyAnswer(q, key) {
    const index = Number(key) - 1;
    return index >= 0 && index < choices(q).length ? { option: index } : null;
  },
  markChosen(container, given) {
    for (const button of container.querySelectorAll("button.option")) button.classList.toggle("chosen", Number(button.dataset.index) === given);
  },
  givenText(q, given) {
    return q.kind === "true_false" ? choices(q)[given] ?? "?" : "ABCDEF"[given] ?? "?";
  },
  hostReveal(q, reveal, container) {
    tallyList(container, q, reveal, [reveal.correct_index]);
  },
  answerText(q, reveal) {
    return `${"ABCDEF"[reveal.correct_index]} — ${choices(q)[reveal.correct_index]}`;
  },
  isRight(q, reveal, given) {
    return given === reveal.correct_index;
  },
};

const poll = {
  ...pickOne,
  hostReveal(q, reveal, container) {
    tallyList(container, q, reveal, null);
  },
  answerText() {
    return gettext("A poll: no right answer");
  },
  isRight() {
    return null;
  },
};

// Several right options: taps choose, a button sends.
const multi = {
  ...pickOne,
  showsOption: false,
  playerControls(q, container, send) {
    const picked = new Set();
    const buttons = q.options.map((text, i) => {
      const button = optionContent(el("button", { className: "option toggle-option", attrs: { type: "button", "aria-pressed": "false" } }), i, text);
      button.addEventListener("click", () => {
        if (picked.has(i)) picked.delete(i);
        else picked.add(i);
        button.setAttribute("aria-pressed", String(picked.has(i)));
        submit.disabled = picked.size === 0;
      });
      return button;
    });
    const submit = submitButton(gettext("Send my answer"), () => send({ options: [...picked].sort((a, b) => a - b) }));
    submit.disabled = true;
    container.replaceChildren(el("p", { text: gettext("Pick every right option."), className: "kind-hint" }), ...buttons, submit);
  },
  keyAnswer() {
    return null;
  },
  markChosen(container, given) {
    for (const button of container.querySelectorAll("button.option")) button.classList.toggle("chosen", (given || []).includes(Number(button.dataset.index)));
  },
  givenText(q, given) {
    return (given || []).map((i) => "ABCDEF"[i]).join(", ");
  },
  hostReveal(q, reveal, container) {
    tallyList(container, q, reveal, reveal.correct_indexes);
  },
  answerText(q, reveal) {
    return reveal.correct_indexes.map((i) => `${"ABCDEF"[i]} — ${q.options[i]}`).join("; ");
  },
  isRight(q, reveal, given) {
    const mine = [...(given || [])].sort((a, b) => a - b);
    return mine.length === reveal.correct_indexes.length && mine.every((i, k) => i === reveal.correct_indexes[k]);
  },
};

const typed = {
  hostQuestion(q, container) {
    container.replaceChildren(noteItem(gettext("Type your answer on your phone.")));
  },
  playerControls(q, container, send) {
    const id = "typed-answer";
    const input = el("input", { className: "typed-input", attrs: { id, type: "text", maxlength: String(q.max_length || 100), autocomplete: "off", autocapitalize: "off", spellcheck: "false" } });
    const submit = submitButton(gettext("Send my answer"), () => input.value.trim() && send({ text: input.value.trim() }));
    input.addEventListener("keydown", (event) => event.key === "Enter" && submit.click());
    container.replaceChildren(el("label", { text: gettext("Your answer"), attrs: { for: id } }), input, submit);
  },
  keyAnswer() {
    return null;
  },
  markChosen() {},
  givenText(q, given) {
    return `“${given ?? ""}”`;
  },
  hostReveal(q, reveal, container) {
    container.replaceChildren(
      el("li", { text: interpolate(gettext("Accepted: %s"), [reveal.answers.join(" · ")]), className: "option correct" }),
      ...reveal.common.map((entry) => {
        const item = el("li", { className: `option ${entry.right ? "correct" : "wrong"}` });
        item.append(
          el("span", { text: entry.right ? "✔" : "✘", className: "mark", attrs: { "aria-label": entry.right ? gettext("Right") : gettext("Wrong") } }),
          el("span", { text: entry.text, className: "option-text" }),
          el("span", { text: `${entry.count}`, className: "count", attrs: { "aria-label": interpolate(ngettext("%s answer", "%s answers", entry.count), [entry.count]) } }),
        );
        // The players' own words: the host can take any of them off the screen (a frame from before hiding
        // came without keys).
        if (entry.key) item.append(hideButton(entry.key, entry.text, container));
        return item;
      }),
    );
  },
  answerText(q, reveal) {
    return reveal.answers[0];
  },
  isRight(q, reveal, given, mine) {
    return mine ? mine.correct : false;
  },
};

// Items to put in order: each has buttons to move it up or down (no dragging needed), a button sends.
const order = {
  hostQuestion(q, container) {
    container.replaceChildren(...q.items.map((text, i) => optionContent(el("li", { className: "option order-item" }), i, text)));
  },
  playerControls(q, container, send) {
    const sequence = q.items.map((_, i) => i);
    const list = el("ol", { className: "order-list", attrs: { "aria-label": gettext("Your order") } });
    const draw = (focus) => {
      list.replaceChildren(
        ...sequence.map((item, place) => {
          const row = el("li", { className: "order-row" });
          const up = el("button", { text: "↑", className: "btn move-up", attrs: { type: "button", "aria-label": interpolate(gettext("Move “%s” up"), [q.items[item]]) } });
          const down = el("button", { text: "↓", className: "btn move-down", attrs: { type: "button", "aria-label": interpolate(gettext("Move “%s” down"), [q.items[item]]) } });
          up.disabled = place === 0;
          down.disabled = place === sequence.length - 1;
          const move = (step, which) => {
            [sequence[place], sequence[place + step]] = [sequence[place + step], sequence[place]];
            draw({ item, which });
          };
          up.addEventListener("click", () => move(-1, "up"));
          down.addEventListener("click", () => move(1, "down"));
          row.append(el("span", { text: `${place + 1}.`, className: "place" }), el("span", { text: q.items[item], className: "option-text" }), up, down);
          row.dataset.item = String(item);
          return row;
        }),
      );
      if (focus) {
        const row = list.querySelector(`[data-item="${focus.item}"]`);
        const button = row.querySelector(focus.which === "up" ? ".move-up" : ".move-down");
        (button.disabled ? row.querySelector(focus.which === "up" ? ".move-down" : ".move-up") : button).focus();
      }
    };
    draw();
    container.replaceChildren(el("p", { text: gettext("Put them in order: first at the top."), className: "kind-hint" }), list, submitButton(gettext("Send my order"), () => send({ order: [...sequence] })));
  },
  keyAnswer() {
    return null;
  },
  markChosen() {},
  givenText(q, given) {
    return (given || []).map((i) => q.items[i]).join(" → ");
  },
  hostReveal(q, reveal, container) {
    container.replaceChildren(
      ...reveal.correct_order.map((i, place) => {
        const item = el("li", { className: "option correct order-item" });
        item.append(el("span", { text: `${place + 1}.`, className: "place" }), el("span", { text: q.items[i], className: "option-text" }));
        return item;
      }),
      noteItem(interpolate(ngettext("%s player had every item in place.", "%s players had every item in place.", reveal.all_in_place), [reveal.all_in_place])),
    );
  },
  answerText(q, reveal) {
    return reveal.correct_order.map((i) => q.items[i]).join(" → ");
  },
  isRight(q, reveal, given) {
    return (given || []).length === reveal.correct_order.length && given.every((i, k) => i === reveal.correct_order[k]);
  },
};

function withUnit(value, unit) {
  return unit ? `${value} ${unit}` : `${value}`;
}

// A number: a slider and a number field that follow each other, a button sends.
const number = {
  hostQuestion(q, container) {
    container.replaceChildren(noteItem(interpolate(gettext("Give a number from %(min)s to %(max)s on your phone."), { min: withUnit(q.min, q.unit), max: withUnit(q.max, q.unit) }, true)));
  },
  playerControls(q, container, send) {
    const middle = (q.min + q.max) / 2;
    const step = Number.isInteger(q.min) && Number.isInteger(q.max) ? "1" : "any";
    const start = step === "1" ? Math.round(middle) : middle;
    const slider = el("input", { className: "number-slider", attrs: { type: "range", min: String(q.min), max: String(q.max), step, value: String(start), "aria-label": gettext("Your answer") } });
    const field = el("input", { className: "number-input", attrs: { id: "number-answer", type: "number", min: String(q.min), max: String(q.max), step, value: String(start), inputmode: "decimal" } });
    slider.addEventListener("input", () => (field.value = slider.value));
    field.addEventListener("input", () => field.value !== "" && (slider.value = field.value));
    const submit = submitButton(gettext("Send my answer"), () => {
      const value = Number(field.value);
      if (field.value !== "" && Number.isFinite(value)) send({ value });
    });
    const row = el("p", { className: "number-row" });
    row.append(field, el("span", { text: q.unit || "", className: "unit" }));
    container.replaceChildren(el("label", { text: interpolate(gettext("A number from %(min)s to %(max)s"), { min: q.min, max: q.max }, true), attrs: { for: "number-answer" } }), slider, row, submit);
  },
  keyAnswer() {
    return null;
  },
  markChosen() {},
  givenText(q, given) {
    return withUnit(given, q.unit);
  },
  hostReveal(q, reveal, container) {
    const items = [el("li", { text: reveal.tolerance ? interpolate(gettext("%(answer)s (± %(tolerance)s counts)"), { answer: withUnit(reveal.answer, reveal.unit), tolerance: reveal.tolerance }, true) : withUnit(reveal.answer, reveal.unit), className: "option correct" })];
    if (reveal.median !== null) items.push(noteItem(interpolate(gettext("The room's median: %s"), [withUnit(reveal.median, reveal.unit)])));
    items.push(noteItem(interpolate(ngettext("%s answer close enough to score.", "%s answers close enough to score.", reveal.within), [reveal.within])));
    container.replaceChildren(...items);
  },
  answerText(q, reveal) {
    return withUnit(reveal.answer, reveal.unit);
  },
  isRight(q, reveal, given, mine) {
    return mine ? mine.points > 0 || mine.correct : false;
  },
};

// The list of answers keeps to its box on the big screen: smaller type first, then the rows that still do not fit
// (the least sent) are taken out and counted, so no answer is cut off unseen by the screen's edge.
function fitList(container) {
  delete container.dataset.dense;
  const box = container.getBoundingClientRect();
  const outside = () =>
    [...container.children].some((row) => {
      const r = row.getBoundingClientRect();
      return r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5;
    });
  if (!box.height || !outside()) return;
  container.dataset.dense = "";
  if (!outside()) return;
  const total = container.children.length;
  const more = el("li", { className: "answer-row answers-more" });
  container.append(more);
  do {
    more.previousElementSibling.remove();
    const left = total - (container.children.length - 1);
    more.textContent = interpolate(ngettext("…and %s more answer", "…and %s more answers", left), [left]);
  } while (container.children.length > 2 && outside());
}

// Open answers: up to `up_to` short answers typed on the phone; the reveal is the room's word cloud, each word
// sized by how many players sent it, or (the host's choice: the list's data-view is "list") a list of the answers
// with their counts, most sent first. On the host's screen each has a button that hides it.
const open = {
  hostQuestion(q, container) {
    container.replaceChildren(noteItem(interpolate(ngettext("Send one word or a few on your phone.", "Send up to %s words or short answers on your phone.", q.up_to), [q.up_to])));
  },
  playerControls(q, container, send) {
    const inputs = Array.from({ length: q.up_to || 1 }, (_, i) =>
      el("input", { className: "typed-input open-input", attrs: { id: `open-answer-${i}`, type: "text", maxlength: String(q.max_length || 40), autocomplete: "off", "aria-label": interpolate(gettext("Answer %s"), [i + 1]) } }),
    );
    const submit = submitButton(gettext("Send my answer"), () => {
      const texts = inputs.map((input) => input.value.trim()).filter(Boolean);
      if (texts.length) send({ texts });
    });
    for (const input of inputs) input.addEventListener("keydown", (event) => event.key === "Enter" && submit.click());
    container.replaceChildren(el("p", { text: gettext("Your words: no right or wrong."), className: "kind-hint" }), ...inputs, submit);
  },
  keyAnswer() {
    return null;
  },
  markChosen() {},
  givenText(q, given) {
    return (given || []).map((text) => `“${text}”`).join(" ");
  },
  hostReveal(q, reveal, container) {
    const players = (count) => interpolate(ngettext("%s player", "%s players", count), [count]);
    if (container.dataset.view === "list") {
      const rows = reveal.cloud.map((entry) => {
        const item = el("li", { className: "answer-row" });
        item.dataset.count = String(entry.count);
        item.append(
          el("span", { text: entry.word, className: "word" }),
          el("span", { text: `${entry.count}`, className: "count", attrs: { "aria-label": players(entry.count) } }),
          hideButton(entry.key, entry.word, container),
        );
        return item;
      });
      container.replaceChildren(...(rows.length ? rows : [noteItem(gettext("No words yet."))]));
      return fitList(container);
    }
    const top = Math.max(1, ...reveal.cloud.map((entry) => entry.count));
    const words = reveal.cloud.map((entry) => {
      const item = el("li", { className: "cloud-word" });
      // Sized by count through the CSSOM (the Content-Security-Policy refuses inline styles): 1 to 4.
      item.style.setProperty("--weight", String(1 + (3 * (entry.count - 1)) / Math.max(1, top - 1)));
      item.dataset.count = String(entry.count);
      item.append(el("span", { text: entry.word, className: "word", attrs: { title: players(entry.count) } }), hideButton(entry.key, entry.word, container, "×"));
      return item;
    });
    container.replaceChildren(...(words.length ? words : [noteItem(gettext("No words yet."))]));
  },
  answerText() {
    return gettext("Open answers: no right answer");
  },
  isRight() {
    return null;
  },
};

// A slide asks nothing: the big screen shows its text (the title is the question's text, the picture the
// question's), the phones say to look at the screen, and the host's key moves on. No clock, no answer count.
const slide = {
  timed: false,
  hostQuestion(q, container) {
    container.replaceChildren(...(q.body ? [el("li", { text: q.body, className: "slide-body" })] : []));
  },
  playerControls(q, container) {
    container.replaceChildren(el("p", { text: gettext("Look at the screen"), className: "slide-look" }));
  },
  keyAnswer() {
    return null;
  },
  markChosen() {},
  givenText() {
    return "";
  },
  hostReveal() {},
  answerText() {
    return "";
  },
  isRight() {
    return null;
  },
};

export const KINDS = { single: pickOne, true_false: pickOne, poll, multi, typed, order, number, open, slide };

export function kindOf(q) {
  return KINDS[q?.kind] || pickOne;
}
