// The game's pieces shared by the host and player screens: the room's live socket, an option's colour,
// shape and letter, the countdown, the leaderboard.

import { LiveSocket } from "./live.js";
import { el } from "./ui.js";

export const SHAPES = ["▲", "◆", "●", "■", "★", "⬟"];
export const LETTERS = "ABCDEF";
const SYNC_EVERY_MS = 10000;

// The room's socket. onOpen says who the page is (the host's or the player's token); onMessage gets
// every frame but the pause notices, which become the status line.
export function roomSocket(code, { onOpen, onMessage, onError, onStatus }) {
  return new LiveSocket(`/ws/room/${code}/`, {
    onOpen,
    onMessage: (message) => (message.type === "resumed" ? onStatus("") : onMessage(message)),
    // A database outage pauses the game; the server retries what was sent and says when it is back.
    onError: (message) => (message.code === "paused" ? onStatus(message.message) : onError(message)),
    onStatus,
    sequenceOf: (message) => (message.type === "state" ? message.seq : undefined),
    // Ask whether the room moved on without us; the server answers only if it has.
    sync: (live) => live.seq >= 0 && live.send({ type: "sync", seq: live.seq }),
    syncEveryMs: SYNC_EVERY_MS,
  });
}

// An option's shape, letter and text; its index is data (the stylesheet colours it by [data-index]).
export function optionContent(node, index, text) {
  node.append(
    el("span", { text: SHAPES[index], className: "shape", attrs: { "aria-hidden": "true" } }),
    el("span", { text: LETTERS[index], className: "letter" }),
    el("span", { text, className: "option-text" }),
  );
  node.dataset.index = String(index);
  return node;
}

// Counts down from the server's remaining time, measured from when the state arrived (no clock skew). With a
// bar, its --left custom property goes from the share of the question's time still left to 0.
export class Countdown {
  constructor(visual, live, bar = null) {
    this.visual = visual;
    this.live = live;
    this.bar = bar;
    this.timer = null;
  }

