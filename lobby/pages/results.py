"""A finished (or running) game as its host reads it afterwards: the standings, and per question how the room
answered it (share correct, the distribution, the median answer time), what flagged it and what players
reported. Also the host's past games. Reads only; the page (lobby/pages/views.py) renders what these return.

Questions and answers are in the round's order and option indexes, as the results CSV has them."""

import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Q
from django.utils.translation import gettext as _

from lobby.models import Answer, Player, Report, Room, VoidedQuestion
from lobby.rules import machine
from lobby.rules.machine import Phase
from lobby.tokens import read_host_token
from quiz.kinds import kind_of
from quiz.selectors import round_question_list
from review.models import Flag, FlagKind

LETTERS = "ABCDEF"


@dataclass(frozen=True)
class Standing:
    rank: int
    nickname: str
    score: int
    correct: int


@dataclass(frozen=True)
class OptionResult:
    letter: str
    text: str
    count: int
    share: float  # of the answers given to the question, 0..1
    correct: bool


@dataclass(frozen=True)
class FlagNote:
    kind: str  # the flag kind's label, e.g. "The crowd disagrees"
    detail: str


@dataclass(frozen=True)
class ReportNote:
    nickname: str
    text: str
    created_at: datetime


@dataclass(frozen=True)
class QuestionResult:
    index: int
    text: str
    explanation: str
    played: bool  # closed and scored; the others were never asked (or are open right now)
    voided: bool
    answered: int
    share_correct: float | None  # None when nobody answered, or for a poll
    median_ms: int | None
    options: list[OptionResult]
    # The right answer in words, for a kind without options to count (a typed answer, an order, a number).
    answer: str = ""
    # False for a poll: no right answer, so no "% correct" and no option marked as the answer.
    scored: bool = True
    flags: list[FlagNote] = field(default_factory=list)
    reports: list[ReportNote] = field(default_factory=list)

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def median_seconds(self) -> float | None:
        return None if self.median_ms is None else self.median_ms / 1000


@dataclass(frozen=True)
class GameResults:
    room: Room
    title: str
    finished: bool
    played: int  # questions closed
    standings: list[Standing]
    questions: list[QuestionResult]


