import { Countdown, Reading, endNote, ordinal, progressText, renderBoard, renderTeamBoard, roomSocket, teamName } from "./room.js";
import { $, el, icon, phaseRenderer, showError } from "./ui.js";
import { showPicture } from "./picture.js";
import { kindOf } from "./kinds.js";
import { HostSound } from "./sound.js";

const root = $("host");
const code = root.dataset.code;
const token = root.dataset.token;
const countdown = new Countdown($("timer"), $("timer-live"), $("countdown-bar"));
const reading = new Reading($("q-options"), $("q-reading"));
countdown.onExpired = () => socket.sync();
const sound = new HostSound(root.dataset.sounds, { toggle: $("sound-toggle"), volume: $("sound-volume"), note: $("sound-note") });
countdown.onSecond = (left) => sound.second(left);
let state = null;
// The ranks as each question opened (question index -> player id -> rank), so the leaderboard after it shows
// who moved up. A host page opened at a leaderboard has none for that question and shows no moves.
const ranksAtQuestion = new Map();
const LEADERBOARD_PLACES = 5;
const FINAL_PLACES = 10; // under the podium; the CSV has everyone
// The lobby names the newest arrivals only: 2,000 chips would fill the projector and take seconds to draw.
const LOBBY_NEWEST = 20; // two columns of ten fit the projector at 1366x768

const socket = roomSocket(code, {
  onOpen: () => socket.send({ type: "host", token }),
  onStatus: (text) => ($("conn-status").textContent = text),
  onMessage: (message) => {
    if (message.type === "state") render(message);
    else if (message.type === "answers") {
      updateAnswered(message);
      sound.play("answer");
    }
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
    button.textContent = gettext("Confirm: void it (no points for anyone)");
    return;
  }
  socket.send({ type: "void", index: state.question_index });
});
// A word of an open question's cloud or a typed answer, hidden with one click (static/js/kinds.js raises the event).
$("r-options").addEventListener("hide-word", (event) => socket.send({ type: "hide_word", word: event.detail }));
// An open question's answers as a word cloud or as a list with counts: the host's choice, kept by this browser.
const VIEW_KEY = "quizgate.open.view";
const openView = () => (localStorage.getItem(VIEW_KEY) === "list" ? "list" : "cloud");
$("open-view-btn").addEventListener("click", () => {
  localStorage.setItem(VIEW_KEY, openView() === "list" ? "cloud" : "list");
  if (state?.phase === "reveal") renderReveal(state);
  $("open-view-btn").focus();
});
$("lock-room").addEventListener("change", (event) => socket.send({ type: "lock", locked: event.target.checked }));
$("no-speed-bonus").addEventListener("change", (event) => socket.send({ type: "speed_bonus", no_speed_bonus: event.target.checked }));
$("reading-seconds").addEventListener("change", (event) => socket.send({ type: "reading", seconds: Number(event.target.value) }));
$("team-talk-seconds")?.addEventListener("change", (event) => socket.send({ type: "team_talk", seconds: Number(event.target.value) }));

// Extra time (accessibility mode): a player's time (x1, x1.5, x2) and their "I need more time" request, from the
// template the page renders (its texts are translated there). The Extra time panel (lobby and game) has both; a
// lobby chip only the request, so twenty chips fit the projector.
function timeControl(player, { select: withSelect = true } = {}) {
  const control = $("time-control").content.firstElementChild.cloneNode(true);
  const percent = state.extra_time[String(player.id)] || 100;
  const select = control.querySelector(".time-select");
  if (withSelect) {
    select.value = String(percent);
    select.setAttribute("aria-label", `${select.getAttribute("aria-label")}: ${player.nickname}`);
    select.dataset.focusKey = `time-${player.id}`;
    select.addEventListener("change", () => socket.send({ type: "extra_time", player: player.id, percent: Number(select.value) }));
  } else {
    select.remove();
  }
  const request = control.querySelector(".time-request");
  request.hidden = !state.time_requests.includes(player.id);
  for (const button of request.querySelectorAll("button")) {
    button.setAttribute("aria-label", `${button.textContent}: ${player.nickname}`);
    button.dataset.focusKey = `${button.dataset.percent || "decline"}-${player.id}-${withSelect ? "panel" : "chip"}`;
    button.addEventListener("click", () =>
      socket.send(
        "decline" in button.dataset
          ? { type: "decline_time", player: player.id }
          : { type: "extra_time", player: player.id, percent: Number(button.dataset.percent) },
      ),
    );
  }
  return control;
}

