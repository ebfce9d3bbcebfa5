"""Graded sets in and out: a labelled set (questions with recorded scores and labels) imported to calibrate the
gate from, and the labelled questions exported in the same format."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from quiz.exceptions import InvalidQuestion
from quiz.models import Provenance, Question
from quiz.services import question_create
from quiz.validation import clean_question
from review.models import Review, ReviewLabel
from review.selectors import IMPORTED, labelled_scores
from review.sweep import score_from_probabilities
from verifier import conf, policy
from verifier.models import Verdict, VerdictOutcome
from verifier.prompts import option_letters


@dataclass(frozen=True)
class ImportResult:
    created: int
    skipped: int


def labelled_set_items(data: Any) -> Any:
    """A labelled set is a JSON list of items, or an object {"about": ..., "items": [...]} that says where it
    came from."""
    if isinstance(data, dict) and "items" in data:
        return data["items"]
    return data


def labelled_set_import(*, items: list[dict[str, Any]], note: str = "imported labelled set") -> ImportResult:
    """Load a graded set: a list of {question, options, correct_index, explanation, backend, model_id,
    probabilities: {check: p}, label, [score], [blind: {option letter: p}]}. Each becomes a question, a verdict
    and a review. `blind` (the blind answer per option) adds P(marked) as the `blind` check unless given.

    A question already present with the same text, options, marked option and model id is skipped, so a set
    can be imported twice. Raises ValueError naming the first bad item; nothing is stored then.
    """
    if not isinstance(items, list):
        raise ValueError("a labelled set is a JSON list of objects")
    created = skipped = 0
    with transaction.atomic():
        for number, raw in enumerate(items, start=1):
            try:
                parsed = _parse_labelled(raw)
            except (InvalidQuestion, ValueError, TypeError, KeyError) as error:
                raise ValueError(f"item {number}: {error}") from None
            data, backend, model_id, probabilities, score, label = parsed
            duplicate = Question.objects.filter(
                text=data.text, options=list(data.options), correct_index=data.correct_index, model_id=model_id
            ).exists()
            if duplicate:
                skipped += 1
                continue
            question = question_create(data=data, provenance=Provenance.MODEL, model_id=model_id)
            Verdict.objects.create(
                question=question,
                backend=backend,
                model_id=model_id,
                probabilities=probabilities,
                score=score,
                threshold=conf.default_threshold(),
                outcome=VerdictOutcome.PASSED if score >= conf.default_threshold() else VerdictOutcome.DROPPED,
                reason=IMPORTED,
                details={"imported": True},
            )
            Review.objects.create(question=question, label=label, note=note[:500])
            created += 1
    return ImportResult(created=created, skipped=skipped)


def _parse_labelled(raw: Any) -> tuple[Any, str, str, dict[str, float], float, str]:
    if not isinstance(raw, dict):
        raise ValueError("each item must be an object")
    data = clean_question(
        {
            "text": raw.get("question"),
            "options": raw.get("options"),
            "correct_index": raw.get("correct_index"),
            "explanation": raw.get("explanation", ""),
        }
    )
    backend = str(raw.get("backend") or "").strip()
    model_id = str(raw.get("model_id") or "").strip()
    if not backend or not model_id:
        raise ValueError("backend and model_id are required")
    probabilities = raw.get("probabilities")
    if not isinstance(probabilities, dict) or not probabilities:
        raise ValueError("probabilities must be an object of check -> probability")
    if not all(isinstance(check, str) and policy.is_probability(p) for check, p in probabilities.items()):
        raise ValueError("every probability must be a number from 0 to 1")
    probabilities = {check: float(p) for check, p in probabilities.items()}
    blind = raw.get("blind")
    if blind is not None and policy.BLIND not in probabilities:
        probabilities[policy.BLIND] = blind_marked_probability(blind, options=data.options, marked=data.correct_index)
    score = raw.get("score")
    if score is None:
        score = score_from_probabilities(probabilities)
    if not policy.is_probability(score):
        raise ValueError("score must be a number from 0 to 1")
    label = raw.get("label")
    if label not in ReviewLabel.values:
        raise ValueError(f"label must be one of {', '.join(ReviewLabel.values)}")
    return data, backend, model_id, probabilities, round(float(score), 6), label


def blind_marked_probability(blind: Any, *, options: tuple[str, ...], marked: int) -> float:
    """P(marked) from a recorded blind answer {option letter: p}, normalised over the options' letters."""
    letters = option_letters(options)
    if not isinstance(blind, dict) or not all(policy.is_probability(p) for p in blind.values()):
        raise ValueError("blind must be an object of option letter -> probability")
    spread = policy.normalised({str(k): float(p) for k, p in blind.items()}, letters=letters)
    if spread is None:
        raise ValueError("blind gives no probability to any option")
    return round(spread[letters[marked]], 6)


def labelled_set_export() -> list[dict[str, Any]]:
    """Every labelled question with a recorded score, in the import format (to grade offline and share)."""
    items = labelled_scores()
    questions = Question.objects.in_bulk([item.question_id for item in items])
    return [
        {
            "question": questions[item.question_id].text,
            "options": list(questions[item.question_id].options),
            "correct_index": questions[item.question_id].correct_index,
            "explanation": questions[item.question_id].explanation,
            "backend": item.backend,
            "model_id": item.model_id,
            "probabilities": dict(item.probabilities),
            "score": item.score,
            "label": item.label,
        }
        for item in sorted(items, key=lambda item: (item.backend, item.model_id, item.question_id))
    ]
