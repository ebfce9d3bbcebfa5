from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import translation

from core.text import clean_line
from quiz.exceptions import QuizError
from quiz.models import CheckStatus, Pack, Provenance, Question, Round, RoundQuestion
from quiz.pictures.images import image_store
from quiz.validation import QuestionData


def question_create(
    *,
    data: QuestionData,
    provenance: str,
    pack: Pack | None = None,
    model_id: str = "",
    served_model_id: str = "",
    imported_from: str = "",
) -> Question:
    return Question.objects.create(
        kind=data.kind,
        key=dict(data.key),
        text=data.text,
        options=list(data.options),
        correct_index=data.correct_index,
        explanation=data.explanation,
        source=data.source,
        provenance=provenance,
        pack=pack,
        model_id=model_id,
        served_model_id=served_model_id[:200],
        image_name=image_store(data.image),
        image_alt=data.image.alt if data.image else "",
        seconds=data.seconds,
        imported_from=imported_from[:200],
    )


@transaction.atomic
def round_create(
    *,
    title: str,
    questions: Iterable[Question],
    provenance: str,
    check_status: str,
    pack: Pack | None = None,
    owner_key: str = "",
    language: str | None = None,
    check_counts: dict | None = None,
) -> Round:
    round_ = Round.objects.create(
        title=clean_line(title)[:200],
        provenance=provenance,
        check_status=check_status,
        check_counts=check_counts or {},
        pack=pack,
        owner_key=owner_key,
        language=language or round_language_default(),
    )
    RoundQuestion.objects.bulk_create(
        RoundQuestion(round=round_, question=question, position=position) for position, question in enumerate(questions)
    )
    return round_


def round_create_from_pack(*, pack: Pack) -> Round:
    questions = list(pack.questions.order_by("id"))
    if not questions:
        raise QuizError("That pack has no questions.")
    return round_create(
        title=pack.title,
        questions=questions,
        provenance=Provenance.PACK,
        check_status=CheckStatus.HAND_CHECKED,
        pack=pack,
        language=pack.language,
    )


@transaction.atomic
def round_language_default() -> str:
    """The language of the page the host is on (the request's active language), else the site's."""
    active = translation.get_language() or settings.LANGUAGE_CODE
    return translation.get_supported_language_variant(active)


def round_create_for_host(
    *, title: str, questions: list[QuestionData], owner_key: str, imported_from: str = ""
) -> Round:
    if not questions:
        raise QuizError("A round needs at least one question.")
    created = [
        question_create(data=data, provenance=Provenance.HOST, imported_from=imported_from) for data in questions
    ]
    return round_create(
        title=clean_line(title)[:200] or "My questions",
        questions=created,
        provenance=Provenance.HOST,
        check_status=CheckStatus.UNCHECKED,
        owner_key=owner_key,
    )
