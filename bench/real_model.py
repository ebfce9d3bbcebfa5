"""The writer and the gate against a real OpenAI-compatible server (llama.cpp's llama-server, vLLM, Ollama, a
gateway): not part of CI, run by hand.

    DJANGO_DEBUG=1 .venv/bin/python bench/real_model.py --base-url http://127.0.0.1:8080/v1 --model MODEL_ID \\
        [--key KEY] [--backends llm,judge] [--count 5] [--pack world-geography] [--sample 6] [--flip 0]
        [--writer-timeout 120] [--job-budget 300] [--checker-timeout 30] [--threshold 0.6]
    DJANGO_DEBUG=1 .venv/bin/python bench/real_model.py --scripted      # a smoke run against the tests' server

The same from the environment: REAL_MODEL_BASE_URL, REAL_MODEL_NAME, REAL_MODEL_KEY, REAL_MODEL_BACKENDS.

1. The writer writes one round of --count questions (gate off) with the bounded JSON schema: per attempt, the
   seconds it took and how many items it wrote, and for the round how many were valid, repeats, why the others
   were invalid, which schema the server accepted, and the host's message.
2. Each backend of --backends gates --sample questions of a sample pack (quiz/pack_data/, what
   `manage.py load_packs` loads) with the answer of question --flip moved to a wrong option: per question its
   score, outcome, reason and time; per backend the calls, the time per call (VERIFIER_CONCURRENCY=1, so wall
   time / calls), the flipped question's score against the correct ones', and whether the gate dropped it.
   A backend this checkout does not have (`judge` before verifier/backends/judge.py exists) is skipped, saying so.

With --scripted the tests' scripted server (tests/fakes/writer_server.py) plays both models on loopback; its
checker is told to score the flipped question low, so the scores show the bench's plumbing, not a model.
"""

import argparse
import asyncio
import importlib.util
import logging
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from quiz.generation.prompts import RoundSpec  # noqa: E402
from quiz.generation.writer import RoundWriter, WriteOutcome  # noqa: E402
from quiz.jobs.conf import writer_config  # noqa: E402
from quiz.packs import PACK_DIRECTORY, pack_file_read  # noqa: E402
from quiz.validation import QuestionData  # noqa: E402
from verifier import registry  # noqa: E402
from verifier.breaker import breaker_for  # noqa: E402
from verifier.conf import gate_config  # noqa: E402
from verifier.gate import Gate, GateDecision, GateItem  # noqa: E402

SCRIPTED_WRITER = "writer-scripted-2025-01-01"
SCRIPTED_CHECKER = "checker-scripted-2025-01-01"


@dataclass(frozen=True)
class Target:
    base_url: str
    model: str
    key: str
    backends: tuple[str, ...]
    # The checker's server and model; the writer's unless given.
    checker_base_url: str = ""
    checker_model: str = ""
    checker_key: str = ""


# --- the writer ---------------------------------------------------------------------------------------------------


async def write_round(*, count: int, topic: str) -> tuple[RoundWriter, WriteOutcome]:
    gate = Gate(config=replace(gate_config(), backend="off"), threshold=0.6, calibrated=False)
    writer = RoundWriter(spec=RoundSpec(count=count, topic=topic), config=writer_config(), gate=gate)
    async with gate:
        outcome = await writer.run()
    return writer, outcome


def writer_rows(writer: RoundWriter, outcome: WriteOutcome) -> None:
    progress = outcome.progress
    print(f"writer: {outcome.kind}, {len(outcome.played)} played of {writer.spec.count} asked for")
    print(f"{'attempt':>7} {'asked':>5} {'written':>7} {'seconds':>8} {'cut off':>7}")
    for facts, (start, end) in zip(writer.attempts, outcome.timeline.writing, strict=False):
        print(
            f"{facts.number:>7} {facts.asked:>5} {facts.written:>7} {end - start:>8.1f} "
            f"{'yes' if facts.timed_out else 'no':>7}"
        )
    valid = progress.written - progress.invalid - progress.duplicates
    share = f"{valid / progress.written:.0%}" if progress.written else "-"
    print(
        f"items: {progress.written} written, {valid} valid ({share}), {progress.invalid} invalid, "
        f"{progress.duplicates} repeats; schema accepted: {writer.schema_level}"
    )
    for reason, number in Counter(writer.invalid_reasons).most_common(5):
        print(f"  invalid x{number}: {reason}")
    print(f"host's message: {outcome.message or '(none)'}")


