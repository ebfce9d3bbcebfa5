"""Replay a labelled set: what the gate catches with min(answer, explanation) alone, and with the blind score added.

    DJANGO_DEBUG=1 .venv/bin/python bench/gate_quality.py [FILE.json] [--threshold 0.6] [--json]

FILE is the format `manage.py sweep --import` reads (a JSON list, or {"about", "items"}), each item with its
recorded `probabilities` and, for the blind score, either `probabilities.blind` (P(marked)) or `blind`
({option letter: p}). Default: tests/verifier/data/blind_labelled.json (illustrative data, not measurements).

For each backend + model id, and for each scoring, it prints defects caught and good questions dropped at the
stored threshold (or VERIFIER_DEFAULT_THRESHOLD when none is stored or the database cannot be read; --threshold
overrides) and at the sweep's recommendation for that scoring (the widest threshold that drops no good question).

    DJANGO_DEBUG=1 .venv/bin/python bench/gate_quality.py [FILE.json] --blind-debias [--threshold 0.6]

runs the set's questions live through the gate against a scripted System One server instead: the checks answer
the recorded probabilities, and the blind question is answered by two checkers, one that replays the recorded
blind answer by option text (it knows the options wherever they are shown) and one that always says "A" (0.9,
whatever A is), with the options unshuffled (computed: the gate before issue 16), one shuffled order, and two
orders. Per row: "the checker chose" flags on good and defective questions, defects caught and good dropped.
"""

import argparse
import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.db import DatabaseError  # noqa: E402

from quiz.validation import clean_question  # noqa: E402
from review.labelled_set import blind_marked_probability, labelled_set_items  # noqa: E402
from review.thresholds.sweep import DEFECTIVE, GOOD, LabelledScore, sweep_row, sweep_rows, widest_safe  # noqa: E402
from verifier import conf, policy  # noqa: E402
from verifier.prompts import option_letters  # noqa: E402
from verifier.selectors import threshold_for  # noqa: E402

DEFAULT_SET = REPO / "tests" / "verifier" / "data" / "blind_labelled.json"
SCORINGS = ("min(answer, explanation)", "min(answer, explanation, blind)")


@dataclass(frozen=True)
class Replayed:
    number: int
    text: str
    backend: str
    model_id: str
    label: str
    base: float
    with_blind: float | None
    checker_chose: str


def replay(raw: dict[str, Any], number: int, *, disagree_at: float) -> Replayed:
    data = clean_question(
        {
            "text": raw.get("question"),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    probabilities = {check: float(p) for check, p in raw["probabilities"].items()}
    has_explanation = policy.EXPLANATION_TRUE in probabilities
    base = policy.closed_book_score(probabilities=probabilities, has_explanation=has_explanation)
    chose = ""
    blind = probabilities.get(policy.BLIND)
    if isinstance(raw.get("blind"), dict):
        marked = blind_marked_probability(raw["blind"], options=data.options, marked=data.correct_index)
        blind = marked if blind is None else blind
        letters = option_letters(data.options)
        reading = policy.blind_reading(
            probabilities=policy.normalised(raw["blind"], letters=letters),
            marked=letters[data.correct_index],
            disagree_at=disagree_at,
        )
        chose = reading.pick if reading.disagrees else ""
    return Replayed(
        number=number,
        text=data.text,
        backend=str(raw.get("backend") or ""),
        model_id=str(raw.get("model_id") or ""),
        label=raw["label"],
        base=base,
        with_blind=None if blind is None else min(base, blind),
        checker_chose=chose,
    )


def stored_threshold(backend: str, model_id: str) -> tuple[float, str]:
    try:
        value, calibrated = threshold_for(backend=backend, model_id=model_id)
    except DatabaseError:
        return conf.default_threshold(), "default (no db)"
    return value, "stored" if calibrated else "default"


def _count(caught: int, of: int) -> str:
    return f"{caught}/{of}" + (f" ({caught / of * 100:.0f}%)" if of else "")


def report(items: list[Replayed], *, threshold: float | None) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Replayed]] = defaultdict(list)
    for item in items:
        groups[(item.backend, item.model_id)].append(item)
    results = []
    for (backend, model_id), members in sorted(groups.items()):
        value, source = (threshold, "given") if threshold is not None else stored_threshold(backend, model_id)
        good = sum(1 for m in members if m.label == GOOD)
        defective = sum(1 for m in members if m.label == DEFECTIVE)
        result: dict[str, Any] = {"backend": backend, "model_id": model_id, "good": good, "defective": defective}
        for name, score_of in zip(SCORINGS, (lambda m: m.base, lambda m: m.with_blind), strict=True):
            scored = [
                LabelledScore(
                    question_id=m.number, backend=backend, model_id=model_id, score=score_of(m), label=m.label
                )
                for m in members
                if score_of(m) is not None
            ]
            if not scored:
                continue
            at_stored = sweep_row(scored, value)
            pick = widest_safe(sweep_rows(scored))
            result[name] = {
                "questions": len(scored),
                "threshold": {
                    "value": value,
                    "source": source,
                    "caught": at_stored.caught,
                    "good_dropped": at_stored.good_dropped,
                },
                "sweep": None
                if pick is None
                else {"value": pick.threshold, "caught": pick.caught, "good_dropped": pick.good_dropped},
            }
        base_missed = {m.number for m in members if m.label == DEFECTIVE and m.base >= value}
        result["blind_adds"] = [
            m.text for m in members if m.number in base_missed and m.with_blind is not None and m.with_blind < value
        ]
        result["missed_by_both"] = [
            m.text for m in members if m.number in base_missed and (m.with_blind is None or m.with_blind >= value)
        ]
        result["good_lost_to_blind"] = [
            m.text
            for m in members
            if m.label == GOOD and m.base >= value and m.with_blind is not None and m.with_blind < value
        ]
        result["checker_chose"] = {
            "defective": sum(1 for m in members if m.label == DEFECTIVE and m.checker_chose),
            "good": sum(1 for m in members if m.label == GOOD and m.checker_chose),
        }
        results.append(result)
    return results


