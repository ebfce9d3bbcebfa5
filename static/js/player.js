import { Countdown, Reading, endNote, ordinal, progressText, roomSocket, teamName } from "./room.js";
import { $, el, hideError, phaseRenderer, showError, showPhase } from "./ui.js";
import { showPicture } from "./picture.js";
import { kindOf } from "./kinds.js";
import { showGiven, showVerdict } from "./reveal.js";

const root = $("player");
const code = root.dataset.code;
const storageKey = `quizgate.player.${code}`;
const errorBox = $("player-error");
const countdown = new Countdown($("timer"), $("timer-live"), $("countdown-bar"));
countdown.onExpired = () => socket.sync();
const reading = new Reading($("q-options"), $("q-reading"));
let state = null;
// The answer sent and not yet acknowledged: {question, message}. Sent again when the socket is back (the server
// stores one answer per player and question, so a repeat is harmless), given up on only when its question is over.
let pending = null;
const reportedFor = new Set();
const NICKNAME_MAX = 20; // lobby/rules/nicknames.py; the input's maxlength only stops a pasted essay
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const visibleLength = (text) => [...graphemes.segment(text)].length;

const socket = roomSocket(code, {
  onOpen: () => {
    const token = localStorage.getItem(storageKey);
    if (token) socket.send({ type: "resume", token });
    else showPhase("join");
  },
  onStatus: (text) => ($("conn-status").textContent = text),
  onMessage: handle,
  onError: handleError,
});

function handle(message) {
  switch (message.type) {
    case "joined":
      localStorage.setItem(storageKey, message.token);
      // Kept after a removal too: a join from this browser names its last place, which the host may have blocked.
      localStorage.setItem(`${storageKey}:last`, message.token);
      $("me").textContent = message.player.nickname;
      $("me").hidden = false;
      // A room with friendly names made this name up: the lobby says it is theirs.
      $("lobby-name-text").textContent = message.player.nickname;
      $("lobby-name").hidden = !$("friendly-note");
      $("join-hint").hidden = true;
      hideError(errorBox);
      break;
    case "state":
      render(message);
      settlePending(message);
      break;
    case "answered":
      if (pending?.question === message.question) {
        pending = null;
        hideError(errorBox);
      }
      if (state) state.you = { ...state.you, answered: true, option: message.option };
      renderLockedIn();
      break;
    case "reported":
      reportedFor.add(message.question);
      $("report-form").hidden = true;
      $("report-done").hidden = false;
      break;
  }
}

// What a player can do when the room will not take them.
const JOIN_HINTS = {
  room_full: gettext("Ask the host to remove a player who has left, or to start a second game for the rest of you."),
  room_locked: gettext("Ask the host to unlock the room, then press Join again."),
};

// After a (re)connect's picture: an answer the server holds is done; one it does not, while its question is still
// open, goes again; one whose question closed without it is lost, and the player is told.
function settlePending(picture) {
  if (!pending) return;
  const open = picture.phase === "question" && picture.question_index === pending.question;
  if (open && picture.you?.answered) pending = null;
  else if (open) socket.send(pending.message);
  else {
    pending = null;
    showError(errorBox, gettext("Your answer did not reach the game before the question closed."));
  }
}

// The server's word on the answer in flight: "paused" means it holds it and will store it when its database is
// back; a repeat of one it stored already is an acknowledgement; any other refusal ends it.
function settlePendingError(message) {
  if (!pending || message.code === "paused") return false;
  const answer = pending;
  pending = null;
  if (message.code === "already_answered") {
    socket.send({ type: "sync" }); // stored already (its acknowledgement was lost): a fresh picture shows it
    return answer !== null;
  }
  if (message.code === "unavailable") {
    showError(errorBox, gettext("Your answer could not be saved. Please answer again."));
    for (const control of $("q-options").querySelectorAll("button, input")) control.disabled = false;
    return true;
  }
  return false;
}

function handleError(message) {
  if (settlePendingError(message)) return;
  if (JOIN_HINTS[message.code]) {
    $("join-hint").textContent = JOIN_HINTS[message.code];
    $("join-hint").hidden = false;
  }
  if (message.code === "removed" || message.code === "bad_token" || message.code === "blocked") {
    localStorage.removeItem(storageKey);
    if (message.code === "removed" || message.code === "blocked") {
      socket.stop();
      $("gone-title").textContent = gettext("You were removed from this game");
      $("gone-text").textContent = message.message;
      showPhase("gone");
      return;
    }
    showPhase("join");
  }
  showError(errorBox, message.message);
}

