import pytest

from lobby.rules.machine import (
    Action,
    CrowdRule,
    Given,
    IllegalMove,
    Phase,
    Position,
    Scored,
    Standing,
    answer_points,
    answer_score,
    closed_questions,
    crowd_verdict,
    is_revealed,
    own_deadline_offset_ms,
    rank,
    scores_replay,
    streak_bonus,
    time_window_ms,
    transition,
)

# The defaults (CROWD_MIN_ANSWERS, CROWD_MAJORITY).
CROWD = CrowdRule(min_answers=5, majority=0.6)
TIMER_MS = 20_000


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


# -- which questions are behind us -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "index", "closed"),
    [
        (Phase.LOBBY, -1, []),
        (Phase.QUESTION, 0, []),
        (Phase.REVEAL, 0, [0]),
        (Phase.LEADERBOARD, 0, [0]),
        (Phase.QUESTION, 2, [0, 1]),
        (Phase.REVEAL, 2, [0, 1, 2]),
        (Phase.FINISHED, 2, [0, 1, 2]),
    ],
)
def test_the_closed_questions_are_those_before_the_current_and_the_current_once_it_closed(phase, index, closed):
    position = Position(phase, index)
    assert list(closed_questions(position)) == closed
    # A question's answer is shown exactly when it closes: reports and voids follow the same rule.
    assert [q for q in range(-1, 4) if is_revealed(position, q)] == closed


# -- scoring ---------------------------------------------------------------------------------------------------


def test_one_answer_scores_its_points_and_streak():
    assert answer_score(streak=0, correct=True, elapsed_ms=0, window_ms=TIMER_MS) == Scored(points=1000, streak=1)
    assert answer_score(streak=2, correct=True, elapsed_ms=10_000, window_ms=TIMER_MS) == Scored(points=950, streak=3)
    assert answer_score(streak=4, correct=False, elapsed_ms=0, window_ms=TIMER_MS) == Scored(points=0, streak=0)


def test_a_voided_question_neither_scores_nor_extends_nor_breaks_a_streak():
    for correct in (True, False):
        scored = answer_score(streak=3, correct=correct, elapsed_ms=0, window_ms=TIMER_MS, voided=True)
        assert scored == Scored(points=0, streak=3)


def test_the_replay_scores_every_closed_question_in_order_and_skips_the_voided():
    # Ann: right, wrong, right; Bo: right, right, no answer. Question 1 (Ann's wrong one) is voided.
    answers = {
        (1, 0): Given(correct=True, elapsed_ms=0),
        (1, 1): Given(correct=False, elapsed_ms=0),
        (1, 2): Given(correct=True, elapsed_ms=0),
        (2, 0): Given(correct=True, elapsed_ms=0),
        (2, 1): Given(correct=True, elapsed_ms=10_000),
    }
    replayed = scores_replay(players=[1, 2], questions=range(3), voided={1}, answers=answers, timer_ms=TIMER_MS)
    # Ann's streak runs on across the voided question: 1000 + 0 + (1000 + 100).
    assert replayed.standings[1] == Standing(score=2100, streak=2)
    assert replayed.standings[2] == Standing(score=1000, streak=0)  # no answer to question 3 ends Bo's
    assert replayed.points == {(1, 0): 1000, (1, 1): 0, (1, 2): 1100, (2, 0): 1000, (2, 1): 0}


def test_play_and_recompute_agree_on_a_game_whose_streak_a_voided_question_broke():
    """Play scores each question as it closes, from the streaks the players have; a void replays the closed
    questions. Played on after a void, the scores are the ones a replay of the whole game gives."""
    answers = {
        (1, 0): Given(correct=True, elapsed_ms=2_000),
        (1, 1): Given(correct=False, elapsed_ms=5_000),  # breaks Ann's streak, then is voided
        (1, 2): Given(correct=True, elapsed_ms=4_000),
        (1, 3): Given(correct=True, elapsed_ms=0),
        (2, 0): Given(correct=False, elapsed_ms=1_000),
        (2, 1): Given(correct=True, elapsed_ms=3_000),
        (2, 2): Given(correct=True, elapsed_ms=8_000),
        (2, 3): Given(correct=True, elapsed_ms=6_000),
    }
    players = [1, 2]

    def play(standings, index, voided):
        for player in players:
            given = answers.get((player, index))
            scored = answer_score(
                streak=standings[player].streak,
                correct=given is not None and given.correct,
                elapsed_ms=given.elapsed_ms if given else 0,
                window_ms=TIMER_MS,
                voided=index in voided,
            )
            standings[player] = Standing(standings[player].score + scored.points, scored.streak)
        return standings

    standings = {player: Standing(0, 0) for player in players}
    for index in (0, 1):
        standings = play(standings, index, voided=set())
    assert standings[1].streak == 0  # question 2 broke it
    # Question 2 is voided: the service replays what has closed, then play goes on from there.
    standings = dict(
        scores_replay(players=players, questions=range(2), voided={1}, answers=answers, timer_ms=TIMER_MS).standings
    )
    assert standings[1].streak == 1  # as if question 2 had not been asked
    for index in (2, 3):
        standings = play(standings, index, voided={1})

    replayed = scores_replay(players=players, questions=range(4), voided={1}, answers=answers, timer_ms=TIMER_MS)
    assert standings == replayed.standings
    # Ann: 950 + (900 + 100) + (1000 + 200); Bo: 0 + 0 (voided) + 800 + (850 + 100).
    assert standings == {1: Standing(3150, 3), 2: Standing(1750, 2)}


