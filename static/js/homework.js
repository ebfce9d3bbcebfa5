// A homework player's page: join, open each question (its clock starts then), answer it, resume after a reload.
// Every request is a POST with the CSRF token from the csrftoken cookie; the player's place lives on the server.
// The question, its picture, its countdown, the verdict and the answer given are drawn by the live phone's code
// (room.js, picture.js, reveal.js, kinds.js): homework differs only in whose clock runs, the player's own.

import { choices, kindOf } from "./kinds.js";
import { showPicture } from "./picture.js";
import { showGiven, showVerdict } from "./reveal.js";
import { Countdown, progressText } from "./room.js";
import { $, el, hideError, showError, showPhase } from "./ui.js";

const root = $("homework");
const code = root.dataset.code;
const api = root.dataset.api;
const tokenKey = `quizgate.homework.${code}`;
let token = localStorage.getItem(tokenKey);
let state = null;
const countdown = new Countdown($("timer"), $("timer-live"), $("countdown-bar"));
// The player's own time ran out: the server moves them on to the next question.
countdown.onExpired = () => refresh();
let deadlineTimer = null;

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

async function post(path, body) {
  const response = await fetch(api + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify({ token, ...body }),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({ error: gettext("That did not work.") }));
  if (!response.ok) {
    const error = new Error(data.error || gettext("That did not work."));
    error.code = data.code;
    throw error;
  }
  return data;
}

function fail(error) {
  if (error.code === "bad_token") {
    localStorage.removeItem(tokenKey);
    token = null;
    showPhase("join");
  }
  showError($("hw-error"), error.message);
}

function scoreText(score) {
  return interpolate(gettext("Your score: %s"), [score]);
}

function render(next) {
  state = next;
  countdown.stop();
  clearTimeout(deadlineTimer);
  hideError($("hw-error"));
  $("hw-me").hidden = false;
  $("hw-me").textContent = state.nickname;
  if (state.question) return showQuestion(state.question);
  $("hw-review").hidden = true;
  if (state.finished || !state.open) {
    showPhase(state.finished ? "finished" : "closed");
    $("final-score").textContent = state.score === undefined ? "" : scoreText(state.score);
    $("closed-score").textContent = $("final-score").textContent;
    $("final-later").hidden = state.score !== undefined;
    showAnswers(state.answers);
    // The right answers promised for after the deadline: drawn when it comes, without a reload (asked again each
    // second after it, should this browser's clock run ahead of the server's).
    const wait = Math.max(Date.parse(state.deadline) - Date.now(), 0) + 1000;
    if (state.answers === undefined && wait < 2 ** 31) deadlineTimer = setTimeout(refresh, wait);
    return;
  }
  showPhase("ready");
  $("ready-title").textContent = progressText(state);
  $("open-question").focus();
}

function showQuestion(q) {
  showPhase("question");
  $("q-progress").textContent = progressText(q);
  $("q-text").textContent = q.text;
  showPicture($("q-picture"), q.image);
  let answered = false;
  kindOf(q).playerControls(q, $("q-options"), async (given) => {
    if (answered) return;
    answered = true;
    try {
      drawVerdict(await post("answer", { question: q.index, ...given }));
    } catch (error) {
      answered = false;
      fail(error);
      if (error.code === "too_late" || error.code === "already_answered") refresh();
    }
  });
  countdown.start(q.remaining_ms, q.window_ms);
}

// The verdict after each question (when the host chose so), as the live phone draws its reveal.
function drawVerdict(reply) {
  countdown.stop();
  const q = state.question;
  // The next question's number and the player's place come from the server (a reload draws the same).
  if (!reply.verdict) return refresh();
  showPhase("verdict");
  const v = reply.verdict;
  const mine = { option: reply.given, correct: v.correct, points: v.points };
  $("v-title").textContent = progressText(q);
  showVerdict($("verdict"), q, v.reveal, mine);
  showGiven($("v-mine"), q, v.reveal, mine);
  $("v-points").textContent = interpolate(gettext("%(points)s points · total %(score)s"), { points: v.points, score: reply.score }, true);
  $("v-answer").textContent = kindOf(q).answerText(q, v.reveal);
  $("v-explanation").textContent = v.explanation;
  $("go-next").textContent = reply.finished ? gettext("See my score") : gettext("Next question");
  $("go-next").focus();
}

// After the deadline (or after each question, if the host chose so): each question, the player's answer and
// the right one, drawn by its kind as the live phone draws a reveal.
function showAnswers(answers) {
  if (!answers?.length) return;
  const items = answers.map((told) => {
    const q = told.question;
    const kind = kindOf(q);
    const item = el("li", { className: "card hw-answer" });
    item.append(el("p", { text: progressText(q), className: "q-progress" }), el("h3", { text: q.text }));
    const verdict = el("p");
    const given = told.given ?? null;
    showVerdict(verdict, q, told.reveal, given === null ? null : { option: given, correct: told.correct, points: told.points });
    item.append(verdict);
    if (given !== null) {
      const option = (i) => `${"ABCDEF"[i]} — ${choices(q)[i]}`;
      let shown = kind.givenText(q, given);
      if (kind.showsOption && choices(q)?.[given] !== undefined) shown = option(given);
      else if (q.kind === "multi") shown = given.map(option).join("; ");
      item.append(el("p", { text: `${gettext("Your answer")}: ${shown}`, className: "hw-given" }));
    }
    const right = el("p", { className: "right-answer" });
    right.append(`${gettext("Answer:")} `, el("strong", { text: kind.answerText(q, told.reveal) }));
    item.append(right);
    if (told.explanation) item.append(el("p", { text: told.explanation, className: "explanation" }));
    return item;
  });
  $("hw-answers").replaceChildren(...items);
  $("hw-review").hidden = false;
}

async function refresh() {
  try {
    render(await post("state", {}));
  } catch (error) {
    fail(error);
  }
}

$("join-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const joined = await post("join", { nickname: $("nickname").value });
    token = joined.token;
    localStorage.setItem(tokenKey, token);
    render(joined.state);
  } catch (error) {
    fail(error);
  }
});

$("open-question").addEventListener("click", async () => {
  try {
    const q = await post("start", { question: state.question_index });
    state = { ...state, question: q };
    showQuestion(q);
  } catch (error) {
    fail(error);
    refresh();
  }
});

$("go-next").addEventListener("click", refresh);

if (token) refresh();
else showPhase("join");
