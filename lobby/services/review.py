"""What the game tells the review queue (reports, the crowd's disagreement), and voiding a question after review.

The verifier never imports the lobby: the game calls `verifier.services.flag_record`, and the review admin's
lobby half (lobby/admin.py) reads answers and rooms through the functions here.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from lobby import events
from lobby.exceptions import GameError
from lobby.models import Answer, Player, Report, Room, VoidedQuestion
from lobby.reads.selectors import Picture, crowd_rule
from lobby.rules import machine, ways
from lobby.rules.machine import Phase
from quiz.kinds import kind_of
from quiz.models import Question, RoundQuestion
from quiz.selectors import round_question_at, round_question_facts
from review.models import FlagKind, ReviewLabel
from review.selectors import latest_label
from review.services import flag_record

logger = logging.getLogger(__name__)


# -- signals from the game ------------------------------------------------------------------------------------


def report_flag(*, report: Report) -> None:
    """A player's report enters the review queue with the player's words."""
    flag_record(
        question_id=report.question_id,
        kind=FlagKind.REPORTED,
        room_code=report.room.code,
        detail={
            "report_id": report.pk,
            "player": report.player.nickname,
            "text": report.text,
            "question_index": _index_of(room=report.room, question_id=report.question_id),
        },
    )


def _index_of(*, room: Room, question_id: int) -> int | None:
    return (
        RoundQuestion.objects.filter(round_id=room.round_id, question_id=question_id)
        .values_list("position", flat=True)
        .first()
    )


def crowd_check(*, room_id: int, question_index: int) -> bool:
    """Run once a question has closed. Flags the question when the crowd clearly picked another option."""
    room = Room.objects.get(pk=room_id)
    question = round_question_facts(round_id=room.round_id, position=question_index)
    answers = list(
        Answer.objects.filter(room=room, question_index=question_index, player__removed=False).values_list(
            "option", "response"
        )
    )
    crowd = kind_of(question).crowd(question, answers)
    if crowd is None:
        return False  # a kind the crowd cannot overrule (a typed answer, an order, a number, a poll)
    distribution, marked = crowd
    verdict = machine.crowd_verdict(distribution=distribution, correct_index=marked, rule=crowd_rule())
    return _crowd_flag(room=room, question_index=question_index, distribution=distribution, verdict=verdict)


def _crowd_flag(*, room: Room, question_index: int, distribution: list[int], verdict: machine.CrowdVerdict) -> bool:
    if not verdict.disagrees:
        return False
    question = round_question_facts(round_id=room.round_id, position=question_index)
    flag_record(
        question_id=question.question_id,
        kind=FlagKind.CROWD,
        room_code=room.code,
        detail={
            "question_index": question_index,
            "answers": verdict.answers,
            "option": verdict.option,
            "share": round(verdict.share, 4),
            "marked": verdict.marked,
            "distribution": distribution,
        },
    )
    return True


def after_reveal(*, room: Room, question_index: int, shown: Picture) -> None:
    """Called once a closed question's reveal has gone out: the crowd check takes the verdict the reveal showed
    (no second count, no second verdict), and never breaks a game."""
    try:
        snapshot, crowd = shown.snapshot, shown.crowd
        if snapshot["phase"] == Phase.REVEAL and snapshot["question_index"] == question_index:
            if crowd is not None:  # None: a kind the crowd cannot overrule
                # The round's order, not the room's: the flag is read next to the question as the round has it.
                _crowd_flag(room=room, question_index=question_index, distribution=shown.distribution, verdict=crowd)
        else:  # the host moved on between the commit and the snapshot
            crowd_check(room_id=room.pk, question_index=question_index)
    except Exception:
        logger.exception("crowd check for room %s question %s failed", room.pk, question_index)


# -- voiding ----------------------------------------------------------------------------------------------------


class VoidRefused(GameError):
    code = "void_refused"
    default_message = _("That question cannot be voided.")


def voided_indexes(*, room_id: int) -> list[int]:
    return list(VoidedQuestion.objects.filter(room_id=room_id).values_list("question_index", flat=True))


def scores_recompute(room: Room) -> None:
    """Every player's score and streak replayed from the answers of the closed questions, by the rule play
    scores with (`machine.scores_replay`); a voided question counts as not asked."""
    # Removed players are off the leaderboard and were not scored after their removal; they keep what they had.
    players = list(Player.objects.filter(room=room, removed=False))
    answers = {(a.player_id, a.question_index): a for a in Answer.objects.filter(room=room)}
    replayed = machine.scores_replay(
        players=[player.pk for player in players],
        questions=machine.closed_questions(room.position),
        # A question that scores nothing (a poll) counts as a voided one does: as not asked.
        voided=set(voided_indexes(room_id=room.pk)) | _unscored(room),
        answers={
            # An answer from before windows were stored was scored on its question's timer at x1.
            key: machine.Given(
                correct=a.correct,
                elapsed_ms=a.elapsed_ms,
                window_ms=a.window_ms
                or machine.question_timer_ms(
                    room_seconds=room.timer_seconds,
                    question_seconds=round_question_facts(round_id=room.round_id, position=key[1]).seconds,
                ),
                credit=a.credit,
            )
            for key, a in answers.items()
        },
        timer_ms=room.timer_seconds * 1000,
        speed_bonus=ways.speed_bonus(room),
    )
    changed = []
    for key, points in replayed.points.items():
        if answers[key].points != points:
            answers[key].points = points
            changed.append(answers[key])
    Answer.objects.bulk_update(changed, ["points"])
    for player in players:
        standing = replayed.standings[player.pk]
        if (player.score, player.streak) != (standing.score, standing.streak):
            player.score, player.streak = standing.score, standing.streak
            player.save(update_fields=["score", "streak"])


def _unscored(room: Room) -> set[int]:
    return {
        index
        for index in machine.closed_questions(room.position)
        if not kind_of(round_question_facts(round_id=room.round_id, position=index)).scored
    }


def question_void(*, room_id: int, question_index: int, reviewer=None, by_host: bool = False) -> VoidedQuestion:
    """Take a question out of one room's scores and send everyone the corrected leaderboard.

    A reviewer voids a question labelled defective; the host may void one on the spot in their own room
    (e.g. when the crowd clearly disagrees with the marked answer) without a label."""
    with transaction.atomic():
        # The room's row lock orders this against a concurrent close or answer.
        room = Room.objects.select_for_update().get(pk=room_id)
        if question_index not in machine.closed_questions(room.position):
            raise VoidRefused(_("Only a question that has been played and closed can be voided."))
        question = round_question_at(round_id=room.round_id, position=question_index)
        if not by_host and latest_label(question_id=question.pk) != ReviewLabel.DEFECTIVE:
            raise VoidRefused(_("Label the question defective before voiding it."))
        if VoidedQuestion.objects.filter(room=room, question_index=question_index).exists():
            raise VoidRefused(_("That question is already voided in this room."))
        removed = {
            str(player_id): points
            for player_id, points in Answer.objects.filter(room=room, question_index=question_index).values_list(
                "player_id", "points"
            )
        }
        voided = VoidedQuestion.objects.create(
            room=room, question_index=question_index, question=question, removed_points=removed, reviewer=reviewer
        )
        scores_recompute(room)
        Room.objects.filter(pk=room.pk).update(seq=F("seq") + 1)
        events.room_changed(room_id=room.pk)
    return voided


# -- what the review admin shows about the game -----------------------------------------------------------------


@dataclass(frozen=True)
class PlayedIn:
    room: Room
    question_index: int
    distribution: list[int]
    answers: int
    closed: bool
    voided: bool


def question_plays(*, question: Question) -> list[PlayedIn]:
    """Every room whose round holds the question, with how its players answered it (newest room first)."""
    entries = list(RoundQuestion.objects.filter(question=question).values_list("round_id", "position"))
    plays: list[PlayedIn] = []
    for round_id, position in entries:
        for room in Room.objects.filter(round_id=round_id).order_by("-created_at"):
            given = list(Answer.objects.filter(room=room, question_index=position).values_list("option", "response"))
            # Per option, by its kind (the options a multi answer picked; none for a typed answer).
            distribution = kind_of(question).tally(question, given)
            plays.append(
                PlayedIn(
                    room=room,
                    question_index=position,
                    distribution=distribution,
                    answers=len(given),
                    closed=position in machine.closed_questions(room.position),
                    voided=VoidedQuestion.objects.filter(room=room, question_index=position).exists(),
                )
            )
    plays.sort(key=lambda play: play.room.created_at, reverse=True)
    return plays
