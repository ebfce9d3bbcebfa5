"""The question bank: every question a host owns (the questions of their rounds) and the sample packs' questions,
searched by words (quiz/questions/search_index.py), filtered by kind, language, how the gate last checked it and
whether it was played, and picked into a new round.

Private to its owner: a question is found, shown or picked only through the owner key of one of its rounds (or
because it is in a sample pack). Whether a question was played is the game's to know: quiz imports no lobby, so
the caller passes the played questions' ids in (`played_ids`, lobby.reads.question_record.played_question_ids)."""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.text import clean_line
from quiz.checking.rounds import round_check_refresh
from quiz.exceptions import QuizError
from quiz.forms import MAX_EDITOR_QUESTIONS
from quiz.kinds import KINDS
from quiz.models import CheckStatus, Provenance, Question, Round, RoundQuestion
from quiz.questions.search_index import MAX_SEARCH_CHARS, search_words, words_match
from quiz.services import round_create, round_language_default
from quiz.validation import LANGUAGES
from verifier.models import Verdict, VerdictOutcome

# How the gate last checked a question, as the bank's filter names it: the verdict's outcome ("unverified" is the
# gate failing open: the checker gave no answer and the question was played all the same); never checked counts
# as "unchecked".
CHECKS = (VerdictOutcome.PASSED, VerdictOutcome.DROPPED, VerdictOutcome.UNVERIFIED, VerdictOutcome.UNCHECKED)
PLAYED, NOT_PLAYED = "yes", "no"
MINE, PACKS = "mine", "packs"
# A new round from picked questions stays editable: no more than the editor takes.
MAX_PICKED = MAX_EDITOR_QUESTIONS


def check_words(outcome: str | None) -> str:
    """How the gate last checked a question, in the reader's language (None: never checked)."""
    words = {
        VerdictOutcome.PASSED: _("Passed the checker"),
        VerdictOutcome.DROPPED: _("Doubted by the checker"),
        VerdictOutcome.UNVERIFIED: _("Not verified (the checker gave no answer)"),
    }
    return words.get(outcome or "", _("Never checked"))


class QuestionNotFound(QuizError):
    pass


@dataclass(frozen=True)
class BankQuery:
    words: str = ""
    kind: str = ""  # a quiz/kinds name
    language: str = ""  # a LANGUAGES code
    check: str = ""  # one of CHECKS
    played: str = ""  # PLAYED or NOT_PLAYED
    source: str = ""  # MINE or PACKS


@dataclass(frozen=True)
class BankResult:
    questions: QuerySet[Question]
    # What was searched for, as words, and a note when the search was cut or had no words in it (for the page).
    words: list[str]
    note: str = ""


def _owned_ids(owner_key: str) -> QuerySet:
    return RoundQuestion.objects.filter(round__owner_key=owner_key).values("question_id")


def _last_checked(outcomes: list[str]) -> QuerySet:
    """The ids of the questions whose latest verdict has one of these outcomes: read from the verdicts (those of
    the checked questions only), not by asking each question of the bank for its latest."""
    newer = Verdict.objects.filter(question_id=OuterRef("question_id")).filter(
        Q(created_at__gt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), id__gt=OuterRef("id"))
    )
    return Verdict.objects.filter(outcome__in=outcomes).exclude(Exists(newer)).values("question_id")


def bank_scope(*, owner_key: str) -> QuerySet[Question]:
    """Every question the owner may see in the bank: their rounds' and the sample packs'. An empty key owns
    nothing (a pack's rounds have no owner key)."""
    visible = Q(pack__isnull=False, provenance=Provenance.PACK)
    if owner_key:
        visible |= Q(pk__in=_owned_ids(owner_key))
    return Question.objects.filter(visible)