# -- the crowd -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "distribution, correct, disagrees",
    [
        ([3, 2, 0, 0], 1, True),  # 5 answers, 60 % on a wrong option
        ([0, 1, 4, 0], 0, True),
        ([3, 1, 0, 0], 1, False),  # only 4 answers
        ([2, 2, 1, 0], 1, False),  # 40 %: no clear majority
        ([2, 1, 0, 2], 3, False),
        ([0, 3, 2, 0], 1, False),  # the majority chose the marked option
        ([0, 0, 0, 0], 0, False),
    ],
)
def test_crowd_verdict(distribution, correct, disagrees):
    assert crowd_verdict(distribution=distribution, correct_index=correct, rule=CROWD).disagrees is disagrees


def test_the_crowd_verdict_says_what_the_crowd_chose():
    verdict = crowd_verdict(distribution=[3, 2, 0, 0], correct_index=1, rule=CROWD)
    assert (verdict.answers, verdict.option, verdict.share) == (5, 0, 0.6)
    strict = CrowdRule(min_answers=3, majority=0.9)
    assert not crowd_verdict(distribution=[2, 1], correct_index=1, rule=strict).disagrees
    assert crowd_verdict(distribution=[3, 0], correct_index=1, rule=strict).disagrees


# -- extra time and no speed bonus ------------------------------------------------------------------------------


def test_a_player_with_extra_time_loses_speed_points_over_their_own_window():
    # 20 s into a 20 s question: the bare minimum at x1, still three quarters of the way at x2 (a 40 s window).
    at_x1 = answer_score(streak=0, correct=True, elapsed_ms=20_000, window_ms=TIMER_MS)
    at_x2 = answer_score(
        streak=0, correct=True, elapsed_ms=20_000, window_ms=time_window_ms(timer_ms=TIMER_MS, time_percent=200)
    )
    assert (at_x1.points, at_x2.points) == (500, 750)
    assert time_window_ms(timer_ms=TIMER_MS, time_percent=150) == 30_000


def test_without_the_speed_bonus_a_right_answer_scores_the_same_at_any_moment():
    points = {
        elapsed: answer_score(streak=0, correct=True, elapsed_ms=elapsed, window_ms=TIMER_MS, speed_bonus=False).points
        for elapsed in (0, 7_000, 19_999, 20_000)
    }
    assert set(points.values()) == {1000}
    late_wrong = answer_score(streak=2, correct=False, elapsed_ms=0, window_ms=TIMER_MS, speed_bonus=False)
    assert late_wrong == Scored(points=0, streak=0)
    # The streak bonus still counts: it rewards being right, not being quick.
    assert answer_score(streak=1, correct=True, elapsed_ms=19_000, window_ms=TIMER_MS, speed_bonus=False).points == 1100


def test_a_players_own_deadline_falls_before_the_rooms_by_the_extra_time_they_do_not_have():
    # The room's deadline is its x2 player's: 40 s; an x1 player's falls 20 s before it, an x1.5 player's 10 s.
    assert own_deadline_offset_ms(timer_ms=TIMER_MS, time_percent=100, closing_percent=200) == 20_000
    assert own_deadline_offset_ms(timer_ms=TIMER_MS, time_percent=150, closing_percent=200) == 10_000
    assert own_deadline_offset_ms(timer_ms=TIMER_MS, time_percent=200, closing_percent=200) == 0
    assert own_deadline_offset_ms(timer_ms=TIMER_MS, time_percent=100, closing_percent=100) == 0


def test_a_replay_scores_each_answer_over_the_window_it_was_given_and_without_speed_as_the_room_played():
    answers = {(1, 0): Given(correct=True, elapsed_ms=20_000), (2, 0): Given(True, 20_000, window_ms=40_000)}
    replayed = scores_replay(players=[1, 2], questions=range(1), voided=set(), answers=answers, timer_ms=TIMER_MS)
    assert replayed.points == {(1, 0): 500, (2, 0): 750}
    flat = scores_replay(
        players=[1, 2], questions=range(1), voided=set(), answers=answers, timer_ms=TIMER_MS, speed_bonus=False
    )
    assert flat.points == {(1, 0): 1000, (2, 0): 1000}


def test_a_partly_right_answer_scores_its_share_and_a_replay_scores_it_the_same():
    """Credit (quiz kinds): a right answer's points times its credit plus the streak bonus; a partly right one its
    share of the time's points, ending the streak; a recompute after a void gives every answer what play gave."""
    from lobby.rules import machine

    right = machine.answer_score(streak=1, correct=True, elapsed_ms=0, window_ms=20_000, credit=0.75)
    assert right == machine.Scored(points=750 + 100, streak=2)  # a number inside its band: 3/4, and the streak
    partly = machine.answer_score(streak=3, correct=False, elapsed_ms=10_000, window_ms=20_000, credit=0.5)
    assert partly == machine.Scored(points=375, streak=0)  # half of 750 (half the time gone), streak ended
    replayed = machine.scores_replay(
        players=[1],
        questions=range(3),
        voided={1},  # the second one voided (a poll is replayed as voided too: not asked)
        answers={
            (1, 0): machine.Given(correct=True, elapsed_ms=0, credit=1.0),
            (1, 1): machine.Given(correct=False, elapsed_ms=0, credit=0.5),
            (1, 2): machine.Given(correct=False, elapsed_ms=0, credit=0.5),
        },
        timer_ms=20_000,
    )
    assert replayed.points == {(1, 0): 1000, (1, 1): 0, (1, 2): 500}
    assert replayed.standings[1] == machine.Standing(score=1500, streak=0)
