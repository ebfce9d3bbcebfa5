"""A question's record in its owner's bank (lobby/reads/question_record.py) and the bank's pages
(lobby/pages/bank_views.py): checks, plays, the share right, reports and labels; private to its owner; a round from
picked questions."""

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from lobby.models import Room
from lobby.reads.question_record import played_question_ids, question_record
from quiz.models import Question, Round
from quiz.questions.bank import NOT_PLAYED, PLAYED, BankQuery, QuestionNotFound, bank_search
from quiz.services import round_create_for_host
from quiz.validation import QuestionData
from review.models import Review, ReviewLabel
from tests.factories import AnswerFactory, FlagFactory, PlayerFactory, ReportFactory, RoomFactory, VerdictFactory
from verifier.models import VerdictOutcome

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _the_default_language_after_each_test():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def host_client() -> tuple[Client, str]:
    client = Client()
    client.get("/rounds/new/")  # a page that gives the browser its owner key
    session = client.session
    if "owner_key" not in session:
        session["owner_key"] = f"key-{id(client)}"
        session.save()
    return client, client.session["owner_key"]


def capitals(owner_key: str) -> Round:
    return round_create_for_host(
        title="Capitals",
        questions=[
            QuestionData(text="Capital of Australia?", options=("Canberra", "Sydney", "Perth"), correct_index=0),
            QuestionData(text="Capital of Canada?", options=("Ottawa", "Toronto"), correct_index=0),
        ],
        owner_key=owner_key,
        imported_from="Moodle XML: capitals.xml",
    )


def played_game(round_: Round, *, right: int, wrong: int, phase: str = "finished", index: int = 1):
    room = RoomFactory(round=round_)
    for n in range(right + wrong):
        player = PlayerFactory(room=room, nickname=f"P{n}")
        AnswerFactory(player=player, question_index=0, option=0 if n < right else 1)
    # Where the game stands now, as it would after being played.
    Room.objects.filter(pk=room.pk).update(phase=phase, question_index=index)
    room.refresh_from_db()
    return room


def test_the_record_has_checks_plays_share_right_reports_and_labels():
    round_ = capitals("owner")
    australia = round_.entries.get(position=0).question
    VerdictFactory(question=australia, outcome=VerdictOutcome.DROPPED, score=0.41, threshold=0.6, model_id="jev-1")
    VerdictFactory(question=australia, outcome=VerdictOutcome.PASSED, score=0.93, threshold=0.6, model_id="jev-2")
    room = played_game(round_, right=3, wrong=1)
    played_game(round_, right=1, wrong=1)
    ReportFactory(player=room.players.first(), question_index=0, text="Perth is bigger")
    FlagFactory(question=australia, kind="crowd", room_code=room.code)
    Review.objects.create(question=australia, label=ReviewLabel.CORRECT, note="Checked the atlas")

    record = question_record(owner_key="owner", question_id=australia.pk)

    assert [(line.mark.mark, line.mark.model_id, line.mark.score, line.mark.threshold) for line in record.checks] == [
        ("passed", "jev-2", 0.93, 0.6),
        ("doubtful", "jev-1", 0.41, 0.6),
    ]
    assert record.plays == 2
    assert (record.answered, record.answered_right, record.share_right_percent) == (6, 4, 67)
    assert [report.text for report in record.reports] == ["Perth is bigger"]
    assert record.flags == ["The crowd disagreed with the marked answer"]
    assert [(label.label, label.note) for label in record.labels] == [("Labelled correct", "Checked the atlas")]
    assert record.imported_from == "Moodle XML: capitals.xml"
    assert [r.title for r in record.rounds] == ["Capitals"]


def test_a_question_not_yet_reached_is_not_played_and_has_no_answers():
    round_ = capitals("owner")
    canada = round_.entries.get(position=1).question
    played_game(round_, right=1, wrong=0, phase="question", index=1)  # Canada is being asked: not closed
    record = question_record(owner_key="owner", question_id=canada.pk)
    assert (record.plays, record.answered, record.share_right) == (0, 0, None)
    assert record.checks == [] and record.reports == [] and record.labels == []