def bank_search(*, owner_key: str, query: BankQuery, played_ids: QuerySet | None = None) -> BankResult:
    """The owner's questions that match, newest first, each annotated with `last_check` (its latest verdict's
    outcome, None when never checked). `played_ids`: a query of the question ids the game played for this owner
    (needed only for the played filter)."""
    questions = bank_scope(owner_key=owner_key).annotate(
        last_check=Subquery(
            Verdict.objects.filter(question=OuterRef("pk")).order_by("-created_at", "-id").values("outcome")[:1]
        )
    )
    note = ""
    typed = query.words.strip()
    words = search_words(typed)
    if typed and not words:
        note = _("There are no words to search for in what you typed: type words from a question.")
    elif len(typed) > MAX_SEARCH_CHARS:
        note = ngettext(
            "Only the first %(count)d character of a search is used.",
            "Only the first %(count)d characters of a search are used.",
            MAX_SEARCH_CHARS,
        ) % {"count": MAX_SEARCH_CHARS}
    if words:
        questions = questions.filter(words_match(words))
    if query.kind in KINDS:
        questions = questions.filter(kind=query.kind)
    if query.language in LANGUAGES:
        in_language = Q(pack__language=query.language, pack__isnull=False)
        if owner_key:
            in_language |= Q(
                pk__in=RoundQuestion.objects.filter(round__owner_key=owner_key, round__language=query.language).values(
                    "question_id"
                )
            )
        questions = questions.filter(in_language)
    if query.check == VerdictOutcome.UNCHECKED:
        checked = [outcome for outcome in CHECKS if outcome != VerdictOutcome.UNCHECKED]
        questions = questions.exclude(pk__in=_last_checked(checked))
    elif query.check in CHECKS:
        questions = questions.filter(pk__in=_last_checked([query.check]))
    if played_ids is not None and query.played == PLAYED:
        questions = questions.filter(pk__in=played_ids)
    elif played_ids is not None and query.played == NOT_PLAYED:
        questions = questions.exclude(pk__in=played_ids)
    if query.source == MINE:
        questions = questions.filter(pk__in=_owned_ids(owner_key)) if owner_key else questions.none()
    elif query.source == PACKS:
        questions = questions.filter(pack__isnull=False, provenance=Provenance.PACK)
    return BankResult(questions=questions.select_related("pack").order_by("-created_at", "-id"), words=words, note=note)


def bank_question_get(*, owner_key: str, question_id: int) -> Question:
    question = bank_scope(owner_key=owner_key).filter(pk=question_id).select_related("pack").first()
    if question is None:
        raise QuestionNotFound(_("That question does not exist or is not yours."))
    return question


def bank_question_rounds(*, owner_key: str, question: Question) -> list[Round]:
    """The owner's rounds the question is in, newest first."""
    if not owner_key:
        return []
    return list(Round.objects.filter(owner_key=owner_key, entries__question=question).distinct())


@transaction.atomic
def bank_round_create(*, owner_key: str, question_ids: list[int], title: str) -> Round:
    """A new round of the owner's from the picked questions, in the order picked (the same rows: their checks,
    plays and reports stay with them). Its language is the one its questions share, else the page's; its check
    label is summed up from their verdicts."""
    if not owner_key:
        raise QuizError(_("This browser session has no rounds yet: reload the page."))
    picked = list(dict.fromkeys(question_ids))
    if not picked:
        raise QuizError(_("Pick at least one question for the new round."))
    if len(picked) > MAX_PICKED:
        raise QuizError(
            ngettext(
                "A round made from the bank takes at most %(count)d question: pick fewer.",
                "A round made from the bank takes at most %(count)d questions: pick fewer.",
                MAX_PICKED,
            )
            % {"count": MAX_PICKED}
        )
    found = {question.pk: question for question in bank_scope(owner_key=owner_key).filter(pk__in=picked)}
    if len(found) != len(picked):
        raise QuizError(_("Some of the picked questions do not exist or are not yours: search again."))
    questions = [found[question_id] for question_id in picked]
    languages = {question.pack.language for question in questions if question.pack_id is not None}
    languages |= set(
        Round.objects.filter(owner_key=owner_key, entries__question__in=questions).values_list("language", flat=True)
    )
    round_ = round_create(
        title=clean_line(title)[:200] or _("Questions from the bank"),
        questions=questions,
        provenance=Provenance.HOST,
        check_status=CheckStatus.UNCHECKED,
        owner_key=owner_key,
        language=languages.pop() if len(languages) == 1 else round_language_default(),
    )
    if Verdict.objects.filter(question__in=questions).exists():
        round_check_refresh(round_=round_)
    return round_