def _row(name: str, at: str, row: dict[str, Any], result: dict[str, Any]) -> str:
    caught = _count(row["caught"], result["defective"])
    dropped = _count(row["good_dropped"], result["good"])
    return f"{name:<34} {at:<26} {row['value']:>9.2f} {caught:>12} {dropped:>13}"


def format_report(results: list[dict[str, Any]], *, path: Path, about: str) -> str:
    lines = [f"labelled set: {path}"]
    if about:
        lines.append(f"about: {about}")
    for result in results:
        lines += [
            "",
            f"== {result['backend']} {result['model_id']}: {result['good']} good, {result['defective']} defective",
        ]
        lines.append(f"{'scoring':<34} {'at':<26} {'threshold':>9} {'caught':>12} {'good dropped':>13}")
        for name in SCORINGS:
            if name not in result:
                lines.append(f"{name:<34} (no blind scores in this set)")
                continue
            row = result[name]
            stored, pick = row["threshold"], row["sweep"]
            lines.append(_row(name, f"{stored['source']} threshold", stored, result))
            if pick is not None:
                lines.append(_row("", "the sweep's pick", pick, result))
        chose = result["checker_chose"]
        lines.append(
            f"the checker chose another option: {chose['defective']} of {result['defective']} defective, "
            f"{chose['good']} of {result['good']} good"
        )
        for title, key in (
            ("caught only with the blind score", "blind_adds"),
            ("missed by both", "missed_by_both"),
            ("good questions the blind score drops", "good_lost_to_blind"),
        ):
            lines.append(f"{title}: {len(result[key])}")
            lines += [f"  - {text}" for text in result[key]]
    return "\n".join(lines)


def _debias_items(raw_items: list[dict[str, Any]]) -> list[tuple[Any, dict[str, Any]]]:
    from verifier.gate import GateItem

    found = []
    for number, raw in enumerate(raw_items, start=1):
        options = tuple(str(option) for option in raw["options"])
        found.append(
            (
                GateItem(
                    key=f"b{number}",
                    text=f"[{number}] {raw['question']}",
                    options=options,
                    correct_index=int(raw["correct_index"]),
                    explanation=str(raw.get("explanation", "")),
                ),
                raw,
            )
        )
    return found


def _debias_row(decisions: list[Any], raws: list[dict[str, Any]], threshold: float) -> dict[str, int]:
    pairs = list(zip(decisions, raws, strict=True))
    return {
        "flags_good": sum(1 for d, r in pairs if d.checker_chose and r["label"] == GOOD),
        "flags_defective": sum(1 for d, r in pairs if d.checker_chose and r["label"] == DEFECTIVE),
        "caught": sum(1 for d, r in pairs if d.outcome == "dropped" and r["label"] == DEFECTIVE),
        "good_dropped": sum(1 for d, r in pairs if d.outcome == "dropped" and r["label"] == GOOD),
        "order_dependent": sum(1 for d, _ in pairs if d.blind_order_dependent),
        "unverified": sum(1 for d, _ in pairs if d.outcome == "unverified"),
    }


