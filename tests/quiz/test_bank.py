"""The question bank's search, filters and round from picks (quiz/questions/bank.py), on whichever database the run has:
PostgreSQL's text search with DATABASE_URL set, SQLite's FTS5 without."""

import pytest
from django.db import connection

from quiz.exceptions import QuizError
from quiz.models import CheckStatus, Provenance, Question, RoundQuestion
from quiz.questions.bank import MAX_PICKED, NOT_PLAYED, PLAYED, BankQuery, bank_round_create, bank_search
from quiz.questions.search_index import MAX_SEARCH_CHARS, MAX_SEARCH_WORDS, search_words, words_match
from quiz.services import round_create_for_host
from quiz.validation import QuestionData
from tests.factories import PackFactory, QuestionFactory, RoundFactory, VerdictFactory
from verifier.models import VerdictOutcome

pytestmark = pytest.mark.django_db

KEY, OTHER = "host-a", "host-b"


def data(text: str, options=("Yes", "No"), **extra) -> QuestionData:
    return QuestionData(text=text, options=tuple(options), correct_index=0, **extra)


def texts(result) -> list[str]:
    return [question.text for question in result.questions]


def find(words: str = "", *, key: str = KEY, played_ids=None, **filters) -> list[str]:
    return texts(bank_search(owner_key=key, query=BankQuery(words=words, **filters), played_ids=played_ids))


@pytest.fixture
def rounds():
    mine = round_create_for_host(
        title="Capitals",
        questions=[
            data("Which city is the capital of Australia?", ("Canberra", "Sydney")),
            data("Which city is the capital of Canada?", ("Ottawa", "Toronto"), explanation="Ottawa since 1857."),
        ],
        owner_key=KEY,
    )
    theirs = round_create_for_host(
        title="Secret", questions=[data("Which city is the capital of Peru?", ("Lima", "Cusco"))], owner_key=OTHER
    )
    return mine, theirs


def test_the_database_under_test_is_the_one_the_run_names():
    # Run once with DATABASE_URL (PostgreSQL) and once without (SQLite): both word searches are exercised.
    assert connection.vendor in ("postgresql", "sqlite")


def test_a_word_of_a_question_finds_it_and_only_the_owners(rounds):
    assert find("Australia") == ["Which city is the capital of Australia?"]
    assert find("capital") == ["Which city is the capital of Canada?", "Which city is the capital of Australia?"]
    # Another host's question is not in this host's bank, even by its own words.
    assert find("Peru") == []
    assert find("Peru", key=OTHER) == ["Which city is the capital of Peru?"]


def test_words_are_matched_in_any_case_as_prefixes_and_all_of_them(rounds):
    assert find("AUSTRAL") == ["Which city is the capital of Australia?"]
    assert find("capital canada") == ["Which city is the capital of Canada?"]
    assert find("capital narnia") == []


def test_an_option_or_the_explanation_finds_the_question(rounds):
    assert find("Canberra") == ["Which city is the capital of Australia?"]
    assert find("1857") == ["Which city is the capital of Canada?"]


def test_a_question_added_later_is_found_at_once(rounds):
    round_create_for_host(title="More", questions=[data("Who painted Guernica?")], owner_key=KEY)
    assert find("guernica") == ["Who painted Guernica?"]


def test_the_sample_packs_are_in_every_bank_and_can_be_left_out(rounds):
    pack = PackFactory(title="Science", language="de")
    QuestionFactory(text="Welcher Planet ist der Sonne am nächsten?", provenance=Provenance.PACK, pack=pack)
    assert find("Planet") == ["Welcher Planet ist der Sonne am nächsten?"]
    assert find("Planet", key=OTHER) == ["Welcher Planet ist der Sonne am nächsten?"]
    assert find("Planet", source="mine") == []
    assert find(source="packs") == ["Welcher Planet ist der Sonne am nächsten?"]
    assert find("nächsten", language="de") == ["Welcher Planet ist der Sonne am nächsten?"]
    # Without an owner key (a browser that made nothing) only the packs.
    assert find(key="") == ["Welcher Planet ist der Sonne am nächsten?"]


def test_filters_by_kind_and_language(rounds):
    round_create_for_host(
        title="TF",
        questions=[
            QuestionData(text="The Moon is a planet.", options=("True", "False"), correct_index=1, kind="true_false")
        ],
        owner_key=KEY,
    )
    assert find(kind="true_false") == ["The Moon is a planet."]
    assert "The Moon is a planet." not in find(kind="single")
    mine = rounds[0]
    mine.language = "es"
    mine.save(update_fields=["language"])
    assert find(language="es") == ["Which city is the capital of Canada?", "Which city is the capital of Australia?"]
    assert find(language="de") == []


def test_filters_by_how_the_gate_last_checked_it(rounds):
    australia, canada = (entry.question for entry in rounds[0].entries.all())
    VerdictFactory(question=australia, outcome=VerdictOutcome.DROPPED, score=0.3)
    VerdictFactory(question=australia, outcome=VerdictOutcome.PASSED, score=0.9)  # the latest counts
    VerdictFactory(question=canada, outcome=VerdictOutcome.UNVERIFIED, score=None)
    assert find(check="passed") == [australia.text]
    assert find(check="dropped") == []
    assert find(check="unverified") == [canada.text]
    round_create_for_host(title="New", questions=[data("Never checked question?")], owner_key=KEY)
    assert find(check="unchecked") == ["Never checked question?"]


def test_filters_by_played_through_the_ids_the_game_gives(rounds):
    australia = rounds[0].entries.get(position=0).question
    played = Question.objects.filter(pk=australia.pk).values("pk")
    assert find(played=PLAYED, played_ids=played) == [australia.text]
    assert find(played=NOT_PLAYED, played_ids=played) == ["Which city is the capital of Canada?"]


