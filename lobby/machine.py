"""The game's rules: phases, transitions and scoring. Pure: no database, request or channel layer."""

from dataclasses import dataclass
from enum import StrEnum

MAX_POINTS = 1000
STREAK_STEP = 100
STREAK_CAP = 500


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


def transition(current: Position, action: Action, *, total: int) -> Position:
    """Where `action` takes a game at `current`; raises IllegalMove when it does not apply."""
    phase, index = current.phase, current.index
    if action is Action.START and phase is Phase.LOBBY and total > 0:
        return Position(Phase.QUESTION, 0)
    if action is Action.CLOSE and phase is Phase.QUESTION:
        return Position(Phase.REVEAL, index)
    if action is Action.NEXT and phase is Phase.REVEAL:
        return Position(Phase.LEADERBOARD, index)
    if action is Action.NEXT and phase is Phase.LEADERBOARD:
        if index + 1 < total:
            return Position(Phase.QUESTION, index + 1)
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
    ordered = sorted(scores, key=lambda pair: -pair[1])
    ranks: dict[int, int] = {}
    previous_score, previous_rank = None, 0
    for position, (player_id, score) in enumerate(ordered, start=1):
        if score != previous_score:
            previous_rank, previous_score = position, score
        ranks[player_id] = previous_rank
    return ranks
