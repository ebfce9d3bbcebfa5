"""The game's rules: phases, transitions, which questions are closed, scoring, the crowd's verdict and the order
a room shows options in.
Pure: plain data in, plain data out; no database, request or channel layer."""

import functools
import hashlib
from dataclasses import dataclass
from enum import StrEnum
from operator import itemgetter

MAX_POINTS = 1000
STREAK_STEP = 100
STREAK_CAP = 500
# A player's time on a question, in percent of the room's timer: everyone's, and the host's extra time x1.5, x2.
TIME_PERCENTS = (100, 150, 200)


class Phase(StrEnum):
    LOBBY = "lobby"
    QUESTION = "question"
    REVEAL = "reveal"
    LEADERBOARD = "leaderboard"
    FINISHED = "finished"


class Action(StrEnum):
    START = "start"  # host: lobby -> first question
    CLOSE = "close"  # clock, last answer or host: question -> reveal
    NEXT = "next"  # host: reveal -> leaderboard -> next question or finished


@dataclass(frozen=True)
class Position:
    phase: Phase
    index: int  # the current question, -1 before the first


class IllegalMove(Exception):
    pass


def transition(
    current: Position, action: Action, *, total: int, more_coming: bool = False, slide: bool = False
) -> Position:
    """Where `action` takes a game at `current`; raises IllegalMove when it does not apply. `total`: the questions
    ready to play; `more_coming`: more may still be added (a round still being written), so a leaderboard whose
    next question is not ready yet stays where it is (the room waits) instead of finishing the game. `slide`: the
    current step asks nothing (quiz/kinds/slide.py), so the host's next or close goes straight to the next step,
    with no reveal and no leaderboard."""
    phase, index = current.phase, current.index
    if action is Action.START and phase is Phase.LOBBY and total > 0:
        return Position(Phase.QUESTION, 0)
    past_slide = slide and phase is Phase.QUESTION and action in (Action.NEXT, Action.CLOSE)
    if action is Action.CLOSE and phase is Phase.QUESTION and not past_slide:
        return Position(Phase.REVEAL, index)
    if action is Action.NEXT and phase is Phase.REVEAL:
        return Position(Phase.LEADERBOARD, index)
    if past_slide or (action is Action.NEXT and phase is Phase.LEADERBOARD):
        if index + 1 < total:
            return Position(Phase.QUESTION, index + 1)
        if more_coming:
            return current
        return Position(Phase.FINISHED, index)
    raise IllegalMove(f"{action} is not allowed in {phase}")


def answer_points(*, correct: bool, elapsed_ms: int, timer_ms: int) -> int:
    """1000 x (1 - t / 2T) for a correct answer at t of T: at least 500 for a right answer in time."""
    if not correct or timer_ms <= 0:
        return 0
    elapsed_ms = min(max(elapsed_ms, 0), timer_ms)
    return round(MAX_POINTS * (1 - elapsed_ms / (2 * timer_ms)))


def streak_bonus(streak: int) -> int:
    """Bonus for the n-th correct answer in a row: 0 for the first, +100 each after, capped at 500."""
    return min(max(streak - 1, 0) * STREAK_STEP, STREAK_CAP)


def rank(scores: list[tuple[int, int]]) -> dict[int, int]:
    """Competition ranking ("1224") of (player_id, score) pairs; ties share a rank."""
    ordered = sorted(scores, key=itemgetter(1), reverse=True)  # stable: ties keep their order
    ranks: dict[int, int] = {}
    previous_score, previous_rank = None, 0
    for position, (player_id, score) in enumerate(ordered, start=1):
        if score != previous_score:
            previous_rank, previous_score = position, score
        ranks[player_id] = previous_rank
    return ranks


# -- which questions are behind us -----------------------------------------------------------------------------


def closed_questions(position: Position) -> range:
    """The questions of a game that have been closed and scored, in order: every one before the current, and
    the current once it is past its question phase."""
    if position.phase is Phase.LOBBY or position.index < 0:
        return range(0)
    last = position.index - 1 if position.phase is Phase.QUESTION else position.index
    return range(last + 1)


def is_revealed(position: Position, question_index: int) -> bool:
    """Has this question's answer been shown? Exactly the closed ones: a question is revealed as it closes."""
    return question_index in closed_questions(position)


# -- scoring ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    points: int  # what this answer earns
    streak: int  # the player's correct answers in a row after it


def answer_score(
    *,
    streak: int,
    correct: bool,
    elapsed_ms: int,
    window_ms: int,
    speed_bonus: bool = True,
    voided: bool = False,
    credit: float | None = None,
) -> Scored:
    """The one scoring rule, for play (a question closing) and recompute (after a void) alike: one player's
    points for one closed question, given their streak before it. `window_ms` is the player's own time (their
    extra time included), so a player with x2 loses speed points half as fast. Without `speed_bonus` a right
    answer in time scores the full points at any moment. A voided question (or a poll) counts as not asked: no
    points, and the streak neither grows nor breaks. A wrong answer, or none, scores nothing and ends it.
    `credit` is the share of full marks the answer earned (a partly right one: some of the items in place);
    a right answer's points are its time's points times its credit, plus the streak bonus; a partly right one
    (not `correct`, some credit) earns its share of its time's points and ends the streak."""
    if voided:
        return Scored(points=0, streak=streak)
    share = (1.0 if correct else 0.0) if credit is None else min(max(credit, 0.0), 1.0)
    if share <= 0:
        return Scored(points=0, streak=0)
    base = answer_points(correct=True, elapsed_ms=elapsed_ms if speed_bonus else 0, timer_ms=window_ms)
    if not correct:
        return Scored(points=round(base * share), streak=0)
    streak += 1
    return Scored(points=round(base * share) + streak_bonus(streak), streak=streak)


