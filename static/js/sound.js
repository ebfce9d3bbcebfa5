// The host screen's sounds (static/sounds/, made by scripts/make_sounds.py): lobby music, the countdown's last
// seconds, an answer coming in, the reveal and the podium. Browsers let a page play sound only after a key or a
// click on it, so nothing is loaded before the first one (the page says so). M turns sound on and off, remembered
// by this browser; the volume slider too. Phones play nothing.

import { icon } from "./ui.js";

const KEY = "quizgate.sound";
const VOLUME_KEY = "quizgate.sound.volume";

export class HostSound {
  constructor(base, { toggle, volume, note }) {
    this.base = base;
    this.toggle = toggle;
    this.volumeInput = volume;
    this.note = note;
    this.on = localStorage.getItem(KEY) !== "off";
    this.volume = Number(localStorage.getItem(VOLUME_KEY) ?? "0.6");
    this.started = false;
    this.clips = new Map();
    this.phase = null;
    volume.value = String(this.volume);
    volume.addEventListener("input", () => {
      this.volume = Number(volume.value);
      localStorage.setItem(VOLUME_KEY, String(this.volume));
      for (const clip of this.clips.values()) clip.volume = this.volume;
    });
    toggle.addEventListener("click", () => this.flip());
    this.show();
    const begin = () => this.start();
    document.addEventListener("keydown", begin, { once: true, capture: true });
    document.addEventListener("pointerdown", begin, { once: true, capture: true });
  }

  show() {
    // An icon on the crowded top bar; its name says the state and the key.
    this.toggle.setAttribute("aria-pressed", String(this.on));
    this.toggle.replaceChildren(icon(this.on ? "sound-on" : "sound-off"));
    this.toggle.setAttribute("aria-label", this.on ? gettext("Sound on (M)") : gettext("Sound off (M)"));
    this.toggle.title = this.toggle.getAttribute("aria-label");
    this.note.hidden = this.started || !this.on;
  }

  start() {
    if (this.started) return;
    this.started = true;
    this.show();
    this.music();
  }

  flip() {
    this.on = !this.on;
    localStorage.setItem(KEY, this.on ? "on" : "off");
    if (!this.on) for (const clip of this.clips.values()) clip.pause();
    this.show();
    this.music();
  }

  clip(name) {
    if (!this.clips.has(name)) {
      const clip = new Audio(`${this.base}${name}.ogg`);
      clip.volume = this.volume;
      clip.loop = name === "lobby";
      this.clips.set(name, clip);
    }
    return this.clips.get(name);
  }

  play(name) {
    if (!this.started || !this.on) return;
    const clip = this.clip(name);
    clip.currentTime = 0;
    clip.play().catch(() => {});
  }

  // The lobby's loop plays in the lobby only.
  music(phase = this.phase) {
    this.phase = phase;
    const inLobby = phase === "lobby" && this.started && this.on;
    if (inLobby) this.clip("lobby").play().catch(() => {});
    else if (this.clips.has("lobby")) this.clips.get("lobby").pause();
  }

  phaseChanged(phase, previous) {
    this.music(phase);
    if (phase === previous) return;
    if (phase === "reveal") this.play("reveal");
    if (phase === "finished") {
      this.play("third");
      setTimeout(() => this.play("second"), 900);
      setTimeout(() => this.play("first"), 1800);
    }
  }

  // The countdown's last five seconds tick, and the last three twice a second.
  second(left) {
    if (left > 5 || left <= 0) return;
    this.play(left <= 3 ? "tick-last" : "tick");
    if (left <= 3) setTimeout(() => this.play("tick-last"), 500);
  }
}
