"""The review side's writes: flags from the game, labels, fixes, and premise groups.

A defective question (dropped by the gate, or labelled so) groups the questions of its round that share its
premise; they are flagged and re-checked blind by a Celery task queued after commit (review/tasks.py).
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from quiz.models import Question, Round, RoundQuestion
from quiz.pictures.images import QuestionImage
from quiz.selectors import round_question_facts_forget
from quiz.services import question_create
from quiz.validation import clean_question
from review.models import (
    Flag,
    FlagKind,
    PremiseCheck,
    PremiseGroup,
    PremiseMember,
    PremiseTrigger,
    Review,
    ReviewLabel,
)
from review.premises.premise import PremiseText, key_terms, premise_group
from review.tasks import premise_recheck


def flag_record(*, question_id: int, kind: str, room_code: str = "", detail: dict[str, Any] | None = None) -> Flag:
    """The game tells the review side that a question may be wrong (a report, the crowd)."""
    if kind not in FlagKind.values:
        raise ValueError(f"unknown flag kind {kind!r}")
    return Flag.objects.create(question_id=question_id, kind=kind, room_code=room_code[:8], detail=detail or {})


def review_label(*, question: Question, label: str, reviewer: Any = None, note: str = "") -> Review:
    if label not in ReviewLabel.values:
        raise ValueError(f"unknown label {label!r}")
    return Review.objects.create(question=question, label=label, note=" ".join(note.split())[:500], reviewer=reviewer)


def reviews_label(*, questions: Iterable[Question], label: str, reviewer: Any = None, note: str = "") -> list[Review]:
    """Label questions; a defective one sends the questions that share its premise to be re-checked blind."""
    with transaction.atomic():
        reviews = [review_label(question=question, label=label, reviewer=reviewer, note=note) for question in questions]
        if label == ReviewLabel.DEFECTIVE:
            origin_ids = [review.question_id for review in reviews]
            premise_groups_create(origin_ids=origin_ids, trigger=PremiseTrigger.DEFECTIVE)
        return reviews


@dataclass(frozen=True)
class FixedQuestion:
    original: Question
    fixed: Question
    review: Review
    rounds_updated: int


@transaction.atomic
def question_fix(
    *,
    question: Question,
    raw: dict[str, Any],
    reviewer: Any = None,
    note: str = "",
    use_in_rounds: bool = False,
    image: QuestionImage | None = None,
) -> FixedQuestion:
    """Approve a corrected copy of `question`; the original stays as it was, labelled defective.

    `raw` goes through the one validation every question passes (raises quiz.exceptions.InvalidQuestion).
    `image` is the fixed question's picture as the form holds it (None: none).
    With `use_in_rounds`, rounds that hold the original get the copy in its place for their next games.
    """
    data = clean_question(raw)
    if image is not None:  # the picture the editor kept or took (already stored), which `raw` cannot carry
        data = replace(data, image=image)
    # The original was wrong: its round-mates that share its premise are re-checked (before the fix replaces it).
    premise_groups_create(origin_ids=[question.pk], trigger=PremiseTrigger.DEFECTIVE)
    fixed = question_create(data=data, provenance=question.provenance, pack=question.pack, model_id=question.model_id)
    review = Review.objects.create(
        question=question,
        label=ReviewLabel.DEFECTIVE,
        note=(" ".join(note.split()) or f"fixed as question {fixed.pk}")[:500],
        reviewer=reviewer,
        fixed_as=fixed,
    )
    Review.objects.create(
        question=fixed, label=ReviewLabel.CORRECT, note=f"fixed copy of question {question.pk}", reviewer=reviewer
    )
    rounds_updated = 0
    if use_in_rounds:
        round_ids = set(RoundQuestion.objects.filter(question=question).values_list("round_id", flat=True))
        rounds_updated = RoundQuestion.objects.filter(question=question).update(question=fixed)
        for round_id in round_ids:
            round_question_facts_forget(round_id=round_id)
    return FixedQuestion(original=question, fixed=fixed, review=review, rounds_updated=rounds_updated)


# -- premise groups --------------------------------------------------------------------------------------------


def _premise_text(question: Question) -> PremiseText:
    options = list(question.options or [])
    marked = options[question.correct_index] if 0 <= question.correct_index < len(options) else ""
    return PremiseText(question_id=question.pk, text=question.text, explanation=question.explanation, marked=marked)


def _origin_rounds(origin: Question, round_id: int | None) -> list[int]:
    if round_id is not None:
        return [round_id]
    # The rounds that hold it, and the round it was dropped from (its earlier groups remember that one).
    held = set(RoundQuestion.objects.filter(question=origin).values_list("round_id", flat=True))
    earlier = PremiseGroup.objects.filter(origin=origin, round__isnull=False).values_list("round_id", flat=True)
    return sorted(held | set(earlier))


@transaction.atomic
def premise_groups_create(*, origin_ids: list[int], trigger: str, round_id: int | None = None) -> list[PremiseGroup]:
    """For each defective (dropped or labelled) question, the questions of its round that share its key terms.

    Each becomes a premise group: its members are flagged for review (kind `premise`) and re-checked with the
    blind question in a Celery task queued after commit. Running it again for the same origin and round refreshes
    the group (members found again are re-checked, not flagged twice). With no `round_id`, every round that
    holds the origin, and the round it was dropped from, is searched.
    """
    if trigger not in PremiseTrigger.values:
        raise ValueError(f"unknown premise trigger {trigger!r}")
    groups: list[PremiseGroup] = []
    for origin in Question.objects.filter(pk__in=origin_ids).order_by("pk"):
        origin_text = _premise_text(origin)
        for found_round in Round.objects.filter(pk__in=_origin_rounds(origin, round_id)).order_by("pk"):
            others = [
                entry.question
                for entry in found_round.entries.select_related("question").order_by("position")
                if entry.question_id != origin.pk
            ]
            members = premise_group(origin_text, [_premise_text(question) for question in others])
            if not members:
                continue
            group, _ = PremiseGroup.objects.update_or_create(
                origin=origin,
                round=found_round,
                defaults={
                    "trigger": trigger,
                    "terms": [term.label for term in key_terms(*_origin_pieces(origin_text)).values()][:30],
                    "checked_at": None,
                },
            )
            by_id = {question.pk: question for question in others}
            for member_text, shared in members:
                labels = [term.label for term in shared][:20]
                member, created = PremiseMember.objects.update_or_create(
                    group=group,
                    question_id=member_text.question_id,
                    defaults={"shared": labels, "status": PremiseCheck.PENDING, "checked_at": None},
                )
                if created:
                    flag_record(
                        question_id=by_id[member.question_id].pk,
                        kind=FlagKind.PREMISE,
                        detail={"premise_group": group.pk, "origin": origin.pk, "shared": labels},
                    )
            groups.append(group)
    if groups:
        premise_recheck.delay_on_commit(group_ids=[group.pk for group in groups])
    return groups


def _origin_pieces(text: PremiseText) -> tuple[str, str, str]:
    return text.text, text.explanation, text.marked
