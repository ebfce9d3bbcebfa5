"""Synthesise the host screen's sounds into static/sounds/ as Ogg Vorbis: `python scripts/make_sounds.py`.

Every sound is made here from sine waves and envelopes (numpy), so the project owns them (static/sounds/LICENSE).
Needs the development requirements (numpy, soundfile)."""

from pathlib import Path

import numpy as np
import soundfile

RATE = 22050
OUT = Path(__file__).resolve().parents[1] / "static" / "sounds"


def tone(freq: float, seconds: float, *, volume: float = 0.4, decay: float = 6.0) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    attack = np.minimum(t / 0.01, 1.0)
    wave = np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t)
    return volume * attack * np.exp(-decay * t) * wave / 1.3


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(RATE * seconds))


def notes(sequence, *, step: float, volume: float = 0.35, decay: float = 5.0) -> np.ndarray:
    """Notes (Hz, or 0 for a rest) one `step` apart, each ringing a little into the next."""
    out = np.zeros(int(RATE * step * (len(sequence) + 1)))
    for index, freq in enumerate(sequence):
        if freq:
            sound = tone(freq, step * 2, volume=volume, decay=decay)
            start = int(RATE * step * index)
            out[start : start + len(sound)] += sound[: len(out) - start]
    return out


def lobby() -> np.ndarray:
    """An eight-second loop: a walking bass and a bright arpeggio over C, A minor, F, G."""
    chords = [(130.8, (523.3, 659.3, 784.0)), (110.0, (440.0, 523.3, 659.3)),
              (87.3, (349.2, 440.0, 523.3)), (98.0, (392.0, 493.9, 587.3))]  # fmt: skip
    parts = []
    for bass, (a, b, c) in chords:
        melody = notes([a, b, c, b, a, b, c, b], step=0.25, volume=0.18, decay=7.0)[: int(RATE * 2)]
        low = notes([bass, 0, bass * 1.5, 0], step=0.5, volume=0.35, decay=3.0)[: int(RATE * 2)]
        parts.append(melody + low)
    return np.concatenate(parts)


SOUNDS = {
    "lobby": lobby,
    "tick": lambda: tone(1200, 0.08, volume=0.35, decay=40),
    "tick-last": lambda: tone(1600, 0.1, volume=0.45, decay=30),
    "answer": lambda: tone(880, 0.12, volume=0.3, decay=25),
    "reveal": lambda: notes([523.3, 659.3, 784.0, 1046.5], step=0.09, volume=0.35, decay=6.0),
    "third": lambda: notes([392.0, 523.3], step=0.15, volume=0.35),
    "second": lambda: notes([440.0, 554.4, 659.3], step=0.15, volume=0.35),
    "first": lambda: np.concatenate(
        [notes([523.3, 659.3, 784.0, 1046.5], step=0.12, volume=0.35), tone(1046.5, 1.2, volume=0.3, decay=2.5)]
    ),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in SOUNDS.items():
        samples = np.clip(make(), -1.0, 1.0).astype(np.float32)
        soundfile.write(OUT / f"{name}.ogg", samples, RATE, format="OGG", subtype="VORBIS")
    total = sum(path.stat().st_size for path in OUT.glob("*.ogg"))
    print(f"{len(SOUNDS)} sounds, {total / 1024:.0f} KiB in {OUT}")


if __name__ == "__main__":
    main()
