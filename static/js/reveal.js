// A player's own result at a reveal, drawn by the same code on the live phone and in homework: the verdict's words
// and the answer they gave as it looked on the phone (an option with its colour, shape and letter, or the words),
// marked right, partly right or wrong.

import { choices, kindOf } from "./kinds.js";
import { optionContent } from "./room.js";
import { el } from "./ui.js";
import { markOf, verdictOf } from "./verdicts.js";

// mine: the player's result ({ option, correct, points }), or null when they gave no answer.
export function showVerdict(node, q, reveal, mine) {
  if (!mine) {
    node.textContent = gettext("No answer this time");
    node.className = "verdict missed";
    return;
  }
  const words = verdictOf({ scored: kindOf(q).isRight(q, reveal, mine.option, mine) !== null, correct: mine.correct, points: mine.points });
  node.textContent = words.text;
  node.className = `verdict ${words.tone}`;
}

// The answer given as a card under "Your answer", into `container` (emptied when there is none).
export function showGiven(container, q, reveal, mine) {
  const chosen = mine ? mine.option : null;
  if (chosen === null || chosen === undefined) return container.replaceChildren();
  const kind = kindOf(q);
  const right = kind.isRight(q, reveal, chosen, mine);
  const tone = right === null ? "" : right ? "right" : mine.points > 0 ? "partly" : "wrong";
  const card = kind.showsOption && choices(q)?.[chosen] !== undefined
    ? optionContent(el("div", { className: `option ${tone}` }), chosen, choices(q)[chosen])
    : el("div", { className: `option given ${tone}`, text: kind.givenText(q, chosen) });
  if (right !== null) card.append(el("span", { text: markOf(right, mine.points), className: "mark" }));
  container.replaceChildren(el("p", { text: gettext("Your answer"), className: "muted" }), card);
}
