import { Countdown, optionContent, progressText, renderBoard, roomSocket } from "./room.js";
import { $, el, phaseRenderer, plural, showError } from "./ui.js";

const root = $("host");
const code = root.dataset.code;
const token = root.dataset.token;
const countdown = new Countdown($("timer"), $("timer-live"));
countdown.onExpired = () => socket.sync();
let state = null;

const socket = roomSocket(code, {
  onOpen: () => socket.send({ type: "host", token }),
  onStatus: (text) => ($("conn-status").textContent = text),
  onMessage: (message) => {
    if (message.type === "state") render(message);
    else if (message.type === "answers") updateAnswered(message);
  },
  onError: (message) => showError($("host-error"), message.message, { hideAfterMs: 5000 }),
});

function act(type) {
  // Sending where we think the game is makes a double click a no-op instead of a double advance.
  socket.send({ type, phase: state.phase, index: state.question_index });
}

$("start-btn").addEventListener("click", () => act("start"));
$("close-btn").addEventListener("click", () => act("close"));
$("to-leaderboard-btn").addEventListener("click", () => act("next"));
$("next-btn").addEventListener("click", () => act("next"));
// Two steps, so a stray click cannot take points away from everyone.
$("void-btn").addEventListener("click", (event) => {
  const button = event.currentTarget;
  if (button.dataset.armed !== String(state.question_index)) {
    button.dataset.armed = String(state.question_index);
    button.textContent = "Confirm: void it (no points for anyone)";
    return;
  }
  socket.send({ type: "void", index: state.question_index });
});
$("lock-room").addEventListener("change", (event) => socket.send({ type: "lock", locked: event.target.checked }));

const renderPhase = phaseRenderer({
  lobby: renderLobby,
  question: renderQuestion,
  reveal: renderReveal,
  leaderboard: renderLeaderboard,
  finished: renderFinished,
});

function render(next) {
  state = next;
  if (state.phase !== "question") countdown.stop();
  renderPhase(state);
}

function updateAnswered(message) {
  if (!state || state.phase !== "question" || state.question_index !== message.question_index) return;
  state.answered_count = Math.max(state.answered_count, message.answered_count);
  $("answered-count").textContent = String(state.answered_count);
}

function renderLobby(state) {
  const n = state.players.length;
  $("player-count").textContent = n === 0 ? "No players yet" : plural(n, "player");
  $("lock-room").checked = state.locked;
  $("start-btn").disabled = n === 0;
  $("player-list").replaceChildren(
    ...state.players.map((p) => {
      const item = el("li");
      const remove = el("button", { text: "Remove", className: "btn btn-small", attrs: { type: "button", "aria-label": `Remove ${p.nickname}` } });
      remove.addEventListener("click", () => socket.send({ type: "remove", player: p.id }));
      item.append(el("span", { text: p.nickname, className: "nick" }), remove);
      return item;
    }),
  );
}

function renderQuestion(state) {
  const q = state.question;
  $("q-progress").textContent = progressText(state);
  $("q-text").textContent = q.text;
  $("q-options").replaceChildren(...q.options.map((text, i) => optionContent(el("li", { className: "option" }), i, text)));
  $("answered-count").textContent = String(state.answered_count);
  $("answered-total").textContent = String(state.players.length);
  countdown.start(state.remaining_ms);
}

function renderReveal(state) {
  const q = state.question;
  const reveal = state.reveal;
  const total = reveal.distribution.reduce((a, b) => a + b, 0) || 1;
  $("r-progress").textContent = progressText(state);
  $("r-text").textContent = q.text;
  $("r-options").replaceChildren(
    ...q.options.map((text, i) => {
      const item = optionContent(el("li", { className: "option" }), i, text);
      const count = reveal.distribution[i];
      const bar = el("span", { className: "bar" });
      // Through the CSSOM, not a style attribute: the Content-Security-Policy refuses inline styles.
      bar.style.setProperty("--share", String(count / total));
      item.append(bar, el("span", { text: `${count}`, className: "count", attrs: { "aria-label": `${count} answers` } }));
      if (i === reveal.correct_index) {
        item.classList.add("correct");
        item.prepend(el("span", { text: "✔ Correct", className: "correct-mark" }));
      } else item.classList.add("wrong");
      return item;
    }),
  );
  $("r-explanation").textContent = reveal.explanation;
  $("r-source").textContent = reveal.source ? `Source: ${reveal.source}` : "";
  const voided = state.voided.includes(state.question_index);
  $("crowd-marker").hidden = !reveal.crowd_disagrees || voided;
  $("voided-note").hidden = !voided;
  const voidButton = $("void-btn");
  voidButton.hidden = voided;
  if (voidButton.dataset.armed !== String(state.question_index)) voidButton.textContent = "Void this question";
}

function renderLeaderboard(state) {
  renderBoard($("leaderboard"), state.players);
  $("next-btn").textContent = state.question_index + 1 < state.question_count ? "Next question" : "Final results";
}

function renderFinished(state) {
  const top = [...state.players].sort((a, b) => a.rank - b.rank);
  $("podium").replaceChildren(
    ...top.slice(0, 3).map((p) => {
      const item = el("li", { className: `podium-${p.rank}` });
      item.append(el("span", { text: p.nickname, className: "nick" }), el("span", { text: `${p.score} pts`, className: "score" }));
      return item;
    }),
  );
  renderBoard($("final-board"), state.players, 100);
}
