import pytest

from lobby.machine import Action, IllegalMove, Phase, Position, answer_points, rank, streak_bonus, transition


def test_a_game_walks_lobby_question_reveal_leaderboard_until_finished():
    position, seen = Position(Phase.LOBBY, -1), []
    position = transition(position, Action.START, total=2)
    while position.phase is not Phase.FINISHED:
        seen.append((position.phase.value, position.index))
        action = Action.CLOSE if position.phase is Phase.QUESTION else Action.NEXT
        position = transition(position, action, total=2)
    assert seen == [
        ("question", 0), ("reveal", 0), ("leaderboard", 0),
        ("question", 1), ("reveal", 1), ("leaderboard", 1),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("phase", "action"),
    [
        (Phase.LOBBY, Action.NEXT),
        (Phase.LOBBY, Action.CLOSE),
        (Phase.QUESTION, Action.START),
        (Phase.QUESTION, Action.NEXT),
        (Phase.REVEAL, Action.CLOSE),
        (Phase.FINISHED, Action.NEXT),
        (Phase.FINISHED, Action.START),
    ],
)
def test_moves_that_do_not_apply_are_refused(phase, action):
    with pytest.raises(IllegalMove):
        transition(Position(phase, 0), action, total=3)


def test_an_empty_round_cannot_start():
    with pytest.raises(IllegalMove):
        transition(Position(Phase.LOBBY, -1), Action.START, total=0)


@pytest.mark.parametrize(
    ("elapsed_ms", "expected"),
    [(0, 1000), (10_000, 750), (20_000, 500), (25_000, 500), (-5, 1000), (5_000, 875)],
)
def test_correct_answers_score_1000_falling_to_500_at_the_deadline(elapsed_ms, expected):
    assert answer_points(correct=True, elapsed_ms=elapsed_ms, timer_ms=20_000) == expected


def test_wrong_answers_score_nothing():
    assert answer_points(correct=False, elapsed_ms=0, timer_ms=20_000) == 0


def test_streak_bonus_grows_by_100_and_is_capped():
    assert [streak_bonus(n) for n in range(0, 9)] == [0, 0, 100, 200, 300, 400, 500, 500, 500]


def test_ties_share_a_rank():
    assert rank([(1, 500), (2, 900), (3, 500), (4, 0)]) == {2: 1, 1: 2, 3: 2, 4: 4}
