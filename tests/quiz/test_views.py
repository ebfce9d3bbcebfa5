import json
import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import translation

from quiz.importing import CSV_COLUMNS, parse_csv
from quiz.models import CheckStatus, Provenance, Question, Round
from quiz.services import round_create_for_host
from quiz.validation import QuestionData


@pytest.fixture(autouse=True)
def _the_default_language_after_each_test():
    """A request with a language cookie leaves that language active in this thread: the next test starts in
    the default one."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


pytestmark = pytest.mark.django_db

HEADER = ",".join(CSV_COLUMNS)


def editor_data(title: str, blocks: list[dict[str, str]], *, initial: int = 0) -> dict[str, str]:
    data = {
        "title": title,
        "q-TOTAL_FORMS": str(len(blocks)),
        "q-INITIAL_FORMS": str(initial),
        "q-MIN_NUM_FORMS": "0",
        "q-MAX_NUM_FORMS": "30",
    }
    for index, block in enumerate(blocks):
        for key, value in block.items():
            data[f"q-{index}-{key}"] = value
    return data


def block(text: str, options: list[str], correct: int | None, **extra: str) -> dict[str, str]:
    data = {"text": text, **{f"option_{n}": option for n, option in enumerate(options)}, **extra}
    if correct is not None:
        data["correct"] = str(correct)
    return data


BLANK = {"text": "", "option_0": "", "option_1": "", "option_2": "", "option_3": ""}


def owner_key(client: Client) -> str:
    return client.session["owner_key"]


def make_round(client: Client, title: str = "Mine", count: int = 2) -> Round:
    response = client.post(
        "/rounds/new/",
        editor_data(title, [block(f"Question {n}?", ["Yes", "No"], 0) for n in range(count)]),
    )
    assert response.status_code == 302
    return Round.objects.get(owner_key=owner_key(client), title=title)


def test_list_page_without_rounds(client):
    response = client.get("/rounds/")
    assert response.status_code == 200
    assert "No rounds yet" in response.content.decode()
    assert "owner_key" not in client.session


def test_new_page_renders_blank_blocks_with_labels(client):
    response = client.get("/rounds/new/?title=Friday+quiz")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="Friday quiz"' in html
    assert response.context["formset"].total_form_count() == 3
    # Every visible input has a label (the <template> for the optional script included).
    ids = re.findall(r'<(?:input|textarea)(?![^>]*type="hidden")[^>]*\bid="([^"]+)"', html)
    assert ids
    for input_id in ids:
        assert f'for="{input_id}"' in html, input_id
    assert "csrfmiddlewaretoken" in html


def test_editor_saves_a_round_for_this_session(client):
    data = editor_data(
        "Friday quiz",
        [
            block("Capital of France?", ["Lyon", "Paris", "Nice", ""], 1, explanation="Since 987.", source="Atlas"),
            BLANK,
            block("Two plus two?", ["3", "4", "5", "6", "7", "8"], 5),
        ],
    )
    response = client.post("/rounds/new/", data)
    assert response.status_code == 302
    assert response["Location"] == "/rounds/"
    round_ = Round.objects.get()
    assert round_.owner_key == owner_key(client)
    assert round_.provenance == Provenance.HOST
    assert round_.title == "Friday quiz"
    assert [entry.question.as_data() for entry in round_.entries.select_related("question")] == [
        QuestionData("Capital of France?", ("Lyon", "Paris", "Nice"), 1, "Since 987.", "Atlas"),
        QuestionData("Two plus two?", ("3", "4", "5", "6", "7", "8"), 5),
    ]
    listing = client.get("/rounds/").content.decode()
    assert "Friday quiz" in listing
    assert "2 questions" in listing
    assert f'href="/?round={round_.pk}"' in listing
    assert f"/rounds/{round_.pk}/export.csv" in listing


def test_invalid_question_shows_the_error_by_number_and_keeps_input(client):
    data = editor_data(
        "Keep me",
        [
            block("Fine question?", ["Yes", "No"], 0),
            block("Same options?", ["Blue", "blue"], 0),
            block("No correct one?", ["Up", "Down"], None),
        ],
    )
    response = client.post("/rounds/new/", data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Question 2: two options are the same" in html
    assert "Question 3: the correct option is missing" in html
    assert 'value="Keep me"' in html
    assert "Fine question?" in html
    assert "Same options?" in html
    assert 'value="blue"' in html
    assert Round.objects.count() == 0
    assert Question.objects.count() == 0


def test_editor_needs_at_least_one_question(client):
    response = client.post("/rounds/new/", editor_data("Empty", [BLANK, BLANK]))
    assert response.status_code == 200
    assert "Write at least one question." in response.content.decode()
    assert Round.objects.count() == 0


def test_edit_replaces_entries_and_keeps_unchanged_questions(client):
    round_ = make_round(client, count=2)
    first, second = (entry.question for entry in round_.entries.select_related("question"))
    round_.check_status = CheckStatus.CHECKED
    round_.save()

    page = client.get(f"/rounds/{round_.pk}/edit/")
    assert page.status_code == 200
    assert page.context["formset"].total_form_count() == 2 + 3
    assert "Question 1?" in page.content.decode()

    data = editor_data(
        "Renamed",
        [
            block("Question 0?", ["Yes", "No"], 0),
            block("A new second question?", ["Red", "Green", "Blue"], 2),
            BLANK,
        ],
        initial=2,
    )
    response = client.post(f"/rounds/{round_.pk}/edit/", data)
    assert response.status_code == 302
    round_.refresh_from_db()
    assert round_.title == "Renamed"
    assert round_.check_status == CheckStatus.UNCHECKED
    questions = [entry.question for entry in round_.entries.select_related("question")]
    assert questions[0].pk == first.pk
    assert questions[1].text == "A new second question?"
    # The replaced question still exists: questions are never deleted.
    assert Question.objects.filter(pk=second.pk).exists()
    assert Round.objects.count() == 1


def test_user_text_is_escaped(client):
    make_round(client, title="<script>alert(1)</script>")
    html = client.get("/rounds/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_import_csv_reports_bad_rows_and_keeps_good_ones(client):
    text = (
        f"{HEADER}\n"
        "Good one?,Yes,No,,,,,A,,\n"
        "One option?,Only,,,,,,A,,\n"
        "Good two?,Yes,No,Maybe,,,,C,,\n"
        "Out of range?,Yes,No,,,,,F,,\n"
    )
    upload = SimpleUploadedFile("my-questions.csv", text.encode("utf-8"), content_type="text/csv")
    response = client.post("/rounds/import/", {"title": "", "file": upload})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Imported 2 questions" in html
    assert "<td>Line 3</td><td>a question needs 2 to 6 options, not 1</td>" in html
    assert "<td>Line 5</td><td>the correct option points past the 2 options</td>" in html
    round_ = Round.objects.get(owner_key=owner_key(client))
    assert round_.title == "my-questions"
    assert [question.text for question in round_.questions.order_by("entries__position")] == [
        "Good one?",
        "Good two?",
    ]
    assert f'href="/?round={round_.pk}"' in html


def test_import_pasted_json_uses_its_title_and_reports_items(client):
    text = json.dumps(
        {
            "title": "From JSON",
            "questions": [
                {"question": "Q?", "options": ["Yes", "No"], "correct_index": 1},
                {"question": "", "options": ["Yes", "No"], "correct": "A"},
            ],
        }
    )
    response = client.post("/rounds/import/", {"title": "", "text": text})
    html = response.content.decode()
    assert "Imported 1 question" in html
    assert "<td>Item 2</td><td>question is empty</td>" in html
    assert Round.objects.get().title == "From JSON"


def test_import_with_only_bad_rows_saves_nothing(client):
    response = client.post("/rounds/import/", {"title": "X", "text": "question,option_a,correct\nQ?,A,A\n"})
    html = response.content.decode()
    assert "Imported 0 questions" in html
    assert "nothing was saved" in html
    assert "option_b" in html
    assert Round.objects.count() == 0


def test_import_needs_a_file_or_text(client):
    response = client.post("/rounds/import/", {"title": "X"})
    assert "Choose a file or paste some text." in response.content.decode()


def test_import_rejects_a_file_that_is_not_utf8(client):
    upload = SimpleUploadedFile("q.csv", "question;é".encode("utf-16"), content_type="text/csv")
    response = client.post("/rounds/import/", {"file": upload})
    assert "not UTF-8" in response.content.decode()
    assert Round.objects.count() == 0


def test_export_downloads(client):
    round_ = make_round(client, title="Export me", count=3)
    response = client.get(f"/rounds/{round_.pk}/export.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="export-me-{round_.pk}.csv"'
    exported = parse_csv(response.content.decode("utf-8"))
    assert exported.errors == []
    assert [question.text for question in exported.questions] == ["Question 0?", "Question 1?", "Question 2?"]

    response = client.get(f"/rounds/{round_.pk}/export.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="export-me-{round_.pk}.json"'
    payload = json.loads(response.content)
    assert payload["title"] == "Export me"
    assert len(payload["questions"]) == 3


def test_another_session_gets_404(client):
    round_ = make_round(client)
    other = Client()
    for url in (f"/rounds/{round_.pk}/edit/", f"/rounds/{round_.pk}/export.csv", f"/rounds/{round_.pk}/export.json"):
        assert other.get(url).status_code == 404
    post = other.post(f"/rounds/{round_.pk}/edit/", editor_data("Stolen", [block("Mine now?", ["Yes", "No"], 0)]))
    assert post.status_code == 404
    round_.refresh_from_db()
    assert round_.title == "Mine"
    assert "Mine" not in other.get("/rounds/").content.decode()


def test_rounds_without_owner_are_not_reachable(client):
    unowned = round_create_for_host(title="Nobody's", questions=[QuestionData("Q?", ("A", "B"), 0)], owner_key="")
    assert client.get(f"/rounds/{unowned.pk}/edit/").status_code == 404


def test_csrf_is_enforced():
    csrf_client = Client(enforce_csrf_checks=True)
    data = editor_data("No token", [block("Q?", ["Yes", "No"], 0)])
    assert csrf_client.post("/rounds/new/", data).status_code == 403
    assert csrf_client.post("/rounds/import/", {"text": f"{HEADER}\nQ?,Y,N,,,,,A,,\n"}).status_code == 403
    assert Round.objects.count() == 0

    csrf_client.get("/rounds/new/")
    token = csrf_client.cookies["csrftoken"].value
    assert csrf_client.post("/rounds/new/", {**data, "csrfmiddlewaretoken": token}).status_code == 302


def test_long_round_is_not_offered_in_the_editor(client):
    client.get("/rounds/")
    questions = [QuestionData(f"Q{n}?", ("A", "B"), 0) for n in range(31)]
    session = client.session
    session["owner_key"] = "k" * 32
    session.save()
    round_ = round_create_for_host(title="Long", questions=questions, owner_key="k" * 32)
    response = client.get(f"/rounds/{round_.pk}/edit/")
    assert response.status_code == 200
    assert "the editor handles up to 30" in response.content.decode()


@pytest.mark.parametrize(
    ("language", "account", "session"),
    [
        ("en", "belong to your account (mara)", "belong to this browser session only"),
        ("de", "gehören deinem Konto (mara)", "Sign in"),
        ("es", "pertenecen a tu cuenta (mara)", "Sign in"),
    ],
)
def test_my_questions_says_whose_the_rounds_are_an_accounts_or_this_browsers(language, account, session):
    from tests.factories import HostUserFactory

    anonymous = Client()
    anonymous.cookies["django_language"] = language
    page = anonymous.get("/rounds/").content.decode()
    assert account not in page and "mara" not in page
    if language == "en":
        assert session in page and "Sign in or create an account to keep them" in page
    signed_in = Client()
    signed_in.cookies["django_language"] = language
    signed_in.force_login(HostUserFactory(username="mara"))
    page = signed_in.get("/rounds/").content.decode()
    assert account in page
    assert "browser session" not in page and "Browsersitzung" not in page and "sesión del navegador" not in page


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_without_a_checker_check_my_questions_is_shown_off_and_says_which_setting_turns_it_on(language, settings):
    settings.VERIFIER_BACKEND = "off"
    browser = Client()
    browser.cookies["django_language"] = language
    created = browser.post("/rounds/new/", editor_data("Mine", [block("Two and two?", ["3", "4"], 1)]))
    assert created.status_code == 302
    pk = Round.objects.get(title="Mine").pk
    page = browser.get(f"/rounds/{pk}/edit/").content.decode()
    button = re.search(r'<button[^>]*id="check-questions"[^>]*>', page)
    assert button and "disabled" in button.group(0) and 'aria-describedby="checker-off"' in button.group(0)
    assert re.search(r'id="checker-off">[^<]+<code>VERIFIER_BACKEND</code>', page)
    assert f"/rounds/{pk}/check/" not in page  # nothing to post to