// Every state re-renders the lists: keep the keyboard's place in them.
function keepingFocus(render) {
  const key = document.activeElement?.dataset?.focusKey;
  render();
  if (key) document.querySelector(`[data-focus-key="${key}"]`)?.focus();
}

// The frame names a bounded set of players (the oldest requests first, the top, the newest, those with extra
// time); the totals count everyone, and the host's players page lists them all.
function renderTimePanel(state) {
  const panel = $("time-panel");
  panel.hidden = state.phase === "finished";
  const requests = state.time_request_count ?? state.time_requests.length;
  $("time-badge").hidden = requests === 0;
  $("time-badge").textContent = `(${requests})`;
  // During the game a request opens the panel; in the lobby the chip shows it, and the panel would cover the chips.
  if (requests && !panel.hidden && state.phase !== "lobby") panel.open = true;
  if (panel.hidden || !panel.open) return;
  const asking = state.players.filter((p) => state.time_requests.includes(p.id));
  const others = state.players.filter((p) => !state.time_requests.includes(p.id));
  const all = el("li", { className: "time-all" });
  all.append(el("a", { text: gettext("All players"), attrs: { href: root.dataset.playersUrl, target: "_blank", rel: "noopener" } }));
  keepingFocus(() =>
    $("time-list").replaceChildren(
      ...[...asking, ...others].map((p) => {
        const item = el("li");
        item.append(el("span", { text: p.nickname, className: "nick" }), timeControl(p));
        return item;
      }),
      all,
    ),
  );
}
$("time-panel").addEventListener("toggle", () => state && renderTimePanel(state));

// Full screen for the projector; F toggles it too.
const fullscreenButton = $("fullscreen-btn");
function toggleFullscreen() {
  if (document.fullscreenElement) document.exitFullscreen();
  else document.documentElement.requestFullscreen?.().catch(() => {});
}
fullscreenButton.addEventListener("click", toggleFullscreen);
fullscreenButton.hidden = !document.fullscreenEnabled;
document.addEventListener("fullscreenchange", () => {
  fullscreenButton.textContent = document.fullscreenElement ? gettext("Leave full screen") : gettext("Full screen");
});

// The host's keys: Space (or Enter, or the right arrow) moves the game on, as the phase's main button does;
// F is full screen. A key typed into a control is the control's.
const NEXT_BUTTON = { lobby: "start-btn", question: "close-btn", reveal: "to-leaderboard-btn", leaderboard: "next-btn" };
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || !state) return;
  if (event.target.closest("button, a, input, textarea, select, summary, label")) return;
  if (event.key === "f" || event.key === "F") {
    toggleFullscreen();
  } else if (event.key === "m" || event.key === "M") {
    sound.flip();
  } else if (event.key === " " || event.key === "Enter" || event.key === "ArrowRight") {
    event.preventDefault();
    const button = $(NEXT_BUTTON[state.phase] || "");
    if (button && !button.disabled && !button.hidden) button.click();
  }
});

const renderPhase = phaseRenderer({
  lobby: renderLobby,
  question: renderQuestion,
  reveal: renderReveal,
  leaderboard: renderLeaderboard,
  finished: renderFinished,
});

function render(next) {
  sound.phaseChanged(next.phase, state?.phase);
  state = next;
  if (state.phase !== "question") {
    countdown.stop();
    reading.stop();
  }
  $("round-title").textContent = state.title;
  if (state.phase !== "question" && state.phase !== "reveal") $("picture-unseen").hidden = true;
  // The top bar first: the lobby's list fits the room the bar leaves it.
  renderTimePanel(state);
  renderWriting(state);
  renderPhase(state);
}

