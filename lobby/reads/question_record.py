"""A question's record in its owner's bank: what the gate said of it each time it was checked (model, score,
threshold, when), how often the owner's games played it and the share of their players who answered it right,
what players reported, and the reviewers' labels, so a host sees which questions have earned trust.

It reads the game (lobby), the review side (review) and quiz's bank, which is why it lives here: quiz may import
neither of the others. Only the owner's games count (rooms they host, or of their rounds): a sample pack's
question shows what it did in this host's games, never another host's."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext as _

from lobby.models import Answer, Report, Room
from lobby.rules import machine
from lobby.rules.machine import Phase
from quiz.checking.rounds import CheckMark, question_check_history
from quiz.kinds import kind_of
from quiz.models import Question, Round, RoundQuestion
from quiz.questions.bank import bank_question_get, bank_question_rounds
from review.models import Flag, FlagKind, Review, ReviewLabel

# A room has closed its current question in these phases (lobby.rules.machine.closed_questions says the same).
_CLOSED_PHASES = (Phase.REVEAL, Phase.LEADERBOARD, Phase.FINISHED)


@dataclass(frozen=True)
class CheckLine:
    when: datetime
    mark: CheckMark


@dataclass(frozen=True)
class LabelLine:
    label: str  # in the reader's language
    defective: bool
    note: str
    when: datetime


@dataclass(frozen=True)
class ReportLine:
    text: str
    room_code: str
    when: datetime


@dataclass(frozen=True)
class QuestionRecord:
    question: Question
    rounds: list[Round]
    checks: list[CheckLine]  # newest first
    plays: int  # games of the owner's that closed it (or, homework, where anyone answered it)
    answered: int
    answered_right: int
    scored: bool  # False for a kind with no right answer (a poll, a word cloud, a slide)
    reports: list[ReportLine]
    labels: list[LabelLine]  # newest first: the first is the one that counts
    flags: list[str]  # the other signs of doubt, in words (the crowd disagreed, a shared premise)

    @property
    def share_right(self) -> float | None:
        if not self.scored or not self.answered:
            return None
        return self.answered_right / self.answered

    @property
    def share_right_percent(self) -> int | None:
        share = self.share_right
        return None if share is None else round(share * 100)

    @property
    def imported_from(self) -> str:
        return self.question.imported_from


def _owner_rooms(owner_key: str) -> QuerySet[Room]:
    if not owner_key:
        return Room.objects.none()
    return Room.objects.filter(Q(owner_key=owner_key) | Q(round__owner_key=owner_key))


def played_question_ids(*, owner_key: str) -> QuerySet:
    """The ids of the questions the owner's games played: a room closed it, or someone answered it (homework has
    no room-wide close). For the bank's played filter (quiz.questions.bank.bank_search's `played_ids`)."""
    rooms = _owner_rooms(owner_key).filter(round_id=OuterRef("round_id"))
    closed = rooms.filter(
        Q(question_index__gt=OuterRef("position")) | Q(question_index=OuterRef("position"), phase__in=_CLOSED_PHASES)
    )
    answered = Answer.objects.filter(
        room__in=_owner_rooms(owner_key), room__round_id=OuterRef("round_id"), question_index=OuterRef("position")
    )
    # Only the rounds the owner's games were of: every other round's entries are never looked at.
    played_rounds = _owner_rooms(owner_key).values("round_id")
    return (
        RoundQuestion.objects.filter(round_id__in=played_rounds)
        .filter(Exists(closed) | Exists(answered))
        .values("question_id")
    )


def _label(label: str) -> str:
    words = {ReviewLabel.CORRECT: _("Labelled correct"), ReviewLabel.DEFECTIVE: _("Labelled defective")}
    return str(words.get(label, label))


def _flag(kind: str) -> str:
    words = {
        FlagKind.CROWD: _("The crowd disagreed with the marked answer"),
        FlagKind.PREMISE: _("Shares a premise with a question found defective"),
    }
    return str(words.get(kind, kind))


def question_record(*, owner_key: str, question_id: int) -> QuestionRecord:
    """The question's record as its owner sees it; quiz.questions.bank.QuestionNotFound when it is not theirs."""
    question = bank_question_get(owner_key=owner_key, question_id=question_id)
    kind = kind_of(question)
    rooms = list(_owner_rooms(owner_key).filter(round__entries__question=question).distinct())
    positions: dict[int, set[int]] = {}
    for round_id, position in RoundQuestion.objects.filter(
        question=question, round_id__in={room.round_id for room in rooms}
    ).values_list("round_id", "position"):
        positions.setdefault(round_id, set()).add(position)

    # Per room and position of the question, its answers counted in the database (a big room's other questions
    # are never read).
    at_question = Q(pk__in=[])
    for round_id, indexes in positions.items():
        at_question |= Q(room__round_id=round_id, question_index__in=indexes)
    counted = {
        (room_id, index): (total, right)
        for room_id, index, total, right in Answer.objects.filter(
            at_question, room__in=[room.pk for room in rooms], player__removed=False
        )
        .values("room_id", "question_index")
        .annotate(total=Count("id"), right=Count("id", filter=Q(correct=True)))
        .values_list("room_id", "question_index", "total", "right")
    }
    plays = answered = right = 0
    for room in rooms:
        closed = set(machine.closed_questions(room.position))
        for index in positions.get(room.round_id, set()):
            total, correct = counted.get((room.pk, index), (0, 0))
            plays += index in closed or total > 0
            answered += total
            right += correct

    codes = [room.code for room in rooms]
    reports = [
        ReportLine(text=text, room_code=code, when=when)
        for text, code, when in Report.objects.filter(question=question, room__in=[room.pk for room in rooms])
        .order_by("-created_at", "-id")
        .values_list("text", "room__code", "created_at")
    ]
    flags = [
        _flag(kind_name)
        for kind_name in Flag.objects.filter(question=question, room_code__in=[*codes, ""])
        .exclude(kind=FlagKind.REPORTED)  # a report is listed itself
        .order_by("created_at", "id")
        .values_list("kind", flat=True)
    ]
    labels = [
        LabelLine(label=_label(label), defective=label == ReviewLabel.DEFECTIVE, note=note, when=when)
        for label, note, when in Review.objects.filter(question=question).values_list("label", "note", "created_at")
    ]
    return QuestionRecord(
        question=question,
        rounds=bank_question_rounds(owner_key=owner_key, question=question),
        checks=[CheckLine(when=when, mark=mark) for when, mark in question_check_history(question_id=question.pk)],
        plays=plays,
        answered=answered,
        answered_right=right,
        scored=kind.scored and kind.asks,
        reports=reports,
        labels=labels,
        flags=flags,
    )