def game_results(*, room: Room) -> GameResults:
    """Five queries whatever the room's size: questions, players, answers, flags, reports (and voided)."""
    questions = round_question_list(round_id=room.round_id)
    if room.written_live:
        # Its round may have grown after the game ended early: only what the game could play.
        questions = questions[: room.question_count]
    closed = set(machine.closed_questions(room.position))
    voided = set(VoidedQuestion.objects.filter(room=room).values_list("question_index", flat=True))
    players = list(Player.objects.filter(room=room, removed=False).values_list("id", "nickname", "score"))
    ranks = machine.rank([(player_id, score) for player_id, _, score in players])
    # Removed players are off the leaderboard, and out of these figures as the reveal left them out.
    answers = list(
        Answer.objects.filter(room=room, player__removed=False).values_list(
            "player_id", "question_index", "option", "response", "correct", "elapsed_ms"
        )
    )
    correct_by_player: dict[int, int] = {}
    by_question: dict[int, list[tuple[int, Any, bool, int]]] = {}
    for player_id, index, option, response, correct, elapsed_ms in answers:
        by_question.setdefault(index, []).append((option, response, correct, elapsed_ms))
        if correct and index in closed and index not in voided:
            correct_by_player[player_id] = correct_by_player.get(player_id, 0) + 1

    question_ids = {question.pk: index for index, question in enumerate(questions)}
    flags: dict[int, list[FlagNote]] = {}
    for question_id, kind, detail in (
        Flag.objects.filter(room_code=room.code, question_id__in=question_ids)
        .exclude(kind=FlagKind.REPORTED)  # a report's flag: the report itself is listed
        .order_by("created_at", "id")
        .values_list("question_id", "kind", "detail")
    ):
        flags.setdefault(question_ids[question_id], []).append(
            FlagNote(
                kind=str(FlagKind(kind).label), detail=_flag_detail(kind, detail, questions[question_ids[question_id]])
            )
        )
    reports: dict[int, list[ReportNote]] = {}
    for question_id, nickname, text, created_at in (
        Report.objects.filter(room=room, question_id__in=question_ids)
        .order_by("created_at", "id")
        .values_list("question_id", "player__nickname", "text", "created_at")
    ):
        reports.setdefault(question_ids[question_id], []).append(
            ReportNote(nickname=nickname, text=text, created_at=created_at)
        )

    results = []
    for index, question in enumerate(questions):
        kind = kind_of(question)
        if not kind.asks:
            closed.discard(index)  # a slide is counted nowhere as a question
            continue
        given = by_question.get(index, []) if index in closed else []
        counts = kind.tally(question, [(option, response) for option, response, _, _ in given])
        marked = kind.marked(question)
        total = len(given)
        results.append(
            QuestionResult(
                index=index,
                text=question.text,
                explanation=question.explanation,
                played=index in closed,
                voided=index in voided,
                answered=total,
                share_correct=(sum(1 for _, _, correct, _ in given if correct) / total)
                if total and kind.scored
                else None,
                scored=kind.scored,
                median_ms=int(statistics.median(elapsed for _, _, _, elapsed in given)) if total else None,
                options=[
                    OptionResult(
                        letter=LETTERS[option],
                        text=text,
                        count=counts[option] if option < len(counts) else 0,
                        share=counts[option] / total if total and option < len(counts) else 0.0,
                        correct=option in marked,
                    )
                    for option, text in enumerate(kind.option_texts(question))
                ],
                answer="" if kind.tallied else kind.answer_text(question),
                flags=flags.get(index, []),
                reports=reports.get(index, []),
            )
        )
    standings = [
        Standing(rank=ranks[player_id], nickname=nickname, score=score, correct=correct_by_player.get(player_id, 0))
        for player_id, nickname, score in sorted(players, key=lambda player: (ranks[player[0]], player[1].casefold()))
    ]
    return GameResults(
        room=room,
        title=room.round.title,
        finished=room.phase == Phase.FINISHED,
        played=len(closed),
        standings=standings,
        questions=results,
    )


def _flag_detail(kind: str, detail: dict, question) -> str:
    if kind == FlagKind.CROWD:
        option = detail.get("option")
        share = detail.get("share")
        if isinstance(option, int) and 0 <= option < len(question.options) and isinstance(share, int | float):
            chose = f"{LETTERS[option]}: {question.options[option]}"
            return _("%(share)s of %(answers)s answers chose %(chose)s") % {
                "share": f"{share:.0%}",
                "answers": detail.get("answers", "?"),
                "chose": chose,
            }
    if kind == FlagKind.PREMISE:
        return _("It shares a premise with a question a reviewer found defective.")
    return ""


@dataclass(frozen=True)
class PastGame:
    room: Room
    title: str
    players: int
    finished: bool


def past_games(*, owner_key: str, host_tokens: dict[str, str] | None = None) -> list[PastGame]:
    """The games of an owner key (an account's, or this browser's) and those this browser hosts by a token
    (a co-host link, a room from before owner keys), newest first."""
    codes = set()
    for token in (host_tokens or {}).values():
        grant = read_host_token(token)
        if grant is not None:
            codes.add(grant.room_code)
    rooms = Room.objects.none()
    if owner_key:
        rooms = Room.objects.filter(owner_key=owner_key)
    if codes:
        rooms = rooms | Room.objects.filter(code__in=codes)
    listed = []
    rooms = rooms.select_related("round").annotate(player_count=Count("players", filter=Q(players__removed=False)))
    for room in rooms.order_by("-created_at", "-id"):
        owned = bool(owner_key) and room.owner_key == owner_key
        if not owned and not _token_counts(room, host_tokens or {}):
            continue  # a co-host link replaced since: this browser no longer hosts it
        listed.append(
            PastGame(
                room=room,
                title=room.round.title,
                players=room.player_count,
                finished=room.phase == Phase.FINISHED,
            )
        )
    return listed


def _token_counts(room: Room, host_tokens: dict[str, str]) -> bool:
    grant = read_host_token(host_tokens.get(room.code))
    if grant is None or grant.room_code != room.code:
        return False
    return grant.cohost_generation is None or grant.cohost_generation == room.cohost_generation