$("join-form")?.addEventListener("submit", (event) => { // absent when the game has finished
  event.preventDefault();
  // A room with friendly names has no nickname field: the server makes a name up.
  const nickname = $("nickname") ? $("nickname").value.trim() : "";
  // As the server counts: what a person sees ("👩🏽‍🚀" is one), not UTF-16 units as maxlength does (7 there).
  if ($("nickname") && (!nickname || visibleLength(nickname) > NICKNAME_MAX)) return showError(errorBox, gettext("Choose a nickname of 1 to 20 characters."));
  const team = $("join-team");
  if (team && !team.value) return showError(errorBox, gettext("Pick your team."));
  const join = { type: "join", nickname, more_time: $("more-time").checked };
  const last = localStorage.getItem(`${storageKey}:last`);
  if (last) join.previous = last;
  if (team) join.team = Number(team.value);
  if (!socket.send(join)) showError(errorBox, gettext("Not connected yet — try again in a moment."));
});

$("report-form").addEventListener("submit", (event) => {
  event.preventDefault();
  socket.send({ type: "report", question: state.question_index, text: $("report-text").value });
});

// Keys 1 to 6 answer a question of options, as they are numbered on the host's screen (not while typing).
document.addEventListener("keydown", (event) => {
  if (!state || state.phase !== "question" || state.you?.answered || event.target.matches?.("input, textarea")) return;
  const fields = kindOf(state.question).keyAnswer(state.question, event.key);
  if (fields) answer(fields);
});

// An answer of the question's kind: {option}, {options}, {text}, {order} or {value}.
function answer(fields) {
  if (reading.pending) return; // the options are not open yet (the server would refuse it too)
  pending = { question: state.question_index, message: { type: "answer", question: state.question_index, ...fields } };
  for (const control of $("q-options").querySelectorAll("button, input")) control.disabled = true;
  if (!socket.send(pending.message)) showError(errorBox, gettext("Connection lost: your answer is sent when it is back."));
}

const renderPhase = phaseRenderer({
  lobby: (state) => {
    $("lobby-count").textContent = interpolate(
      ngettext("%s player in the game.", "%s players in the game.", state.player_count),
      [state.player_count],
    );
    $("no-speed-note").hidden = !(state.no_speed_bonus || state.accuracy_only);
    renderLobbyTeam(state);
  },
  question: renderQuestion,
  reveal: renderReveal,
  leaderboard: (state) => {
    $("lb-rank").textContent = interpolate(gettext("You are #%(rank)s of %(count)s"), { rank: state.you.rank, count: state.player_count }, true);
    $("lb-score").textContent = interpolate(ngettext("%s point", "%s points", state.you.score), [state.you.score]);
    renderTeamPlace($("lb-team"), state);
  },
  finished: renderFinished,
});

function render(next) {
  state = next;
  hideError(errorBox);
  if (state.phase !== "question") {
    countdown.stop();
    reading.stop();
  }
  renderMyTime(state);
  renderPhase(state);
  renderWriting(state);
}

// A round written while it plays: the wait for its next question, and why the game ended early.
function renderWriting(state) {
  const note = $("writing-note");
  let text = endNote(state);
  if (!text && state.waiting && state.phase === "leaderboard") text = gettext("The next question is still being written…");
  note.textContent = text;
  note.hidden = !text;
}

// The player's own time: extra time the host gave them, or their request still waiting for the host.
function renderMyTime(state) {
  const percent = state.you?.time_percent ?? 100;
  const ongoing = state.phase !== "finished";
  $("my-time-given").hidden = !ongoing || percent === 100;
  $("my-time-factor").textContent = `×${percent / 100}`;
  $("my-time-asked").hidden = !ongoing || !state.you?.asks_more_time;
}

function renderQuestion(state, previous) {
  const q = state.question;
  $("q-progress").textContent = progressText(state);
  $("q-text").textContent = q.text;
  showPicture($("q-picture"), q.image);
  const percent = state.you.time_percent ?? 100;
  // The same question again (a sync, a reconnect) keeps its buttons, their focus and the running countdown;
  // extra time given during the question restarts the countdown at the player's new time.
  const moreTime = previous?.phase === "question" && (previous.you.time_percent ?? 100) !== percent;
  if (moreTime && !reading.pending) countdown.start(state.you.remaining_ms ?? state.remaining_ms, (state.timer_seconds * 1000 * percent) / 100);
  const slide = kindOf(q).timed === false;
  $("phase-question").dataset.slide = slide ? "true" : "";
  if (slide) {
    countdown.stop();
    $("timer").textContent = "";
    kindOf(q).playerControls(q, $("q-options"), answer);
  } else if (previous?.question_index !== state.question_index || !$("q-options").children.length) {
    kindOf(q).playerControls(q, $("q-options"), answer);
    // The player's own time: their remaining time and window, extra time included, from when the options appear.
    countdown.stop();
    $("timer").textContent = "";
    const current = state;
    reading.start(
      state.reading_ms,
      () => countdown.start(current.you.remaining_ms ?? current.remaining_ms, (current.timer_seconds * 1000 * percent) / 100),
      state.talk_ms,
    );
  }
  renderLockedIn();
}

