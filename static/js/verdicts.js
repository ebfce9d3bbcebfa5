// The words for a player's own result, one set for the live phone and homework: a poll is thanked, a right
// answer is "Correct!", an answer with some points that is not right is "Partly right!", the rest "Not this time".

// result: { scored (false for a poll), correct, points }. Returns the sentence and its tone (a CSS class).
export function verdictOf({ scored, correct, points }) {
  if (!scored) return { text: gettext("Thanks — your vote is counted"), tone: "right" };
  if (correct) return { text: interpolate(gettext("Correct! +%s"), [points]), tone: "right" };
  if (points > 0) return { text: interpolate(gettext("Partly right! +%s"), [points]), tone: "partly" };
  return { text: gettext("Not this time"), tone: "wrong" };
}

// The mark beside a given answer: right (true), not right (false) with or without points.
export function markOf(right, points) {
  if (right) return gettext("✔ Right");
  return points > 0 ? gettext("◐ Partly right") : gettext("✘ Wrong");
}
