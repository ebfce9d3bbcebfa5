"""`manage.py checker_eval` against the scripted checkers on loopback (tests/fakes/model_server.py), to see what its
report says for a checker that knows the answers, one that answers a constant, and one that hangs.

    DJANGO_DEBUG=1 .venv/bin/python bench/checker_eval_scripted.py [knows|constant|hangs ...] [--backend systemone]
        [--timeout 6] [--limit N]

Each runs `manage.py checker_eval` (the sample packs and their bad copies) in a child process, with VERIFIER_*
pointed at a scripted server started here; the database is DATABASE_URL's (a run is stored for the admin page).
`hangs` answers after 600 s: every call is cut at VERIFIER_TIMEOUT (default 6 s, as in play).
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from review.checker_eval import pack_items  # noqa: E402
from review.thresholds.sweep import GOOD  # noqa: E402
from tests.fakes.model_server import ModelServer  # noqa: E402

CHECKERS = ("knows", "constant", "hangs")
MODELS = {"systemone": "jev-1.13.0", "llm": "checker-8b-2025-01", "judge": "judge-7b-2025-03"}


def scripted(server: ModelServer, checker: str) -> None:
    if checker == "knows":
        server.script.oracle = {
            item.text: (item.options[item.correct_index], item.explanation)
            for item in pack_items()
            if item.label == GOOD
        }
    elif checker == "constant":
        server.script.default_probability = 0.5
        server.script.default_choice = "A"
    else:
        server.script.latency = 600.0


def run(checker: str, *, backend: str, timeout: float, limit: int | None) -> int:
    server = ModelServer().start()
    try:
        scripted(server, checker)
        base = server.url if backend == "systemone" else f"{server.url}/v1"
        env = {
            **os.environ,
            "VERIFIER_BACKEND": backend,
            "VERIFIER_BASE_URL": base,
            "VERIFIER_API_KEY": "bench-key",
            "VERIFIER_MODEL": MODELS[backend],
            "VERIFIER_TIMEOUT": str(timeout),
        }
        command = [sys.executable, "manage.py", "checker_eval"] + (["--limit", str(limit)] if limit else [])
        print(f"### {checker}: {' '.join(command[1:])} (VERIFIER_BACKEND={backend} VERIFIER_TIMEOUT={timeout:g})")
        sys.stdout.flush()
        started = time.monotonic()
        done = subprocess.run(command, cwd=REPO, env=env, stderr=subprocess.DEVNULL)
        print(f"### {checker}: {time.monotonic() - started:.1f} s, {len(server.requests)} requests to the server\n")
        return done.returncode
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkers", nargs="*", metavar="CHECKER", help="knows, constant, hangs (default: all three)")
    parser.add_argument("--backend", default="systemone", choices=sorted(MODELS))
    parser.add_argument("--timeout", type=float, default=6.0)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    checkers = args.checkers or list(CHECKERS)
    if unknown := [name for name in checkers if name not in CHECKERS]:
        parser.error(f"unknown checker(s) {', '.join(unknown)}: choose from {', '.join(CHECKERS)}")
    codes = [run(c, backend=args.backend, timeout=args.timeout, limit=args.limit) for c in checkers]
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