// A round still being written while the game plays: how many questions are ready, the wait for the next one,
// and why a game ended early.
function renderWriting(state) {
  const note = $("writing-note");
  const n = state.question_count;
  let text = endNote(state);
  if (!text && state.waiting) {
    text = interpolate(gettext("Next question is still being checked… (%s ready)"), [n]);
  } else if (!text && state.writing && state.phase !== "finished") {
    text = interpolate(ngettext("%s question ready, more are being checked", "%s questions ready, more are being checked", n), [n]);
  }
  note.textContent = text;
  note.hidden = !text;
  // The round's check grows as its questions pass: the badge says what it is now, not when the room opened.
  if (state.check_label) {
    $("check-status").textContent = state.check_label;
    $("check-status").dataset.status = state.check_status;
  }
}

// The checker reads a question's words only: a picture question of a checked round says so, as the editor does.
const CHECKED = new Set(["checked", "partly_unverified", "rejected", "doubtful_kept"]);
function renderPictureUnseen(state) {
  $("picture-unseen").hidden = !(state.question?.image && CHECKED.has(state.check_status));
}

function updateAnswered(message) {
  if (!state || state.phase !== "question" || state.question_index !== message.question_index) return;
  state.answered_count = Math.max(state.answered_count, message.answered_count);
  $("answered-count").textContent = String(state.answered_count);
}

function renderLobby(state) {
  const n = state.player_count;
  $("player-count").textContent = n === 0 ? gettext("No players yet") : interpolate(ngettext("%s player", "%s players", n), [n]);
  $("lock-room").checked = state.locked;
  $("no-speed-bonus").checked = state.no_speed_bonus;
  $("reading-seconds").value = String(state.reading_seconds ?? 0);
  if ($("team-talk-seconds") && state.teams) $("team-talk-seconds").value = String(state.team_talk_seconds ?? 0);
  $("start-btn").disabled = n === 0;
  // The players come in join order: the newest last, shown first; a player waiting for an answer to "I need
  // more time" is listed first, across the list's width, however many joined after them, so the host can answer
  // (a list too long for its box loses its last chips, never a request).
  const waiting = state.players.filter((p) => state.time_requests.includes(p.id));
  const newest = state.players.slice(-LOBBY_NEWEST).reverse().filter((p) => !state.time_requests.includes(p.id));
  const shown = [...waiting, ...newest];
  keepingFocus(() =>
    $("player-list").replaceChildren(
      ...shown.map((p) => {
        const item = el("li", { className: state.time_requests.includes(p.id) ? "asking" : "" });
        const remove = el("button", {
          text: gettext("Remove"),
          className: "btn btn-small",
          attrs: { type: "button", "aria-label": interpolate(gettext("Remove %s"), [p.nickname]) },
        });
        remove.addEventListener("click", () => socket.send({ type: "remove", player: p.id }));
        const percent = state.extra_time[String(p.id)];
        const given = percent
          ? [el("span", { text: percent === 150 ? "×1.5" : "×2", className: "time-given", attrs: { title: gettext("Extra time") } })]
          : [];
        const asks = state.time_requests.includes(p.id) ? [timeControl(p, { select: false })] : [];

        // Removed and blocked: that phone cannot join this room again under another name.
        const blockName = interpolate(gettext("Remove and block %s"), [p.nickname]);
        const block = el("button", { className: "btn btn-small block-player", attrs: { type: "button", "aria-label": blockName, title: blockName } });
        block.append(icon("block"));
        block.addEventListener("click", () => socket.send({ type: "remove", player: p.id, block: true }));
        item.append(el("span", { text: p.nickname, className: "nick" }), ...given, ...asks, remove, block);
        return item;
      }),
    ),
  );
  renderLobbyTeams(state);
  fitPlayerList(n);
}

