// Shared by the host and player pages: one WebSocket that reconnects with backoff, and the small
// helpers both screens use. All text from the server is put on the page with textContent, never as HTML.

export const SHAPES = ["▲", "◆", "●", "■", "★", "⬟"];
export const LETTERS = "ABCDEF";
const SYNC_INTERVAL_MS = 10000;

export class RoomSocket {
  constructor(code, { onOpen, onMessage, onStatus }) {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/room/${code}/`;
    this.onOpen = onOpen;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.attempt = 0;
    this.seq = -1;
    this.connect();
  }

  connect() {
    this.ws = new WebSocket(this.url);
    this.ws.addEventListener("open", () => {
      this.attempt = 0;
      this.onStatus("");
      this.onOpen();
    });
    // Now and then, and whenever a countdown runs out, ask whether the room moved on without us: an event
    // can be lost (a full channel, a restarted Redis) and the next snapshot must not wait for the next event.
    clearInterval(this.syncTimer);
    this.syncTimer = setInterval(() => this.sync(), SYNC_INTERVAL_MS);
    this.ws.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      // A database outage pauses the game; the server retries what was sent and says when it is back.
      if (message.type === "error" && message.code === "paused") return this.onStatus(message.message);
      if (message.type === "resumed") return this.onStatus("");
      if (message.type === "state") {
        if (message.seq < this.seq) return;
        this.seq = message.seq;
      }
      this.onMessage(message);
    });
    this.ws.addEventListener("close", () => {
      if (this.stopped) return;
      this.onStatus("Connection lost — reconnecting…");
      const delay = Math.min(500 * 2 ** this.attempt, 8000) * (0.5 + Math.random() / 2);
      this.attempt += 1;
      setTimeout(() => this.connect(), delay);
    });
  }

  sync() {
    if (this.seq >= 0) this.send({ type: "sync", seq: this.seq });
  }

  send(message) {
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  stop() {
    this.stopped = true;
    this.ws.close();
  }
}

export function $(id) {
  return document.getElementById(id);
}

export function showPhase(phase) {
  for (const section of document.querySelectorAll(".phase")) {
    section.hidden = section.id !== `phase-${phase}`;
  }
}

export function el(tag, { text, className, attrs } = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

export function optionContent(node, index, text) {
  node.append(
    el("span", { text: SHAPES[index], className: "shape", attrs: { "aria-hidden": "true" } }),
    el("span", { text: LETTERS[index], className: "letter" }),
    el("span", { text, className: "option-text" }),
  );
  node.classList.add(`opt-${index}`);
  return node;
}

// Counts down from the server's remaining time, measured from when the state arrived (no clock skew).
export class Countdown {
  constructor(visual, live) {
    this.visual = visual;
    this.live = live;
    this.timer = null;
  }

  start(remainingMs) {
    this.stop();
    const endsAt = performance.now() + remainingMs;
    let lastAnnounced = null;
    const tick = () => {
      const left = Math.max(0, Math.ceil((endsAt - performance.now()) / 1000));
      this.visual.textContent = String(left);
      this.visual.classList.toggle("urgent", left <= 5);
      if (left !== lastAnnounced && (left % 10 === 0 || left === 5 || left === 3) && left > 0) {
        this.live.textContent = `${left} seconds left`;
        lastAnnounced = left;
      }
      if (left === 0) {
        this.live.textContent = "Time is up";
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

export function progressText(state) {
  return `Question ${state.question_index + 1} of ${state.question_count}`;
}

export function renderBoard(list, players, limit = 10) {
  list.replaceChildren(
    ...[...players]
      .sort((a, b) => a.rank - b.rank)
      .slice(0, limit)
      .map((p) => {
        const item = el("li");
        item.append(el("span", { text: `${p.rank}.`, className: "rank" }), el("span", { text: p.nickname, className: "nick" }), el("span", { text: String(p.score), className: "score" }));
        return item;
      }),
  );
}
