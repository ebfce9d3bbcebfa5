"""A "pick several" question: ticking every option earns nothing on every question of the sample packs, a fully
right answer earns full marks, and the rule (quiz/kinds/multi.py, docs/hosts/scoring.md) holds in between."""

from itertools import combinations

import pytest

from quiz.exceptions import InvalidQuestion
from quiz.kinds import kind_of
from quiz.kinds.multi import multi_credit
from quiz.packs import PACK_DIRECTORY, pack_file_read
from quiz.validation import clean_question


def _sample_multi_questions():
    found = []
    for path in sorted(PACK_DIRECTORY.glob("*.json")):
        for question in pack_file_read(path).questions:
            if question.kind == "multi":
                found.append(pytest.param(question, id=f"{path.stem}:{question.text[:30]}"))
    return found


MULTI = _sample_multi_questions()


def test_the_sample_packs_have_multi_questions():
    assert len(MULTI) >= 3  # every shape of question is covered below, whatever the packs hold


@pytest.mark.parametrize("question", MULTI)
def test_ticking_every_option_earns_nothing_and_the_right_ones_earn_full_marks(question):
    judge = kind_of(question).judge
    order = tuple(range(len(question.options)))
    every = judge(question, {"options": list(order)}, order)
    assert (every.credit, every.right) == (0.0, False)
    right = judge(question, {"options": list(question.key["correct_indexes"])}, order)
    assert (right.credit, right.right) == (1.0, True)


@pytest.mark.parametrize("options", range(2, 7))
def test_no_answer_scores_more_than_its_right_part_and_every_tick_all_is_nothing(options):
    for k in range(1, options):
        right = set(range(k))
        assert multi_credit(picked=set(range(options)), right=right, options=options) == 0.0
        for size in range(1, options + 1):
            for picked in map(set, combinations(range(options), size)):
                credit = multi_credit(picked=picked, right=right, options=options)
                expected = max(0.0, len(picked & right) / k - len(picked - right) / (options - k))
                assert credit == pytest.approx(expected)
                assert 0.0 <= credit <= 1.0
                assert (credit == 1.0) == (picked == right)


def test_the_primes_question_of_three_right_in_five():
    # 2, 3, 5 are prime; 4 and 9 are not. The old rule paid a third of the marks for ticking all five.
    assert multi_credit(picked={0, 1, 2, 3, 4}, right={0, 1, 2}, options=5) == 0.0
    assert multi_credit(picked={0, 1}, right={0, 1, 2}, options=5) == pytest.approx(2 / 3)
    assert multi_credit(picked={0, 1, 2, 3}, right={0, 1, 2}, options=5) == pytest.approx(1 / 2)


def test_a_question_whose_every_option_is_right_is_refused():
    with pytest.raises(InvalidQuestion, match="at least one option must be wrong"):
        clean_question({"kind": "multi", "question": "Q?", "options": ["a", "b"], "correct_indexes": [0, 1]})