// A room with teams: each team, its size and its newest members, beside the players' chips.
function renderLobbyTeams(state) {
  const list = $("team-list");
  list.hidden = !state.teams;
  if (!state.teams) return list.replaceChildren();
  const members = new Map(state.teams.map((team) => [team.id, []]));
  for (const p of state.players) members.get(p.team)?.push(p.nickname);
  list.replaceChildren(
    ...state.teams.map((team) => {
      const item = el("li", { className: "team-row" });
      item.dataset.colour = team.colour;
      item.append(
        el("span", { text: teamName(team), className: "nick" }),
        el("span", { text: interpolate(ngettext("%s player", "%s players", team.size), [team.size]), className: "team-size" }),
        el("span", { text: members.get(team.id).slice(-4).join(", "), className: "team-members" }),
      );
      return item;
    }),
  );
}

// The names drawn must fit the list's box: smaller chips first, then the chips that still do not fit are taken
// out and counted, so no name is cut off unseen by the list's edge.
function fitPlayerList(total) {
  const list = $("player-list");
  const more = $("player-more");
  // By the chips' own boxes: scrollHeight is rounded, and a row cut by a pixel and a half would pass it.
  const overflowing = () => {
    const bottom = list.getBoundingClientRect().bottom + 0.5;
    return [...list.children].some((chip) => chip.getBoundingClientRect().bottom > bottom);
  };
  const count = () => {
    const left = total - list.children.length;
    $("player-more-text").textContent = left > 0 ? interpolate(ngettext("…and %s more player", "…and %s more players", left), [left]) : "";
    more.hidden = left <= 0;
  };
  delete list.dataset.dense;
  count();
  if (overflowing()) list.dataset.dense = "";
  while (list.children.length > 1 && overflowing()) {
    list.lastElementChild.remove();
    count(); // the line under the list takes its height too
  }
}
// Refit whenever the list's box changes: the window, the top bar growing a line, the line under the list.
let fittedSize = "";
new ResizeObserver(([entry]) => {
  const size = `${Math.round(entry.contentRect.width)}x${Math.round(entry.contentRect.height)}`;
  if (size === fittedSize || state?.phase !== "lobby") return;
  fittedSize = size;
  renderLobby(state);
}).observe($("player-list"));

// Long texts get smaller type (the stylesheet reads these data attributes), so that nothing is cut off: a
// question of up to 300 characters and six options of up to 120 fit the screen at 1366x768.
function sizeForText(section, question) {
  const longestOption = Math.max(0, ...(question.options || question.items || []).map((text) => text.length));
  section.dataset.question = question.text.length > 260 ? "long" : "";
  section.dataset.options = longestOption > 90 ? "longest" : longestOption > 45 ? "long" : "";
}

function renderQuestion(state) {
  const q = state.question;
  sizeForText($("phase-question"), q);
  $("q-progress").textContent = progressText(state);
  $("q-text").textContent = q.text;
  showPicture($("q-picture"), q.image);
  renderPictureUnseen(state);
  kindOf(q).hostQuestion(q, $("q-options"));
  // A slide: no clock and no answers to count; the main button (and Space) moves on.
  const slide = kindOf(q).timed === false;
  $("phase-question").dataset.slide = slide ? "true" : "";
  $("close-btn").textContent = slide ? gettext("Next") : gettext("Close now");
  $("answered-count").textContent = String(state.answered_count);
  $("answered-total").textContent = String(state.player_count);
  // Everyone tied (before the first question, or while nobody has scored) is no ranking to move from: the
  // leaderboard after it shows no arrows rather than a drop for everyone but the leader.
  const ranked = new Set(state.players.map((p) => p.score)).size > 1;
  if (!ranksAtQuestion.has(state.question_index)) {
    ranksAtQuestion.set(state.question_index, ranked ? new Map(state.players.map((p) => [p.id, p.rank])) : null);
  }
  $("extra-time-note").hidden = (state.extra_time_count ?? Object.keys(state.extra_time).length) === 0;
  // With a moment to read, the options and the clock wait for it (each fresher frame says how long is left).
  countdown.stop();
  $("timer").textContent = "";
  if (!slide) reading.start(state.reading_ms, () => countdown.start(state.remaining_ms, state.timer_seconds * 1000), state.talk_ms);
}

