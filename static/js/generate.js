// Live progress of a generation job over the shared live socket; while the socket is down, the page asks the
// status URL instead (a proxy without WebSocket support, a restarting server). When the job finishes the page
// reloads, and the server renders the round.

import { LiveSocket } from "./live.js";

const root = document.getElementById("generation");
// Strings come from Django's JavaScript catalogue (/jsi18n/, loaded by base.html): gettext() and friends.
const labels = {
  queued: gettext("Queued"),
  running: gettext("Writing"),
  done: gettext("Done"),
  failed: gettext("Failed"),
  cancelled: gettext("Cancelled"),
};
const COUNTS = ["written", "asked", "checked", "dropped", "invalid", "duplicates", "attempt"];

function setField(name, value) {
  for (const node of root.querySelectorAll(`[data-field="${name}"]`)) node.textContent = value;
}

function show(job) {
  for (const name of COUNTS) setField(name, job[name]);
  const label = job.kind === "check" && job.status === "running" ? gettext("Checking") : labels[job.status];
  setField("status_label", label || job.status);
  for (const node of root.querySelectorAll('[data-show="gated"]')) node.hidden = !job.gated;
  // A worker died while writing and another took the job over: it counts on, and says so.
  for (const node of root.querySelectorAll('[data-show="takeover"]')) node.hidden = !(job.takeovers > 0);
  // Questions ready to play while the rest is still being written: the room can open with the first.
  const ready = root.querySelector('[data-show="ready"]');
  if (ready) {
    ready.hidden = !(job.ready > 0) || job.finished;
    setField("ready_text", interpolate(ngettext("%s question ready to play", "%s questions ready to play", job.ready), [job.ready]));
    if (job.play_url) document.getElementById("open-room").href = job.play_url;
  }
  const message = root.querySelector('[data-field="message"]');
  if (message) {
    message.textContent = job.message || "";
    message.hidden = !job.message;
  }
  if (job.finished) {
    live.stop();
    window.location.reload();
  }
}

async function fetchProgress(socket) {
  try {
    const response = await fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (response.ok) socket.deliver(await response.json());
  } catch {
    // Offline as well: the next sync, or the socket, catches up.
  }
}

// A refusal (too many connections) comes as an error frame just before the socket closes: it stays in sight
// while the page reconnects.
let lastError = "";

const live = new LiveSocket(`/ws/generation/${root.dataset.jobId}/?t=${encodeURIComponent(root.dataset.token)}`, {
  seq: Number(root.dataset.revision || "0"),
  sequenceOf: (message) => (message.type === "progress" ? message.job?.revision : undefined),
  onMessage: (message) => message.type === "progress" && message.job && show(message.job),
  onOpen: () => (lastError = ""),
  onError: (message) => setField("connection", (lastError = message.message)),
  onStatus: (text) => setField("connection", text && lastError ? `${lastError} ${text}` : text),
  lostText: gettext("Reconnecting…"),
  // The page only listens (cancelling is a form post): catching up is a read of the status URL.
  sync: fetchProgress,
  syncEveryMs: 10000,
  syncOfflineEveryMs: 1500,
});