# --- the gate -----------------------------------------------------------------------------------------------------


def sample_items(*, pack: str, sample: int, flip: int) -> tuple[list[GateItem], str]:
    questions: list[QuestionData] = list(pack_file_read(PACK_DIRECTORY / f"{pack}.json").questions)[:sample]
    if not 0 <= flip < len(questions):
        raise SystemExit(f"--flip {flip} is not one of the {len(questions)} sampled questions")
    items = []
    for number, data in enumerate(questions):
        correct = data.correct_index
        if number == flip:
            correct = (correct + 1) % len(data.options)
        items.append(
            GateItem(
                key=f"q{number}",
                text=data.text,
                options=data.options,
                correct_index=correct,
                explanation=data.explanation,
            )
        )
    return items, f"q{flip}"


def backend_available(name: str) -> str:
    """Why this checkout cannot run the backend, or ""."""
    if not registry.gate_enabled(name):
        return f"not a backend of this checkout (VERIFIER_BACKEND takes {', '.join(registry.checking_names())})"
    if importlib.util.find_spec(f"verifier.backends.{name}") is None:
        return f"verifier/backends/{name}.py does not exist here"
    return ""


async def gate_items(items: list[GateItem], *, threshold: float) -> tuple[list[GateDecision], float, int]:
    gate = Gate.from_settings(threshold=threshold)
    async with gate:
        started = time.monotonic()
        # One question at a time, so each question's time is its own calls' (none waits for another's).
        decisions = [await gate.check(item) for item in items]
        wall = time.monotonic() - started
    return decisions, wall, gate.budget.calls


def gate_rows(name: str, items: list[GateItem], flipped: str, *, threshold: float) -> None:
    why = backend_available(name)
    if why:
        print(f"\nbackend {name}: skipped, {why}")
        return
    settings.VERIFIER_BACKEND = name
    config = gate_config()
    breaker_for(backend=name, model_id=config.model_id, config=config).reset()
    decisions, wall, calls = asyncio.run(gate_items(items, threshold=threshold))
    print(f"\nbackend {name} (model {config.model_id}, threshold {threshold:g}):")
    print(f"{'':>3} {'score':>6} {'outcome':<10} {'ms':>6}  {'reason':<24} question")
    for item, decision in zip(items, decisions, strict=True):
        score = "-" if decision.score is None else f"{decision.score:.3f}"
        mark = "F" if item.key == flipped else ""
        chose = f" (checker chose {decision.checker_chose})" if decision.checker_chose else ""
        print(
            f"{mark:>3} {score:>6} {decision.outcome:<10} {decision.latency_ms:>6}  {decision.reason[:24]:<24} "
            f"{item.text[:60]}{chose}"
        )
    per_call = wall / calls if calls else 0.0
    flipped_decision = next(d for d in decisions if d.key == flipped)
    correct = [d.score for d in decisions if d.key != flipped and d.score is not None]
    scored = sum(1 for d in decisions if d.score is not None)
    print(f"calls {calls}, wall {wall:.1f} s, {per_call:.2f} s per call; {scored} of {len(decisions)} scored")
    if flipped_decision.score is None or not correct:
        print(f"flipped: not scored ({flipped_decision.reason}); correct scored: {len(correct)}")
        return
    print(
        f"flipped {flipped_decision.score:.3f} ({flipped_decision.outcome}); correct: median "
        f"{statistics.median(correct):.3f}, min {min(correct):.3f}; "
        f"{'separated' if flipped_decision.score < min(correct) else 'NOT separated'}"
    )


# --- the run ------------------------------------------------------------------------------------------------------


def configure(target: Target, args: argparse.Namespace) -> None:
    settings.OPENAI_BASE_URL = target.base_url
    settings.OPENAI_API_KEY = target.key
    settings.QUIZ_WRITER_MODEL = target.model
    settings.QUIZ_WRITER_TIMEOUT = args.writer_timeout
    settings.QUIZ_WRITER_JOB_BUDGET = args.job_budget
    settings.VERIFIER_BASE_URL = target.checker_base_url or target.base_url
    settings.VERIFIER_API_KEY = target.checker_key or target.key
    settings.VERIFIER_MODEL = target.checker_model or target.model
    settings.VERIFIER_TIMEOUT = args.checker_timeout
    settings.VERIFIER_CONCURRENCY = 1