function renderLockedIn() {
  const answered = state?.you?.answered;
  if (answered) for (const control of $("q-options").querySelectorAll("button, input")) control.disabled = true;
  if (answered && state.question) kindOf(state.question).markChosen($("q-options"), state.you.option);
  $("locked-in").hidden = !answered;
  if (answered) $("locked-in").textContent = interpolate(gettext("Answer %s locked in. Waiting for the others…"), [kindOf(state.question).givenText(state.question, state.you.option)]);
}

function renderReveal(state) {
  const reveal = state.reveal;
  const q = state.question;
  const kind = kindOf(q);
  const you = state.you;
  const mine = you.result; // the server sends each player their own result, not the room's
  const voided = state.voided.includes(state.question_index);
  const verdict = $("verdict");
  if (voided) {
    verdict.textContent = gettext("Voided by the host — no points for this question");
    verdict.className = "verdict missed";
  } else {
    showVerdict(verdict, q, reveal, mine);
  }
  showGiven($("r-mine"), q, reveal, mine);
  const points = mine && !voided ? mine.points : 0;
  $("r-points").textContent = `+${points}`;
  $("r-total").textContent = String(you.score);
  $("r-rank").textContent = `#${you.rank}`;
  $("r-rank-of").textContent = interpolate(gettext("of %s"), [state.player_count]);
  $("r-text").textContent = state.question.text;
  $("r-answer").textContent = kind.answerText(q, reveal);
  $("r-explanation").textContent = reveal.explanation;
  const reported = reportedFor.has(state.question_index);
  $("report-form").hidden = reported;
  $("report-done").hidden = !reported;
  if (!reported) $("report-text").value = "";
}

function myTeam(state) {
  return state.teams?.find((team) => team.id === state.you?.team) || null;
}

// In the lobby: the player's team and, with named teams, a switch to another one.
function renderLobbyTeam(state) {
  const team = myTeam(state);
  $("lobby-team").hidden = !team;
  if (team) {
    $("lobby-team").textContent = interpolate(gettext("Your team: %s"), [teamName(team)]);
    $("lobby-team").dataset.colour = team.colour;
  }
  const named = state.teams_mode === "named" && !!state.teams;
  $("team-switch").hidden = !named;
  if (!named) return;
  const select = $("switch-team");
  if (document.activeElement !== select) {
    select.replaceChildren(...state.teams.map((t) => el("option", { text: teamName(t), attrs: { value: String(t.id) } })));
    select.value = String(state.you.team ?? "");
  }
}
$("switch-team").addEventListener("change", (event) => socket.send({ type: "team", team: Number(event.target.value) }));

// The team's place among the teams and the player's place within it.
function renderTeamPlace(node, state) {
  const team = myTeam(state);
  node.hidden = !team;
  if (!team) return;
  node.dataset.colour = team.colour;
  node.textContent = interpolate(
    gettext("%(team)s is #%(rank)s of %(teams)s teams with %(score)s points; you are #%(place)s of %(size)s in your team."),
    { team: teamName(team), rank: team.rank, teams: state.teams.length, score: team.score, place: state.you.team_place, size: team.size },
    true,
  );
}

// The podium as the room saw it, and where this player finished.
function renderFinished(state) {
  const you = state.you;
  $("final-rank").textContent = interpolate(
    ngettext("You finished #%(rank)s of %(count)s with %(score)s point.", "You finished #%(rank)s of %(count)s with %(score)s points.", you.score),
    { rank: you.rank, count: state.player_count, score: you.score },
    true,
  );
  renderTeamPlace($("final-team"), state);
  // The room's top places come with every state; this player's own line is `you`.
  const rows = [...state.top].sort((a, b) => a.rank - b.rank).slice(0, 3);
  if (!rows.some((p) => p.id === you.id)) rows.push(you);
  $("p-podium").replaceChildren(
    ...rows.map((p) => {
      const item = el("li", { className: p.id === you.id ? "me-row" : "" });
      item.append(
        el("span", { text: ordinal(p.rank), className: "place" }),
        el("span", { text: p.id === you.id ? interpolate(gettext("%s (you)"), [p.nickname]) : p.nickname, className: "nick" }),
        el("span", { text: interpolate(gettext("%s pts"), [p.score]), className: "score" }),
      );
      return item;
    }),
  );
}