def test_the_played_filter_uses_the_owners_games():
    round_ = capitals("owner")
    played_game(round_, right=1, wrong=0, phase="reveal", index=0)
    played = played_question_ids(owner_key="owner")
    find = lambda value: [  # noqa: E731
        q.text for q in bank_search(owner_key="owner", query=BankQuery(played=value), played_ids=played).questions
    ]
    assert find(PLAYED) == ["Capital of Australia?"]
    assert find(NOT_PLAYED) == ["Capital of Canada?"]
    # Another host's games of the same sample question do not make it played for this one.
    assert list(played_question_ids(owner_key="someone else")) == []


def test_another_host_cannot_read_the_record():
    round_ = capitals("owner")
    with pytest.raises(QuestionNotFound):
        question_record(owner_key="intruder", question_id=round_.entries.first().question_id)
    with pytest.raises(QuestionNotFound):
        question_record(owner_key="", question_id=round_.entries.first().question_id)


def test_the_pages_search_show_the_record_and_make_a_round():
    client, key = host_client()
    round_ = capitals(key)
    australia = round_.entries.get(position=0).question
    VerdictFactory(question=australia, outcome=VerdictOutcome.PASSED, score=0.93, threshold=0.6, model_id="jev-2")
    played_game(round_, right=1, wrong=1)

    page = client.get("/rounds/bank/", {"q": "australia"}).content.decode()
    assert "Capital of Australia?" in page and "Capital of Canada?" not in page
    assert "Passed the checker" in page and "imported from Moodle XML: capitals.xml" in page

    record = client.get(f"/rounds/bank/{australia.pk}/").content.decode()
    assert "jev-2" in record and "0.93" in record and "0.60" in record
    assert "50% answered right (1)" in record
    assert "Imported from Moodle XML: capitals.xml" in record

    canada = round_.entries.get(position=1).question
    response = client.post("/rounds/bank/round/", {"question": [str(canada.pk), str(australia.pk)], "title": "Two"})
    made = Round.objects.get(title="Two")
    assert response.status_code == 302 and response["Location"] == f"/rounds/{made.pk}/edit/"
    # In the order the picks came (a page sends its checkboxes in the order it lists them).
    assert list(made.entries.values_list("question_id", flat=True)) == [canada.pk, australia.pk]
    assert made.owner_key == key


def test_another_hosts_browser_gets_404_and_never_sees_the_question():
    owner, key = host_client()
    question = capitals(key).entries.first().question
    intruder, _ = host_client()
    assert intruder.get(f"/rounds/bank/{question.pk}/").status_code == 404
    assert "Capital of Australia?" not in intruder.get("/rounds/bank/", {"q": "capital"}).content.decode()
    response = intruder.post("/rounds/bank/round/", {"question": [str(question.pk)], "title": "Stolen"}, follow=True)
    assert "not yours" in response.content.decode()
    assert not Round.objects.filter(title="Stolen").exists()


@pytest.mark.parametrize(
    "params",
    [
        {"q": "\x00\x1b" * 50},
        {"q": "x" * 10_000},
        {"q": '"(NEAR*)"'},
        {"kind": "no-such-kind", "language": "xx", "check": "maybe", "played": "perhaps", "source": "?"},
        {"page": "-1"},
        {"page": "zzz"},
    ],
)
def test_bad_search_input_gets_a_page_never_a_crash(params):
    client, key = host_client()
    capitals(key)
    response = client.get("/rounds/bank/", params)
    assert response.status_code == 200
    page = response.content.decode()
    if "kind" in params:
        assert "could not be used" in page and "Capital of Australia?" in page


def test_picks_that_are_not_ids_are_refused_with_a_message():
    client, key = host_client()
    capitals(key)
    response = client.post("/rounds/bank/round/", {"question": ["1; DROP TABLE", "2"], "title": "x"}, follow=True)
    assert "could not be read" in response.content.decode()
    response = client.post("/rounds/bank/round/", {"title": "nothing picked"}, follow=True)
    assert "Pick at least one question" in response.content.decode()
    assert Question.objects.count() == 2
