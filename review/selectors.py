"""Reads for the review side: labels, the labelled scores the sweep needs, the queue and a question's evidence."""

from django.db.models import BigIntegerField, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from quiz.models import Question
from review.models import Flag, FlagKind, PremiseGroup, PremiseMember, Review, ReviewItem
from review.thresholds.sweep import LabelledScore
from verifier.decisions import BLIND_MISSING_PREFIX, CHECKER_DISAGREES, MODEL_CHANGED
from verifier.models import Verdict, VerdictOutcome

# The verdict reason of an imported graded set (`sweep --import`): already labelled, it does not queue a question.
IMPORTED = "imported"


def latest_labels(*, question_ids: list[int] | None = None) -> dict[int, str]:
    """question id -> its latest label (the latest review counts)."""
    reviews = Review.objects.order_by("question_id", "created_at", "id")
    if question_ids is not None:
        reviews = reviews.filter(question_id__in=question_ids)
    labels: dict[int, str] = {}
    for question_id, label in reviews.values_list("question_id", "label"):
        labels[question_id] = label
    return labels


def latest_label(*, question_id: int) -> str | None:
    return latest_labels(question_ids=[question_id]).get(question_id)


def labelled_scores(*, backend: str | None = None, model_id: str | None = None) -> list[LabelledScore]:
    """Every labelled question with a recorded score: per (backend, model id) its latest scored verdict."""
    labels = latest_labels()
    verdicts = Verdict.objects.filter(score__isnull=False, question_id__in=list(labels)).order_by("created_at", "id")
    if backend is not None:
        verdicts = verdicts.filter(backend=backend)
    if model_id is not None:
        verdicts = verdicts.filter(model_id=model_id)
    latest: dict[tuple[str, str, int], LabelledScore] = {}
    for question_id, backend_name, model, score, probabilities, details in verdicts.values_list(
        "question_id", "backend", "model_id", "score", "probabilities", "details"
    ):
        second = details.get("second_opinion") if isinstance(details, dict) else None
        latest[(backend_name, model, question_id)] = LabelledScore(
            question_id=question_id,
            backend=backend_name,
            model_id=model,
            score=float(score),
            label=labels[question_id],
            probabilities=probabilities if isinstance(probabilities, dict) else {},
            second_opinion=second if isinstance(second, dict) else None,
        )
    return list(latest.values())


def review_queue() -> QuerySet[ReviewItem]:
    """Every question that was dropped, passed unverified or without its blind check, that the blind checker
    answered differently, that a checker other than the pinned model judged (`model_changed`), that was reported,
    flagged by the crowd or grouped with a defective question by a shared premise; newest signal first."""
    # An imported graded set (`sweep --import`) is already labelled: its verdicts do not queue it.
    held = Verdict.objects.filter(
        Q(outcome__in=[VerdictOutcome.DROPPED, VerdictOutcome.UNVERIFIED])
        | Q(reason=CHECKER_DISAGREES)
        | Q(reason=MODEL_CHANGED)
        | Q(reason__startswith=BLIND_MISSING_PREFIX),
        question=OuterRef("pk"),
    ).exclude(reason=IMPORTED)
    checker_chose = Verdict.objects.filter(question=OuterRef("pk"), details__has_key="checker_chose")
    latest_group = Subquery(
        PremiseMember.objects.filter(question=OuterRef("pk")).order_by("-group_id").values("group_id")[:1]
    )
    origin_group = Subquery(PremiseGroup.objects.filter(origin=OuterRef("pk")).order_by("-id").values("id")[:1])
    flags = Flag.objects.filter(question=OuterRef("pk"))
    last_signal = Subquery(flags.order_by("-created_at").values("created_at")[:1])
    latest_verdict = Verdict.objects.filter(question=OuterRef("pk")).order_by("-created_at", "-id")
    latest_review = Review.objects.filter(question=OuterRef("pk")).order_by("-created_at", "-id")
    return (
        ReviewItem.objects.annotate(
            is_held=Exists(held),
            is_reported=Exists(flags.filter(kind=FlagKind.REPORTED)),
            is_crowd_flagged=Exists(flags.filter(kind=FlagKind.CROWD)),
            is_premise_flagged=Exists(flags.filter(kind=FlagKind.PREMISE)),
            checker_disagrees=Exists(checker_chose),
            premise_group=Coalesce(latest_group, origin_group, output_field=BigIntegerField()),
            queued_at=Coalesce(last_signal, F("created_at")),
            latest_outcome=Subquery(latest_verdict.values("outcome")[:1]),
            latest_reason=Subquery(latest_verdict.values("reason")[:1]),
            latest_score=Subquery(latest_verdict.values("score")[:1]),
            latest_threshold=Subquery(latest_verdict.values("threshold")[:1]),
            latest_backend=Subquery(latest_verdict.values("backend")[:1]),
            latest_model_id=Subquery(latest_verdict.values("model_id")[:1]),
            latest_requested_model_id=Subquery(latest_verdict.values("requested_model_id")[:1]),
            label=Subquery(latest_review.values("label")[:1]),
        )
        .filter(Q(is_held=True) | Q(is_reported=True) | Q(is_crowd_flagged=True) | Q(is_premise_flagged=True))
        .select_related("pack")
        .order_by("-queued_at", "-pk")
    )


def question_flags(*, question: Question, kind: str) -> list[Flag]:
    return list(Flag.objects.filter(question=question, kind=kind).order_by("created_at", "id"))


def question_premise_groups(*, question: Question) -> list[PremiseGroup]:
    """The premise groups a question is the origin of or a member of, newest first, members prefetched."""
    return list(
        PremiseGroup.objects.filter(Q(origin=question) | Q(members__question=question))
        .distinct()
        .select_related("origin", "round")
        .prefetch_related("members__question")
        .order_by("-created_at", "-id")
    )
