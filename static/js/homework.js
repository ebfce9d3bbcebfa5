// A homework player's page: join, open each question (its clock starts then), answer it, resume after a reload.
// Every request is a POST with the CSRF token from the csrftoken cookie; the player's place lives on the server.

import { choices, kindOf } from "./kinds.js";
import { $, el, hideError, showError, showPhase } from "./ui.js";
import { verdictOf } from "./verdicts.js";

const root = $("homework");
const code = root.dataset.code;
const api = root.dataset.api;
const tokenKey = `quizgate.homework.${code}`;
let token = localStorage.getItem(tokenKey);
let state = null;
let ticker = null;

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

function progressText(index, count) {
  return interpolate(gettext("Question %(number)s of %(count)s"), { number: index + 1, count }, true);
}

function scoreText(score) {
  return interpolate(gettext("Your score: %s"), [score]);
}

function render(next) {
  state = next;
  clearInterval(ticker);
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
    return;
  }
  showPhase("ready");
  $("ready-title").textContent = progressText(state.question_index, state.question_count);
  $("open-question").focus();
}

function showQuestion(q) {
  showPhase("question");
  $("q-progress").textContent = progressText(q.index, state.question_count);
  $("q-text").textContent = q.text;
  const picture = $("q-picture");
  picture.hidden = !q.image;
  picture.replaceChildren(...(q.image ? [el("img", { attrs: { src: q.image.url, alt: q.image.alt } })] : []));
  let answered = false;
  kindOf(q).playerControls(q, $("q-options"), async (given) => {
    if (answered) return;
    answered = true;
    try {
      showVerdict(await post("answer", { question: q.index, ...given }));
    } catch (error) {
      answered = false;
      fail(error);
      if (error.code === "too_late" || error.code === "already_answered") refresh();
    }
  });
  const ends = Date.now() + q.remaining_ms;
  const tick = () => {
    const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
    $("timer").textContent = interpolate(ngettext("%s second left", "%s seconds left", left), [left]);
    if (left <= 0) {
      clearInterval(ticker);
      refresh();
    }
  };
  tick();
  ticker = setInterval(tick, 250);
}

function showVerdict(reply) {
  clearInterval(ticker);
  state = { ...state, question: null, question_index: reply.next, finished: reply.finished };
  if (!reply.verdict) return reply.finished ? refresh() : render(state);
  showPhase("verdict");
  const v = reply.verdict;
  $("v-title").textContent = progressText(v.index, state.question_count);
  const words = verdictOf({ scored: v.correct !== null, correct: v.correct, points: v.points });
  $("verdict").textContent = words.text;
  $("verdict").className = `verdict ${words.tone}`;
  $("v-points").textContent = interpolate(gettext("%(points)s points · total %(score)s"), { points: v.points, score: reply.score }, true);
  $("v-answer-line").hidden = !v.answer;
  $("v-answer").textContent = v.answer;
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
    item.append(
      el("p", { text: progressText(q.index, state.question_count), className: "q-progress" }),
      el("h3", { text: q.text }),
    );
    if (told.given === null || told.given === undefined) {
      item.append(el("p", { text: gettext("No answer this time"), className: "verdict missed" }));
    } else {
      const words = verdictOf({ scored: told.correct !== null, correct: told.correct, points: told.points });
      item.append(el("p", { text: words.text, className: `verdict ${words.tone}` }));
      const option = (i) => `${"ABCDEF"[i]} — ${choices(q)[i]}`;
      let shown = kind.givenText(q, told.given);
      if (kind.showsOption && choices(q)?.[told.given] !== undefined) shown = option(told.given);
      else if (q.kind === "multi") shown = told.given.map(option).join("; ");
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

$("go-next").addEventListener("click", () => (state.finished ? refresh() : render(state)));

if (token) refresh();
else showPhase("join");