def _unshuffled_a_row(items: list[tuple[Any, dict[str, Any]]], threshold: float) -> dict[str, int]:
    """The gate before shuffling, against a checker that always says A: computed, not run."""
    row = dict.fromkeys(("flags_good", "flags_defective", "caught", "good_dropped", "order_dependent", "unverified"), 0)
    for item, raw in items:
        letters = option_letters(item.options)
        rest = 0.1 / (len(letters) - 1)
        reading = policy.blind_reading(
            probabilities={letter: 0.9 if letter == "A" else rest for letter in letters},
            marked=letters[item.correct_index],
            disagree_at=conf.blind_disagree(),
        )
        probabilities = {check: float(p) for check, p in raw["probabilities"].items()}
        score = min(
            policy.closed_book_score(
                probabilities=probabilities, has_explanation=policy.EXPLANATION_TRUE in probabilities
            ),
            reading.marked_probability,
        )
        good = raw["label"] == GOOD
        row["flags_good" if good else "flags_defective"] += reading.disagrees
        if score < threshold:
            row["good_dropped" if good else "caught"] += 1
    return row


def blind_debias(raw_items: list[dict[str, Any]], *, threshold: float) -> list[tuple[str, str, dict[str, int]]]:
    import asyncio

    from django.conf import settings

    from tests.fakes.model_server import ModelServer
    from verifier.gate import Gate

    items = _debias_items(raw_items)
    raws = [raw for _, raw in items]
    server = ModelServer().start()
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = server.url
    settings.VERIFIER_API_KEY = "bench"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 6.0
    settings.VERIFIER_BLIND = True
    server.script.probabilities = {item.text: dict(raw["probabilities"]) for item, raw in items}
    knows = {
        item.text: {
            item.options[i]: float(raw["blind"].get(letter, 0.0))
            for i, letter in enumerate("ABCDEF"[: len(item.options)])
        }
        for item, raw in items
        if isinstance(raw.get("blind"), dict)
    }

    async def run() -> list[Any]:
        async with Gate.from_settings(threshold=threshold) as gate:
            return await gate.check_all([item for item, _ in items])

    rows = [("always A", "unshuffled (before)", _unshuffled_a_row(items, threshold))]
    try:
        for checker in ("knows (recorded)", "always A"):
            server.script.choice_texts = knows if checker.startswith("knows") else {}
            server.script.default_choice = None if checker.startswith("knows") else "A"
            for orders in (1, 2):
                settings.VERIFIER_BLIND_ORDERS = orders
                rows.append((checker, f"{orders} shuffled order(s)", _debias_row(asyncio.run(run()), raws, threshold)))
    finally:
        server.stop()
    return rows


def format_debias(rows: list[tuple[str, str, dict[str, int]]], *, good: int, defective: int) -> str:
    lines = [
        f"{'blind checker':<18} {'options shown':<22} {'flags good':>10} {'flags defective':>15} {'caught':>7} "
        f"{'good dropped':>12} {'by position':>11} {'unv':>4}"
    ]
    for checker, shown, row in rows:
        lines.append(
            f"{checker:<18} {shown:<22} {row['flags_good']:>6}/{good:<3} {row['flags_defective']:>11}/{defective:<3} "
            f"{row['caught']:>4}/{defective:<2} {row['good_dropped']:>8}/{good:<3} {row['order_dependent']:>11} "
            f"{row['unverified']:>4}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_SET))
    parser.add_argument("--threshold", type=float, help="instead of the stored (or default) threshold")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--blind-debias", action="store_true", help="run the set live: blind checkers x orders")
    args = parser.parse_args()
    path = Path(args.file)
    data = json.loads(path.read_text(encoding="utf-8"))
    raw_items = labelled_set_items(data)
    if args.blind_debias:
        import logging

        logging.getLogger("verifier").setLevel(logging.ERROR)
        logging.getLogger("httpx").setLevel(logging.WARNING)
        threshold = args.threshold if args.threshold is not None else conf.default_threshold()
        rows = blind_debias(raw_items, threshold=threshold)
        good = sum(1 for raw in raw_items if raw["label"] == GOOD)
        print(f"labelled set: {path}, threshold {threshold:g}")
        print(format_debias(rows, good=good, defective=len(raw_items) - good))
        return
    items = [replay(raw, number, disagree_at=conf.blind_disagree()) for number, raw in enumerate(raw_items, start=1)]
    results = report(items, threshold=args.threshold)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_report(results, path=path, about=data.get("about", "") if isinstance(data, dict) else ""))


if __name__ == "__main__":
    main()
