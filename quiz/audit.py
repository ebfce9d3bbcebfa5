"""The audit trail of a question: where it came from and every check the gate made of it, with what the apps
above quiz add (review/audit.py adds the reviewer's label and fix) through `audit_extension_register`, as quiz
never imports them. Plain data (JSON-ready dicts): the round exports, a room's audit.json and a game's results
page all read these.

    question_audits(questions) -> [audit, ...]      one query per kind of record for many questions
    question_audit(question)   -> audit
    round_audit(round_)        -> {"round": {...}, "questions": [audit with "position", ...]}
"""

from collections.abc import Callable, Iterable
from typing import Any

from core import cost
from quiz.cost_line import cost_line
from quiz.kinds import kind_of
from quiz.models import GenerationJob, JobKind, Provenance, Question, Round
from verifier import causes
from verifier.conf import model_prices
from verifier.models import Verdict
from verifier.usage import decision_usages

# (question ids) -> {question id: {key: value}}; each key is merged into that question's audit.
AuditExtension = Callable[[list[int]], dict[int, dict[str, Any]]]
_extensions: dict[str, AuditExtension] = {}


def audit_extension_register(name: str, extension: AuditExtension) -> None:
    """Register (or, under the same name, replace) what an app above quiz adds to every question's audit."""
    _extensions[name] = extension


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def verdict_audit(verdict: Verdict, prices: dict[str, cost.Price] | None = None) -> dict[str, Any]:
    """One check as recorded, every field; `details` whole (a second opinion, the blind answer, calls ...), and
    what it cost at MODEL_PRICES by role (`cost`)."""
    details = dict(verdict.details or {})
    usages = decision_usages(details)
    return {
        "at": _when(verdict.created_at),
        "backend": verdict.backend,
        "served_model_id": verdict.model_id,
        "requested_model_id": verdict.requested_model_id,
        "probabilities": dict(verdict.probabilities or {}),
        "score": verdict.score,
        "threshold": verdict.threshold,
        "calibrated": verdict.calibrated,
        "outcome": verdict.outcome,
        # What the checker did, one word (verifier/causes.py) and in words: rejected, too slow, unreachable ...
        "checker_did": causes.cause_of(outcome=verdict.outcome, reason=verdict.reason),
        "checker_did_words": causes.cause_words(outcome=verdict.outcome, reason=verdict.reason),
        "reason": verdict.reason,
        "message": verdict.message,
        "latency_ms": verdict.latency_ms,
        "input_tokens": verdict.input_tokens,
        "output_tokens": verdict.output_tokens,
        "second_opinion": details.get("second_opinion"),
        "cost": cost.round_cost(usages, model_prices() if prices is None else prices) if usages else None,
        "details": details,
    }


def _origin(question: Question) -> dict[str, Any]:
    return {
        "provenance": question.provenance,
        "provenance_label": (
            str(Provenance(question.provenance).label) if question.provenance in Provenance.values else ""
        ),
        "pack": {"slug": question.pack.slug, "title": question.pack.title} if question.pack_id else None,
        "host": question.provenance == Provenance.HOST,
        "writer_model_id": question.model_id,
        "writer_served_model_id": question.served_model_id,
        "grounded_source": question.source,
        "imported_from": question.imported_from,
        "created_at": _when(question.created_at),
    }


def question_audits(questions: Iterable[Question]) -> list[dict[str, Any]]:
    questions = list(questions)
    ids = [question.pk for question in questions]
    checks: dict[int, list[dict[str, Any]]] = {question_id: [] for question_id in ids}
    prices = model_prices()
    for verdict in Verdict.objects.filter(question_id__in=ids).order_by("created_at", "id"):
        checks[verdict.question_id].append(verdict_audit(verdict, prices))
    added: list[dict[int, dict[str, Any]]] = [extension(ids) for extension in _extensions.values()]
    audits = []
    for question in questions:
        audit: dict[str, Any] = {
            "question_id": question.pk,
            "question": question.text,
            "kind": kind_of(question).name,
            "options": list(question.options),
            "correct": kind_of(question).csv_cells(question)["correct"],
            "correct_option": kind_of(question).right_text(question),
            "explanation": question.explanation,
            "origin": _origin(question),
            "checks": checks[question.pk],
        }
        for extra in added:
            audit.update(extra.get(question.pk, {}))
        audits.append(audit)
    return audits


def question_audit(question: Question) -> dict[str, Any]:
    return question_audits([question])[0]


def round_audit(round_: Round) -> dict[str, Any]:
    entries = list(round_.entries.select_related("question", "question__pack"))
    audits = question_audits(entry.question for entry in entries)
    for entry, audit in zip(entries, audits, strict=True):
        audit["position"] = entry.position
    job = (
        GenerationJob.objects.filter(round=round_, kind=JobKind.WRITE)
        .values("pk", "topic", "source_name", "model_id", "difficulty", "language")
        .first()
    )
    return {
        "round": {
            "id": round_.pk,
            "title": round_.title,
            "provenance": round_.provenance,
            "pack": round_.pack.slug if round_.pack_id else None,
            "check_status": round_.check_status,
            "check_label": str(round_.check_label),
            "created_at": _when(round_.created_at),
            # What writing and checking it cost, by role and in all (core.cost.round_cost), and in one line.
            "cost": round_.cost or None,
            "cost_line": cost_line(round_.cost),
            # A model-written round: what was asked for, and the source text's name when it was grounded.
            "generation": {
                "job_id": job["pk"],
                "topic": job["topic"],
                "source_name": job["source_name"],
                "writer_model_id": job["model_id"],
                "difficulty": job["difficulty"],
                "language": job["language"],
            }
            if job
            else None,
        },
        "questions": audits,
    }