def write_rows(target: Target, args: argparse.Namespace) -> None:
    print(f"server {target.base_url}, model {target.model}, backends {', '.join(target.backends)}")
    started = time.monotonic()
    writer, outcome = asyncio.run(write_round(count=args.count, topic=args.topic))
    print(f"\nwrote in {time.monotonic() - started:.1f} s (QUIZ_WRITER_TIMEOUT {args.writer_timeout:g} s per attempt)")
    writer_rows(writer, outcome)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("REAL_MODEL_BASE_URL", ""))
    parser.add_argument("--model", default=os.environ.get("REAL_MODEL_NAME", ""))
    parser.add_argument("--key", default=os.environ.get("REAL_MODEL_KEY", ""))
    parser.add_argument("--backends", default=os.environ.get("REAL_MODEL_BACKENDS", "llm,judge"))
    parser.add_argument("--checker-base-url", default="", help="the checker's server (default: the writer's)")
    parser.add_argument("--checker-model", default="", help="the checker's model (default: the writer's)")
    parser.add_argument("--checker-key", default="")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--topic", default="The planets of the solar system")
    parser.add_argument("--pack", default="world-geography")
    parser.add_argument("--sample", type=int, default=6)
    parser.add_argument("--flip", type=int, default=0)
    parser.add_argument("--writer-timeout", type=float, default=120.0)
    parser.add_argument("--job-budget", type=float, default=300.0)
    parser.add_argument("--checker-timeout", type=float, default=30.0)
    parser.add_argument("--threshold", type=float, default=0.6)
    parser.add_argument("--scripted", action="store_true", help="smoke run against the tests' scripted server")
    args = parser.parse_args()
    # The tables say it all; the writer's and the gate's own lines only at WARNING.
    for name in ("httpx", "httpx2", "verifier", "quiz"):
        logging.getLogger(name).setLevel(logging.WARNING)
    backends = tuple(name.strip().lower() for name in args.backends.split(",") if name.strip())

    server = None
    if args.scripted:
        from tests.fakes.writer_server import WriterServer

        server = WriterServer().start()
        server.writer.chars_per_token = 4
        server.writer.token_delay = 0.002
        target = Target(
            base_url=f"{server.url}/v1",
            model=SCRIPTED_WRITER,
            key="bench",
            backends=backends,
            checker_model=SCRIPTED_CHECKER,
        )
    else:
        if not args.base_url or not args.model:
            parser.error("give --base-url and --model (or REAL_MODEL_BASE_URL and REAL_MODEL_NAME), or --scripted")
        target = Target(
            base_url=args.base_url.rstrip("/"),
            model=args.model,
            key=args.key,
            backends=backends,
            checker_base_url=args.checker_base_url.rstrip("/"),
            checker_model=args.checker_model,
            checker_key=args.checker_key,
        )
    try:
        configure(target, args)
        write_rows(target, args)
        items, flipped = sample_items(pack=args.pack, sample=args.sample, flip=args.flip)
        print(
            f"\ngating {len(items)} questions of the {args.pack!r} pack, question {args.flip} (F) with its answer moved"
        )
        if server is not None:
            # The script's checker: the flipped question is scored low, the rest high, and the blind question
            # picks each question's true answer (not a model's judgement: the plumbing's).
            originals = {q.text: q for q in pack_file_read(PACK_DIRECTORY / f"{args.pack}.json").questions}
            flipped_text = next(item.text for item in items if item.key == flipped)
            server.script.probabilities = {flipped_text: 0.1}
            server.script.choices = {item.text: "ABCDEF"[originals[item.text].correct_index] for item in items}
        for name in backends:
            gate_rows(name, items, flipped, threshold=args.threshold)
    finally:
        if server is not None:
            server.stop()
            print(
                f"\nscripted server: {len(server.writer_bodies)} writer requests, schema errors {server.schema_errors}"
            )


if __name__ == "__main__":
    main()
