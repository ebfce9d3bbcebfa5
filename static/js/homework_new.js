// The homework form: the deadline is typed in the host's own time zone; the server stores it in UTC, so the
// browser sends its offset from UTC at that date and time (daylight saving included).

const form = document.getElementById("homework-form");
const offset = document.getElementById("id_tz_offset");
const date = document.getElementById("id_deadline_date");
const time = document.getElementById("id_deadline_time");

function fill() {
  const local = date.value && time.value ? new Date(`${date.value}T${time.value}`) : new Date();
  offset.value = String(Number.isNaN(local.getTime()) ? new Date().getTimezoneOffset() : local.getTimezoneOffset());
}

if (!date.value) {
  const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  date.value = `${tomorrow.getFullYear()}-${pad(tomorrow.getMonth() + 1)}-${pad(tomorrow.getDate())}`;
  time.value = time.value || "18:00";
}
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
if (zone) document.getElementById("tz-hint").textContent = interpolate(gettext("In your time zone (%s)."), [zone]);
fill();
form.addEventListener("submit", fill);
