// The host's homework page: who has started and finished and each question's results, polled every few seconds.

import { $, el } from "./ui.js";

const root = $("homework-host");
const url = root.dataset.statusUrl;

function row(cells) {
  const tr = el("tr");
  for (const cell of cells) tr.append(el("td", { text: String(cell) }));
  return tr;
}

async function poll() {
  try {
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (response.ok) {
      const data = await response.json();
      $("hw-counts").textContent = interpolate(gettext("%(started)s started, %(finished)s finished"), data, true);
      $("hw-players").replaceChildren(
        ...data.players.map((p) => row([p.nickname, p.answered, p.score, p.finished ? gettext("yes") : gettext("no")])),
      );
      $("hw-questions").replaceChildren(...data.questions.map((q) => row([q.number, q.answered, q.correct])));
    }
  } finally {
    setTimeout(poll, 4000);
  }
}

setTimeout(poll, 4000);