@pytest.mark.parametrize(
    "typed",
    [
        '"capital',
        'capital"',
        "capital*",
        "*",
        "capital NEAR canada",
        "NEAR(capital canada)",
        "(capital OR canada) AND NOT peru",
        "capital:* & canada | !peru <-> x",
        "capital' OR '1'='1",
        "\x00\x01\x1b[31mcapital\x7f",
        "^capital -canada +x ~y {z} [a] col:umn",
        "a" * 10_000,
        "capital " * 2_000,
        "\u202e\u200bcapital\ufeff",
    ],
)
def test_a_search_of_query_syntax_or_junk_never_crashes(rounds, typed):
    result = bank_search(owner_key=KEY, query=BankQuery(words=typed))
    found = [question.text for question in result.questions]
    assert set(found) <= {"Which city is the capital of Canada?", "Which city is the capital of Australia?"}


def test_syntax_characters_are_only_characters(rounds):
    # Quotes, stars and operators around the words change nothing: the same words find the same questions.
    assert find('"capital" AND (canada*)') == find("capital and canada")
    # An operator word is searched as a word, and no question has "near" in it.
    assert find("capital NEAR canada") == []


def test_nothing_searchable_says_so_and_a_long_search_is_cut_with_a_note(rounds):
    result = bank_search(owner_key=KEY, query=BankQuery(words='"*()" \x00'))
    assert "no words to search for" in result.note
    assert len(texts(result)) == 2  # nothing to narrow by: the whole bank
    long = bank_search(owner_key=KEY, query=BankQuery(words="canada " + "x" * 10_000))
    assert f"first {MAX_SEARCH_CHARS} characters" in long.note
    assert texts(long) == []  # its second word ("xxx…", cut) is in no question
    assert len(search_words(" ".join(f"w{n}" for n in range(50)))) == MAX_SEARCH_WORDS


def test_picked_questions_become_a_new_round_in_the_order_picked(rounds):
    australia, canada = (entry.question for entry in rounds[0].entries.all())
    VerdictFactory(question=canada, outcome=VerdictOutcome.PASSED, score=0.9)
    pack = PackFactory(language="en")
    sample = QuestionFactory(text="Sample question?", provenance=Provenance.PACK, pack=pack)
    round_ = bank_round_create(owner_key=KEY, question_ids=[canada.pk, sample.pk, australia.pk], title=" Best of ")
    assert round_.owner_key == KEY and round_.title == "Best of" and round_.language == "en"
    # The same questions, not copies: their checks and plays stay theirs.
    assert list(round_.entries.values_list("question_id", flat=True)) == [canada.pk, sample.pk, australia.pk]
    assert round_.check_status == CheckStatus.PARTLY_UNVERIFIED
    assert round_.check_counts["total"] == 3 and round_.check_counts["unchecked"] == 2


def test_a_round_is_never_made_of_another_hosts_questions(rounds):
    theirs = rounds[1].entries.get().question
    mine = rounds[0].entries.first().question
    with pytest.raises(QuizError, match="not yours"):
        bank_round_create(owner_key=KEY, question_ids=[mine.pk, theirs.pk], title="Stolen")
    with pytest.raises(QuizError, match="not yours"):
        bank_round_create(owner_key=KEY, question_ids=[10**12], title="Nothing")
    assert not RoundQuestion.objects.filter(round__title="Stolen").exists()


def test_a_round_needs_picks_and_not_too_many(rounds):
    with pytest.raises(QuizError, match="at least one"):
        bank_round_create(owner_key=KEY, question_ids=[], title="Empty")
    many = RoundFactory(owner_key=KEY, questions=[data(f"Q{n}?") for n in range(MAX_PICKED + 1)])
    ids = list(many.entries.values_list("question_id", flat=True))
    with pytest.raises(QuizError, match=f"at most {MAX_PICKED}"):
        bank_round_create(owner_key=KEY, question_ids=ids, title="Too many")
    with pytest.raises(QuizError, match="no rounds"):
        bank_round_create(owner_key="", question_ids=ids[:1], title="No key")


def test_case_is_folded_and_accents_kept_the_same_way_in_both_databases():
    round_create_for_host(title="Umlaute", questions=[data("ÄRGER in Zürich?")], owner_key=KEY)
    assert find("ärger") == ["ÄRGER in Zürich?"]
    assert find("ZÜR") == ["ÄRGER in Zürich?"]
    assert find("zurich") == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's index (run with DATABASE_URL)")
def test_postgresql_searches_through_the_gin_index(rounds):
    # The query's expression must be the index's to the letter, or every search reads the whole table.
    sql, params = Question.objects.filter(words_match(search_words("capital"))).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "quiz_question_words" in plan, plan


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 triggers (run without DATABASE_URL)")
def test_sqlite_triggers_lost_to_a_table_rebuild_are_made_again_after_migrate(rounds):
    from django.apps import apps
    from django.db.models.signals import post_migrate

    with connection.cursor() as cursor:
        for name in ("quiz_question_fts_ai", "quiz_question_fts_ad", "quiz_question_fts_au"):
            cursor.execute(f"DROP TRIGGER {name}")  # as Django's rebuild of quiz_question drops them
    round_create_for_host(title="Lost", questions=[data("Written while the index was off?")], owner_key=KEY)
    assert find("written") == []
    quiz = apps.get_app_config("quiz")
    post_migrate.send(sender=quiz, app_config=quiz, using="default")  # as every `migrate` ends
    assert find("written") == ["Written while the index was off?"]
    round_create_for_host(title="After", questions=[data("Written after the repair?")], owner_key=KEY)
    assert find("written") == ["Written after the repair?", "Written while the index was off?"]
