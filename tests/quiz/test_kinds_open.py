"""The `open` kind (quiz/kinds/open.py): what a player may send, and the word cloud its reveal draws."""

import pytest

from quiz.exceptions import InvalidQuestion
from quiz.kinds import KINDS, BadAnswer
from quiz.kinds.open import CLOUD_WORDS, word_cloud
from quiz.validation import clean_question

OPEN = KINDS["open"]


def _question(max_answers=3):
    return clean_question({"kind": "open", "question": "One word for today?", "max_answers": max_answers})


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"text": "x" * 10_000}, "An answer is at most 40 characters."),
        ({"text": "bad\x00\x07word"}, "An answer cannot contain control or invisible characters."),
        ({"text": "zero\u200bwidth"}, "An answer cannot contain control or invisible characters."),
        ({"texts": ["word"] * 1_000}, "Send at most 3 answers."),
        ({"texts": "not a list"}, "Type an answer."),
        ({"texts": [1, 2]}, "Type an answer."),
        ({"text": "   "}, "Type an answer."),
        ({"text": "?!…"}, "An answer needs a letter or a digit."),
        ({}, "Type an answer."),
    ],
)
def test_bad_open_answers_are_refused_with_a_message(given, message):
    with pytest.raises(BadAnswer, match=message):
        OPEN.judge(_question(), given, ())


def test_an_answer_of_200_words_is_refused_by_its_length():
    with pytest.raises(BadAnswer, match="at most 40 characters"):
        OPEN.judge(_question(), {"text": " ".join(["word"] * 200)}, ())


def test_one_answer_question_says_so():
    with pytest.raises(BadAnswer, match="Send one answer."):
        OPEN.judge(_question(1), {"texts": ["a", "b"]}, ())


def test_good_answers_are_tidied_deduplicated_and_score_nothing():
    judged = OPEN.judge(_question(), {"texts": ["  Big   Bang ", "big bang", "Café"]}, ())
    assert judged.response == ["Big Bang", "Café"]
    assert (judged.credit, judged.right) == (0.0, False) and not OPEN.scored


def test_max_answers_is_bounded_in_the_file():
    assert _question(5).key == {"max_answers": 5}
    for bad in (0, 6, "three", True):
        with pytest.raises(InvalidQuestion, match="max_answers"):
            _question(bad)


def test_the_cloud_folds_words_sizes_them_by_count_and_hides_the_hidden():
    answers = [["Café", "Sun"], ["cafe "], ["CAFÉ"], ["sun"], ["Moon"]]
    cloud = word_cloud(answers)
    assert [(entry["key"], entry["count"]) for entry in cloud] == [("cafe", 3), ("sun", 2), ("moon", 1)]
    assert cloud[0]["word"] in ("Café", "cafe ", "CAFÉ")
    assert [entry["key"] for entry in word_cloud(answers, hidden={"cafe"})] == ["sun", "moon"]


def test_the_reveal_of_2000_players_stays_bounded_to_the_top_words():
    answers = [(0, [f"word {n % 700}", f"other {n}"]) for n in range(2_000)]
    reveal = OPEN.reveal(_question(), (), answers)
    assert len(reveal["cloud"]) == CLOUD_WORDS
    assert reveal["cloud"][0]["count"] == 3  # word 0 … word 599 were each sent three times
    hidden = OPEN.reveal_hiding(_question(), (), answers, {reveal["cloud"][0]["key"]})
    assert len(hidden["cloud"]) == CLOUD_WORDS and reveal["cloud"][0]["key"] not in {e["key"] for e in hidden["cloud"]}
