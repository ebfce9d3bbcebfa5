// The one live WebSocket of every page that follows the server: the game's host and player screens and the
// generation page. It reconnects with backoff and says who the page is again on each connect (the page's
// onOpen sends its resume token), keeps only the newest snapshot (by its sequence number), catches up now
// and then through the page's sync (an event can be lost: a full channel, a restarted Redis), and hands the
// server's error frames to the page, which shows them.

const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 8000;
// The server closes a socket that has not said who it is in time (lobby/realtime/idle.py): the page is idle (a join form
// nobody has filled in yet), so it reconnects only when it next has something to send.
const IDLE_CLOSE_CODE = 4408;
// The server moves this socket to another worker (lobby/realtime/rebalance.py): reconnect at once, quietly.
const REBALANCE_CLOSE_CODE = 4012;

export class LiveSocket {
  /**
   * @param {string} path  the WebSocket's path and query, on this page's host
   * @param {object} options
   *   onOpen(live)        on each (re)connect: say who this page is
   *   onMessage(message)  every frame that is not older than the newest snapshot
   *   onError(message)    an {type: "error"} frame (default: shown as the status)
   *   onStatus(text)      the connection's state in words ("" when connected)
   *   sequenceOf(message) a snapshot's sequence number, or undefined for a frame that is not one
   *   sync(live)          catch up: ask for a snapshot newer than live.seq
   *   syncEveryMs         how often sync runs while connected
   *   syncOfflineEveryMs  how often it runs while not connected (default: not at all)
   *   lostText            the status while reconnecting
   *   seq                 the sequence number of the snapshot the page was rendered with, if any
   */
  constructor(path, options) {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    this.options = { onError: (message) => this.options.onStatus(message.message), ...options };
    this.seq = options.seq ?? -1;
    this.attempt = 0;
    this.retryAfterMs = 0;
    this.stopped = false;
    this.dormant = false;
    this.pending = [];
    this.connect();
    this.scheduleSync();
  }

  connect() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.dormant = false;
    ws.addEventListener("open", () => {
      // Not yet a success: a refused socket (too many from this address) opens, says why, and closes. The
      // backoff starts over only once the server has sent a frame that is not an error (below).
      this.options.onStatus("");
      this.options.onOpen?.(this);
      for (const message of this.pending.splice(0)) this.send(message);
    });
    ws.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message && message.type === "error") {
        // A refusal may say when to try again (seconds): a dead server's places come free by then.
        if (typeof message.retry_after === "number") this.retryAfterMs = message.retry_after * 1000;
      } else {
        this.attempt = 0;
        this.retryAfterMs = 0;
      }
      this.deliver(message);
    });
    ws.addEventListener("close", (event) => {
      if (this.stopped) return;
      if (event.code === IDLE_CLOSE_CODE) {
        this.dormant = true;
        return;
      }
      if (event.code === REBALANCE_CLOSE_CODE) {
        this.attempt = 0;
        this.connect();
        return;
      }
      this.options.onStatus(this.options.lostText ?? gettext("Connection lost — reconnecting…"));
      // Backing off on every kind of refusal, never sooner than the server's hint, and jittered, so a room's
      // phones do not all come back in the same millisecond after a restart.
      const backoff = Math.min(FIRST_RETRY_MS * 2 ** this.attempt, LAST_RETRY_MS) * (0.5 + Math.random() / 2);
      const delay = Math.max(backoff, this.retryAfterMs * (1 + Math.random() / 2));
      this.retryAfterMs = 0;
      this.attempt += 1;
      setTimeout(() => this.connect(), delay);
    });
  }

  // A frame from the socket, or one the page fetched another way (its sync): the same checks for both.
  deliver(message) {
    if (this.stopped || !message || typeof message !== "object") return;
    const seq = this.options.sequenceOf?.(message);
    if (typeof seq === "number") {
      if (seq < this.seq) return; // an older snapshot than the one shown
      this.seq = seq;
    }
    if (message.type === "error") this.options.onError(message);
    else this.options.onMessage(message);
  }

  scheduleSync() {
    if (this.stopped) return;
    const every = this.isOpen() ? this.options.syncEveryMs : this.options.syncOfflineEveryMs;
    // With no sync for the socket's present state, look again shortly: it may have come back (or gone).
    this.syncTimer = setTimeout(() => {
      if (every) this.sync();
      this.scheduleSync();
    }, every || FIRST_RETRY_MS);
  }

  sync() {
    if (!this.stopped) this.options.sync?.(this);
  }

  isOpen() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  // False when the message could not be sent. A dormant socket (closed for idling) reconnects and sends it then.
  send(message) {
    if (this.dormant) {
      this.pending.push(message);
      this.connect();
      return true;
    }
    if (!this.isOpen()) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.syncTimer);
    this.ws.close();
  }
}
