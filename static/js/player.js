import { $, Countdown, LETTERS, RoomSocket, el, optionContent, progressText, showPhase } from "./room.js";

const root = $("player");
const code = root.dataset.code;
const storageKey = `quizgate.player.${code}`;
const countdown = new Countdown($("timer"), $("timer-live"));
countdown.onExpired = () => socket.sync();
let state = null;
let me = null;
let reportedFor = new Set();

const socket = new RoomSocket(code, {
  onOpen: () => {
    const token = localStorage.getItem(storageKey);
    if (token) socket.send({ type: "resume", token });
    else showPhase("join");
  },
  onStatus: (text) => ($("conn-status").textContent = text),
  onMessage: handle,
});

function handle(message) {
  switch (message.type) {
    case "joined":
      localStorage.setItem(storageKey, message.token);
      me = message.player;
      $("me").textContent = me.nickname;
      $("me").hidden = false;
      hideError();
      break;
    case "state":
      render(message);
      break;
    case "answered":
      if (state) state.you = { ...state.you, answered: true, option: message.option };
      renderLockedIn();
      break;
    case "reported":
      reportedFor.add(message.question);
      $("report-form").hidden = true;
      $("report-done").hidden = false;
      break;
    case "error":
      handleError(message);
      break;
  }
}

function handleError(message) {
  if (message.code === "removed" || message.code === "bad_token") {
    localStorage.removeItem(storageKey);
    if (message.code === "removed") {
      socket.stop();
      $("gone-title").textContent = "You were removed from this game";
      $("gone-text").textContent = message.message;
      showPhase("gone");
      return;
    }
    showPhase("join");
  }
  showError(message.message);
}

function showError(text) {
  const box = $("player-error");
  box.textContent = text;
  box.hidden = false;
}

function hideError() {
  $("player-error").hidden = true;
}

$("join-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const nickname = $("nickname").value.trim();
  if (!nickname) return showError("Choose a nickname of 1 to 20 characters.");
  if (!socket.send({ type: "join", nickname })) showError("Not connected yet — try again in a moment.");
});

$("report-form").addEventListener("submit", (event) => {
  event.preventDefault();
  socket.send({ type: "report", question: state.question_index, text: $("report-text").value });
});

document.addEventListener("keydown", (event) => {
  if (!state || state.phase !== "question" || state.you?.answered) return;
  const index = Number(event.key) - 1;
  if (index >= 0 && index < state.question.options.length) answer(index);
});

function answer(index) {
  if (socket.send({ type: "answer", question: state.question_index, option: index })) {
    for (const button of $("q-options").querySelectorAll("button")) button.disabled = true;
  }
}

function render(next) {
  const previousIndex = state?.question_index;
  state = next;
  hideError();
  if (state.phase !== "question") countdown.stop();
  showPhase(state.phase);
  if (state.phase === "lobby") $("lobby-count").textContent = `${state.players.length} player${state.players.length === 1 ? "" : "s"} in the game.`;
  if (state.phase === "question") renderQuestion(previousIndex !== state.question_index);
  if (state.phase === "reveal") renderReveal();
  if (state.phase === "leaderboard") renderStanding($("lb-rank"), $("lb-score"));
  if (state.phase === "finished") {
    const you = state.you;
    $("final-rank").textContent = `You finished #${you.rank} of ${state.players.length} with ${you.score} points.`;
  }
}

function renderQuestion(isNew) {
  const q = state.question;
  $("q-progress").textContent = progressText(state);
  $("q-text").textContent = q.text;
  if (isNew || !$("q-options").children.length) {
    $("q-options").replaceChildren(
      ...q.options.map((text, i) => {
        const button = optionContent(el("button", { className: "option", attrs: { type: "button" } }), i, text);
        button.addEventListener("click", () => answer(i));
        return button;
      }),
    );
    countdown.start(state.remaining_ms);
  }
  renderLockedIn();
}

function renderLockedIn() {
  const answered = state?.you?.answered;
  for (const button of $("q-options").querySelectorAll("button")) {
    button.disabled = Boolean(answered);
    button.classList.toggle("chosen", answered && Number(button.className.match(/opt-(\d)/)[1]) === state.you.option);
  }
  $("locked-in").hidden = !answered;
  if (answered) $("locked-in").textContent = `Answer ${LETTERS[state.you.option]} locked in. Waiting for the others…`;
}

function renderReveal() {
  const reveal = state.reveal;
  const mine = reveal.results[String(state.you.id)];
  const verdict = $("verdict");
  if (state.voided.includes(state.question_index)) {
    verdict.textContent = "Voided by the host — no points for this question";
    verdict.className = "verdict missed";
  } else if (!mine) {
    verdict.textContent = "No answer this time";
    verdict.className = "verdict missed";
  } else if (mine.correct) {
    verdict.textContent = `Correct! +${mine.points}`;
    verdict.className = "verdict right";
  } else {
    verdict.textContent = "Not this time";
    verdict.className = "verdict wrong";
  }
  $("r-text").textContent = state.question.text;
  $("r-answer").textContent = `${LETTERS[reveal.correct_index]} — ${state.question.options[reveal.correct_index]}`;
  $("r-explanation").textContent = reveal.explanation;
  const reported = reportedFor.has(state.question_index);
  $("report-form").hidden = reported;
  $("report-done").hidden = !reported;
  if (!reported) $("report-text").value = "";
}

function renderStanding(rankNode, scoreNode) {
  const you = state.you;
  rankNode.textContent = `You are #${you.rank} of ${state.players.length}`;
  scoreNode.textContent = `${you.score} points`;
}
