// Live progress of a generation job: a WebSocket first, polling the status URL if it cannot connect.
// When the job finishes the page reloads, and the server renders the round.
(function () {
  "use strict";
  var root = document.getElementById("generation");
  if (!root) return;
  var jobId = root.dataset.jobId;
  var revision = parseInt(root.dataset.revision || "0", 10);
  var labels = { queued: "Queued", running: "Writing", done: "Done", failed: "Failed", cancelled: "Cancelled" };
  var finished = false;
  var pollTimer = null;
  var failures = 0;

  function setField(name, value) {
    root.querySelectorAll('[data-field="' + name + '"]').forEach(function (el) { el.textContent = value; });
  }

  function show(job) {
    if (!job || job.revision < revision) return; // an older snapshot than the one shown
    revision = job.revision;
    ["written", "asked", "checked", "dropped", "invalid", "attempt"].forEach(function (name) {
      setField(name, job[name]);
    });
    setField("status_label", labels[job.status] || job.status);
    root.querySelectorAll('[data-show="gated"]').forEach(function (el) { el.hidden = !job.gated; });
    var message = root.querySelector('[data-field="message"]');
    if (message) { message.textContent = job.message || ""; message.hidden = !job.message; }
    if (job.finished && !finished) {
      finished = true;
      window.location.reload();
    }
  }

  function poll() {
    fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (data) { show(data.job); })
      .catch(function () {})
      .finally(function () { if (!finished) pollTimer = setTimeout(poll, 1500); });
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var url = scheme + window.location.host + "/ws/generation/" + jobId + "/?t=" + encodeURIComponent(root.dataset.token);
    var socket;
    try { socket = new WebSocket(url); } catch (e) { poll(); return; }
    var opened = false;
    socket.onopen = function () { opened = true; failures = 0; setField("connection", ""); };
    socket.onmessage = function (event) {
      var data = JSON.parse(event.data);
      if (data.type === "progress") show(data.job);
      else if (data.type === "error") setField("connection", data.message);
    };
    socket.onclose = function () {
      if (finished) return;
      failures += 1;
      if (!opened && failures >= 2) {
        // No WebSocket here (a proxy, or the route is not wired): fall back to polling.
        poll();
        return;
      }
      setField("connection", "Reconnecting…");
      setTimeout(connect, Math.min(1000 * failures, 5000));
    };
  }

  connect();
})();