# -- extra time ------------------------------------------------------------------------------------------------


def question_timer_ms(*, room_seconds: int, question_seconds: int | None) -> int:
    """A question's time for everyone at x1: its own seconds when it carries them (a Kahoot! or Quizizz file's
    time limit, the editor's), the room's timer otherwise. Extra time stretches it as it stretches the room's
    (`time_window_ms`)."""
    return (question_seconds if question_seconds else room_seconds) * 1000


def time_window_ms(*, timer_ms: int, time_percent: int) -> int:
    """A player's own time on a question: the question's timer (`question_timer_ms`), stretched by their extra
    time."""
    return timer_ms * time_percent // 100


def own_deadline_offset_ms(*, timer_ms: int, time_percent: int, closing_percent: int) -> int:
    """How long before the room's deadline a player's own one falls. The room's deadline is the last of its
    players' (the one with the most extra time: `closing_percent`), so that the clock closes the question then;
    a player with less time had theirs this much earlier."""
    return time_window_ms(timer_ms=timer_ms, time_percent=closing_percent) - time_window_ms(
        timer_ms=timer_ms, time_percent=time_percent
    )


@dataclass(frozen=True)
class Given:
    """An answer as scoring needs it."""

    correct: bool
    elapsed_ms: int
    window_ms: int | None = None  # the player's own window; None: the room's timer
    credit: float | None = None  # the share of full marks (quiz kinds); None: as `correct` says


@dataclass(frozen=True)
class Standing:
    score: int
    streak: int


@dataclass(frozen=True)
class Replayed:
    standings: dict[int, Standing]  # player id -> score and streak after the last question
    points: dict[tuple[int, int], int]  # (player id, question index) -> points, for every answer given


def scores_replay(
    *,
    players: list[int],
    questions: range | list[int],
    voided: set[int],
    answers: dict[tuple[int, int], Given],
    timer_ms: int,
    speed_bonus: bool = True,
) -> Replayed:
    """Every player's score and streak from scratch: the closed questions in order, each scored by
    `answer_score` as play scored it. `answers` maps (player id, question index) to what they answered."""
    standings = {player: Standing(score=0, streak=0) for player in players}
    points: dict[tuple[int, int], int] = {}
    for index in questions:
        for player in players:
            given = answers.get((player, index))
            scored = answer_score(
                streak=standings[player].streak,
                correct=given is not None and given.correct,
                elapsed_ms=given.elapsed_ms if given is not None else 0,
                window_ms=given.window_ms if given is not None and given.window_ms else timer_ms,
                speed_bonus=speed_bonus,
                voided=index in voided,
                credit=given.credit if given is not None else None,
            )
            standings[player] = Standing(score=standings[player].score + scored.points, streak=scored.streak)
            if given is not None:
                points[(player, index)] = scored.points
    return Replayed(standings=standings, points=points)


# -- the crowd -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CrowdRule:
    min_answers: int  # fewer answers than this say nothing
    majority: float  # the share one option needs to count as the crowd's choice


@dataclass(frozen=True)
class CrowdVerdict:
    answers: int
    option: int | None  # the most chosen option
    share: float
    disagrees: bool
    marked: int | None = None  # the option marked right


def crowd_verdict(*, distribution: list[int], correct_index: int, rule: CrowdRule) -> CrowdVerdict:
    """Does a clear majority of enough players pick the same option, and is it not the marked one?"""
    answers = sum(distribution)
    if not answers:
        return CrowdVerdict(answers=0, option=None, share=0.0, disagrees=False, marked=correct_index)
    top = max(range(len(distribution)), key=lambda option: distribution[option])
    share = distribution[top] / answers
    # A tiny tolerance so 3 of 5 counts as the 60 % it is.
    disagrees = answers >= rule.min_answers and share >= rule.majority - 1e-9 and top != correct_index
    return CrowdVerdict(answers=answers, option=top, share=share, disagrees=disagrees, marked=correct_index)


# -- the order a room shows a question's options in -------------------------------------------------------------


@functools.lru_cache(maxsize=4096)  # pure, and asked for by every answer and snapshot of an open question
def option_order(*, seed: str, question_index: int, option_count: int) -> tuple[int, ...]:
    """The options of one question as a room shows them: position shown -> index in the round. A Fisher-Yates
    shuffle drawn from SHA-256 of (seed, question, step), so the same room always shows the same order, on any
    process and any Python. No seed (a room from before shuffling) keeps the round's order."""
    order = list(range(option_count))
    if not seed:
        return tuple(order)
    for step in range(option_count - 1, 0, -1):
        digest = hashlib.sha256(f"{seed}:{question_index}:{step}".encode()).digest()
        swap = int.from_bytes(digest[:8], "big") % (step + 1)
        order[step], order[swap] = order[swap], order[step]
    return tuple(order)


def original_option(order: tuple[int, ...], shown: int) -> int:
    """The round's index of the option shown at `shown`."""
    return order[shown]


def shown_option(order: tuple[int, ...], original: int) -> int:
    """Where the room shows the round's option `original`."""
    return order.index(original)
