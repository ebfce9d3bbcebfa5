"""The blind question is shown in a shuffled order per question and the answer mapped back: a checker that answers
by position ("A", whatever A is) flags nothing; one that knows the right option finds it wherever it is shown."""

import pytest

from tests.fakes.model_server import ModelServer
from verifier import policy
from verifier.gate import Gate, GateItem

OPTIONS = ("Right", "Wrong", "Other", "None of these")
KNOWS = {"Right": 0.85, "Wrong": 0.1, "Other": 0.03, "None of these": 0.02}


def _items(count: int, *, correct_index: int = 0) -> list[GateItem]:
    return [
        GateItem(
            key=f"q{n}",
            text=f"Debias question {n}: which one is right?",
            options=OPTIONS,
            correct_index=correct_index,
            explanation="Because.",
        )
        for n in range(1, count + 1)
    ]


@pytest.fixture(params=["systemone", "llm"])
def checker(request, settings) -> ModelServer:
    server = request.getfixturevalue(request.param)
    # Nothing here is about time: a loaded machine must not turn a round into round_budget fail-opens.
    settings.VERIFIER_TIMEOUT = 5.0
    return server


def _blind_requests(server: ModelServer) -> list:
    return server.blind_requests() + server.blind_requests("/v1/chat/completions")


async def test_a_checker_that_always_answers_a_flags_nothing(checker):
    checker.script.default_choice = "A"  # 0.9 on whichever option is shown at A
    async with Gate.from_settings(threshold=0.6) as gate:
        decisions = await gate.check_all(_items(8))
    assert [d.checker_chose for d in decisions] == [""] * 8
    assert [(d.outcome, d.reason) for d in decisions] == [("passed", "")] * 8
    assert gate.tally.checker_disagrees == 0 and gate.tally.blind_order_dependent == 8
    for decision in decisions:
        blind = decision.details["blind"]
        assert blind["order_dependent"] is True and blind["scored"] is False
        # Both times it said A, and A was another option each time.
        assert [entry["picked_shown"] for entry in blind["orders"]] == ["A", "A"]
        assert len({entry["picked"] for entry in blind["orders"]}) == 2
        # Not a third score: the question is judged on its checks alone.
        assert policy.BLIND not in decision.probabilities
        assert "blind answer not scored: the answer followed the order shown (A, A" in decision.message
    assert len(_blind_requests(checker)) == 16


async def test_with_one_order_a_favourite_letter_is_only_spread_over_the_options(checker, settings):
    # Why two orders are the default: one shuffled order moves the favourite letter's pick to a random option,
    # so a position-answering checker still "chooses" another option on most questions.
    settings.VERIFIER_BLIND_ORDERS = 1
    checker.script.default_choice = "A"
    async with Gate.from_settings(threshold=0.05) as gate:
        decisions = await gate.check_all(_items(8))
    flagged = [d for d in decisions if d.checker_chose]
    assert 0 < len(flagged) < 8
    assert len(_blind_requests(checker)) == 8


async def test_a_checker_that_knows_the_right_option_finds_it_wherever_it_is_shown(checker):
    checker.script.choice_texts = {"Debias question": KNOWS}
    async with Gate.from_settings(threshold=0.6) as gate:
        decisions = await gate.check_all(_items(8))
    shown_at = set()
    for decision in decisions:
        blind = decision.details["blind"]
        assert [entry["picked"] for entry in blind["orders"]] == [0, 0]
        shown_at.update(entry["picked_shown"] for entry in blind["orders"])
        assert blind["pick"] == "A" and blind["marked_probability"] == pytest.approx(0.85)
        assert decision.probabilities[policy.BLIND] == pytest.approx(0.85)
        assert (decision.outcome, decision.checker_chose) == ("passed", "")
    # The right option was shown at several letters across the questions, and found every time.
    assert len(shown_at) >= 3


async def test_a_checker_that_knows_better_than_the_marked_answer_says_so_in_the_options_own_letters(checker):
    checker.script.choice_texts = {"Debias question": KNOWS}
    async with Gate.from_settings(threshold=0.6) as gate:
        decisions = await gate.check_all(_items(4, correct_index=1))  # "Wrong" is marked
    for decision in decisions:
        assert (decision.outcome, decision.checker_chose) == ("dropped", "A")
        assert decision.details["checker_chose_text"] == "Right"
        assert decision.probabilities[policy.BLIND] == pytest.approx(0.1)
        assert "the checker chose A. Right (0.85)" in decision.message


def test_the_orders_are_reproducible_from_the_seed_and_move_every_option():
    def orders(seed: str, n: int) -> list[list[int]]:
        return policy.blind_orders(seed=seed, question=f"Question {n}?", options=OPTIONS, count=2)

    assert all(orders("s1", n) == orders("s1", n) for n in range(20))
    assert any(orders("s1", n) != orders("s2", n) for n in range(20))
    firsts = {tuple(orders("s1", n)[0]) for n in range(20)}
    assert len(firsts) > 5  # shuffled per question, not one fixed order
    for n in range(20):
        first, second = orders("s1", n)
        assert sorted(first) == [0, 1, 2, 3] and all(a != b for a, b in zip(first, second, strict=True))
    assert policy.blind_orders(seed="s1", question="Question 0?", options=OPTIONS, count=1) == orders("s1", 0)[:1]


async def test_the_seed_setting_changes_the_order_shown(systemone, settings):
    settings.VERIFIER_TIMEOUT = 5.0
    systemone.script.choice_texts = {"Debias question": KNOWS}
    shown = []
    for seed in ("one", "two", "three"):
        settings.VERIFIER_BLIND_SEED = seed
        async with Gate.from_settings(threshold=0.6) as gate:
            decision = await gate.check(_items(1)[0])
        shown.append(tuple(decision.details["blind"]["orders"][0]["order"]))
        assert (
            decision.details["blind"]["orders"][0]["order"]
            == policy.blind_orders(seed=seed, question=_items(1)[0].text, options=OPTIONS, count=2)[0]
        )
    assert len(set(shown)) > 1
