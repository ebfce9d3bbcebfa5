"""A homework question as its player is shown it and as their answer is judged and scored: one place for the
locked path (services.py) and the one-statement path (at_once.py), so both step over slides, time, judge, score and
word a question alike. Nothing here reads the clock: each takes the time it judges by (`at`), which the entry
points in services.py read from services.now."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lobby.exceptions import AnswerRefused
from lobby.models import Assignment, HomeworkProgress, Player, Room
from lobby.rules import machine, ways
from lobby.rules.showing import question_numbering, shown_order
from lobby.services.answers import answer_given
from quiz.kinds import BadAnswer, kind_of
from quiz.selectors import round_question_facts


def open_at(assignment: Assignment, at: datetime) -> bool:
    """Is the assignment still played at `at`: before its deadline."""
    return at < assignment.deadline


def answers_shown(assignment: Assignment, *, at: datetime) -> bool:
    """May a player be told what is right, and their points? After each question, or only past the deadline."""
    return assignment.reveal == Assignment.REVEAL_EACH or not open_at(assignment, at)


def _past_slides(room: Room, index: int) -> int:
    """The first step from `index` on that asks something: a slide is shown on a big screen, which homework has
    none of, so homework steps over it (it is counted nowhere as a question)."""
    while (
        index < room.question_count and not kind_of(round_question_facts(round_id=room.round_id, position=index)).asks
    ):
        index += 1
    return index


def _question(room: Room, index: int):
    question = round_question_facts(round_id=room.round_id, position=index)
    return question, shown_order(question, seed=room.option_seed, question_index=index), kind_of(question)


def _window_ms(room: Room, player: Player, question) -> int:
    """The player's own time on `question`: its own seconds or the room's timer, stretched by their extra time,
    as live (machine.question_timer_ms, machine.time_window_ms)."""
    timer_ms = machine.question_timer_ms(room_seconds=room.timer_seconds, question_seconds=question.seconds)
    return machine.time_window_ms(timer_ms=timer_ms, time_percent=player.time_percent)


def _open_question(room: Room, progress: HomeworkProgress, at: datetime) -> dict[str, Any]:
    """The question the player has open, as its kind shows it while open (never what is right)."""
    index = progress.question_index
    question, order, kind = _question(room, index)
    shown = {"index": index, "kind": kind.name, "text": question.text, **kind.public(question, order)}
    if question.image:
        shown["image"] = question.image
    # The countdown, as the live phone's: the time left, and the player's whole window (the bar's full length).
    shown["remaining_ms"] = max(int((progress.own_deadline - at).total_seconds() * 1000), 0)
    shown["window_ms"] = max(int((progress.own_deadline - progress.opened_at).total_seconds() * 1000), 0)
    shown["numbering"] = question_numbering(round_id=room.round_id, index=index, count=room.question_count)
    return shown


def _verdict(question, order, kind, *, index: int, correct: bool, points: int) -> dict[str, Any]:
    """The player's verdict on one question and its reveal as a live phone gets it (its kind's, in the player's
    order), so the page draws both, and the right answer's words, with the live phone's code."""
    return {
        "index": index,
        "correct": correct if kind.scored else None,
        "points": points,
        "explanation": question.explanation,
        "reveal": kind.reveal(question, order, []),
    }


def _judged(room: Room, player: Player, question_index: int, given: Mapping[str, Any], *, opened_at, at):
    """An answer judged by its question's kind and scored (the live game's formula and streak): the question, its
    shown order, its kind, the judgement, the score, the time taken and the player's window."""
    question, order, kind = _question(room, question_index)
    try:
        judged = kind.judge(question, answer_given(given), order)
    except BadAnswer as error:
        raise AnswerRefused(str(error)) from None
    elapsed_ms = max(int((at - opened_at).total_seconds() * 1000), 0)
    window_ms = _window_ms(room, player, question)
    if kind.scored:
        scored = machine.answer_score(
            streak=player.streak,
            correct=judged.right,
            elapsed_ms=elapsed_ms,
            window_ms=window_ms,
            speed_bonus=ways.speed_bonus(room),
            credit=judged.credit,
        )
    else:
        scored = machine.Scored(points=0, streak=player.streak)
    return question, order, kind, judged, scored, elapsed_ms, window_ms


def _answer_reply(question, order, kind, judged, scored, *, index, place, player, assignment, at) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "next": place.question_index,
        "finished": place.finished_at is not None,
        "given": kind.shown(question, order, judged.option, judged.response),
    }
    if answers_shown(assignment, at=at):
        reply["verdict"] = _verdict(question, order, kind, index=index, correct=judged.right, points=scored.points)
        reply["score"] = player.score
    return reply