  start(remainingMs, totalMs = remainingMs) {
    this.stop();
    const endsAt = performance.now() + remainingMs;
    let lastAnnounced = null;
    const tick = () => {
      const leftMs = Math.max(0, endsAt - performance.now());
      const left = Math.ceil(leftMs / 1000);
      if (left !== this.lastLeft) this.onSecond?.(left);
      this.lastLeft = left;
      this.visual.textContent = String(left);
      this.visual.classList.toggle("urgent", left <= 5);
      this.bar?.style.setProperty("--left", String(totalMs > 0 ? Math.min(1, leftMs / totalMs) : 0));
      if (left !== lastAnnounced && (left % 10 === 0 || left === 5 || left === 3) && left > 0) {
        this.live.textContent = interpolate(ngettext("%s second left", "%s seconds left", left), [left]);
        lastAnnounced = left;
      }
      if (left === 0) {
        this.live.textContent = gettext("Time is up");
        this.stop();
        if (this.onExpired) setTimeout(this.onExpired, 1500);
      }
    };
    tick();
    this.timer = setInterval(tick, 200);
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

// A moment to read (the room's reading_seconds): the question alone, its options hidden and its clock waiting,
// until `state.reading_ms` has passed; then `open` shows the options and starts the clock. One at a time: a new
// question's (or a fresher frame's) moment replaces the one running.
export class Reading {
  constructor(options, note) {
    this.options = options;
    this.note = note;
    this.timer = null;
  }

  get pending() {
    return this.timer !== null;
  }

  // `talkMs` (team talk, counted from now, the reading included): after the reading the options are shown but
  // their controls wait, until the clock starts.
  start(readingMs, open, talkMs = 0) {
    this.stop();
    const now = performance.now();
    const opensAt = now + (readingMs || 0);
    const clockAt = Math.max(opensAt, now + (talkMs || 0));
    const held = [];
    const done = () => {
      this.stop();
      this.note.hidden = true;
      this.options.hidden = false;
      delete this.options.dataset.talk;
      for (const control of held.splice(0)) control.disabled = false;
      open();
    };
    if (!(clockAt > now)) return done();
    this.note.hidden = false;
    const tick = () => {
      const at = performance.now();
      if (at >= clockAt) return done();
      if (at < opensAt) {
        this.options.hidden = true;
        const left = Math.ceil((opensAt - at) / 1000);
        this.note.textContent = interpolate(
          ngettext("Read the question: the answers appear in %s second", "Read the question: the answers appear in %s seconds", left),
          [left],
        );
        return;
      }
      if (this.options.hidden || this.options.dataset.talk === undefined) {
        this.options.hidden = false;
        this.options.dataset.talk = "";
        for (const control of this.options.querySelectorAll("button, input")) {
          if (!control.disabled) {
            control.disabled = true;
            held.push(control);
          }
        }
      }
      const left = Math.ceil((clockAt - at) / 1000);
      this.note.textContent = interpolate(
        ngettext("Team talk: agree on your answer. The clock starts in %s second", "Team talk: agree on your answer. The clock starts in %s seconds", left),
        [left],
      );
    };
    this.timer = setInterval(tick, 200);
    tick();
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

// A round written while it plays counts the questions planned ("1 of 6"), not those ready so far.
export function progressText(state) {
  // Slides have no number: the server counts the questions alone (`numbering`).
  const numbering = state.numbering || { number: state.question_index + 1, of: state.question_count };
  if (numbering.number === null) return "";
  const count = state.planned_count ?? numbering.of;
  return interpolate(gettext("Question %(number)s of %(count)s"), { number: numbering.number, count }, true);
}

// Why a game on a round written while it plays ended early (host and phones alike); "" when it did not.
export function endNote(state) {
  const n = state.question_count;
  if (state.phase !== "finished") return "";
  if (state.end_note === "short") {
    return interpolate(ngettext("The round ended early: its writing stopped after %s question.", "The round ended early: its writing stopped after %s questions.", n), [n]);
  }
  if (state.end_note === "timeout") {
    return interpolate(ngettext("The next question was not ready in time: the game ended after %s question.", "The next question was not ready in time: the game ended after %s questions.", n), [n]);
  }
  return "";
}

// The leaderboard's first `limit` places. With the ranks before the last question (player id -> rank), each row
// says how many places that player moved.
export function renderBoard(list, players, { limit = 10, ranksBefore = null } = {}) {
  list.replaceChildren(
    ...[...players]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((p) => {
        const item = el("li");
        item.append(el("span", { text: `${p.rank}.`, className: "rank" }), el("span", { text: p.nickname, className: "nick" }));
        const before = ranksBefore?.get(p.id);
        const moved = before === undefined ? 0 : before - p.rank;
        item.append(
          moved === 0
            ? el("span", { className: "move" })
            : el("span", {
                text: moved > 0 ? `▲ ${moved}` : `▼ ${-moved}`,
                className: moved > 0 ? "move up" : "move down",
                attrs: {
                  "aria-label":
                    moved > 0
                      ? interpolate(ngettext("up %s place", "up %s places", moved), [moved])
                      : interpolate(ngettext("down %s place", "down %s places", -moved), [-moved]),
                },
              }),
          el("span", { text: String(p.score), className: "score" }),
        );
        return item;
      }),
  );
}

// A team's name: the host's, or an automatic team's colour in this page's language.
const COLOUR_NAMES = {
  red: () => gettext("Red team"),
  blue: () => gettext("Blue team"),
  green: () => gettext("Green team"),
  yellow: () => gettext("Yellow team"),
  purple: () => gettext("Purple team"),
  orange: () => gettext("Orange team"),
  pink: () => gettext("Pink team"),
  teal: () => gettext("Teal team"),
};
export function teamName(team) {
  return team.name || (COLOUR_NAMES[team.colour] || (() => team.colour))();
}

// The team board: each team's rank, name (its colour beside it), size and score.
export function renderTeamBoard(list, teams, { limit = 8 } = {}) {
  list.replaceChildren(
    ...[...teams]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((team) => {
        const item = el("li", { className: "team-row" });
        item.dataset.colour = team.colour;
        item.append(
          el("span", { text: `${team.rank}.`, className: "rank" }),
          el("span", { text: teamName(team), className: "nick" }),
          el("span", { text: interpolate(ngettext("%s player", "%s players", team.size), [team.size]), className: "move" }),
          el("span", { text: String(team.score), className: "score" }),
        );
        return item;
      }),
  );
}

export function ordinal(place) {
  // German writes "1.", Spanish "1.º"; English's suffixes below.
  if (!document.documentElement.lang.startsWith("en")) return interpolate(pgettext("ordinal number", "%s."), [place]);
  const tens = place % 100;
  if (tens >= 11 && tens <= 13) return `${place}th`;
  return `${place}${{ 1: "st", 2: "nd", 3: "rd" }[place % 10] || "th"}`;
}