function renderReveal(state) {
  const q = state.question;
  sizeForText($("phase-reveal"), q);
  const reveal = state.reveal;
  $("r-progress").textContent = progressText(state);
  $("r-text").textContent = q.text;
  showPicture($("r-picture"), q.image);
  renderPictureUnseen(state);
  $("r-options").dataset.kind = q.kind;
  const open = q.kind === "open";
  $("r-options").dataset.view = open ? openView() : "";
  $("open-view-btn").hidden = !open;
  $("open-view-btn").textContent = openView() === "list" ? gettext("Show as a word cloud") : gettext("Show as a list");
  kindOf(q).hostReveal(q, reveal, $("r-options"));
  $("r-explanation").textContent = reveal.explanation;
  const notes = reveal.explanation.length + reveal.source.length;
  $("phase-reveal").dataset.explanation = notes > 600 ? "longest" : notes > 240 ? "long" : "";
  $("r-source").textContent = reveal.source ? interpolate(gettext("Source: %s"), [reveal.source]) : "";
  const voided = state.voided.includes(state.question_index);
  $("crowd-marker").hidden = !reveal.crowd_disagrees || voided;
  $("voided-note").hidden = !voided;
  const voidButton = $("void-btn");
  voidButton.hidden = voided;
  if (voidButton.dataset.armed !== String(state.question_index)) voidButton.textContent = gettext("Void this question");
}

// The list of an open question's answers fits its box (static/js/kinds.js): drawn again when the box changes.
let listSize = "";
new ResizeObserver(([entry]) => {
  const size = `${Math.round(entry.contentRect.width)}x${Math.round(entry.contentRect.height)}`;
  if (size === listSize) return;
  listSize = size;
  if (state?.phase === "reveal" && $("r-options").dataset.view === "list") renderReveal(state);
}).observe($("r-options"));

function renderLeaderboard(state) {
  const ranksBefore = ranksAtQuestion.get(state.question_index) ?? null;
  // With teams the team board comes first; the players' board under it keeps its top three.
  $("team-board").hidden = !state.teams;
  $("team-board-title").hidden = !state.teams;
  if (state.teams) renderTeamBoard($("team-board"), state.teams);
  renderBoard($("leaderboard"), state.players, { limit: state.teams ? 3 : LEADERBOARD_PLACES, ranksBefore });
  const more = state.question_index + 1 < state.question_count || state.writing;
  $("next-btn").textContent = more ? gettext("Next question") : gettext("Final results");
  $("next-btn").disabled = Boolean(state.waiting);
}

function renderFinished(state) {
  const top = [...state.players].sort((a, b) => a.rank - b.rank);
  // With teams the podium is the teams'; the players' board under it.
  const steps = state.teams
    ? [...state.teams].sort((a, b) => a.rank - b.rank).map((team) => ({ ...team, nickname: teamName(team) }))
    : top;
  $("podium").dataset.teams = state.teams ? "true" : "false";
  $("podium").replaceChildren(
    ...steps.slice(0, 3).map((p, i) => {
      // Tied players share a rank; the podium's steps are the first three rows.
      const item = el("li", { className: `podium-${i + 1}` });
      item.append(
        el("span", { text: String(p.rank), className: "place", attrs: { "aria-label": interpolate(gettext("%s place"), [ordinal(p.rank)]) } }),
        el("span", { text: p.nickname, className: "nick" }),
        el("span", { text: interpolate(ngettext("%s point", "%s points", p.score), [p.score]), className: "score" }),
      );
      return item;
    }),
  );
  renderBoard($("final-board"), top, { limit: state.teams ? 5 : FINAL_PLACES });
}
