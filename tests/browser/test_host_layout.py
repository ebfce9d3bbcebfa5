"""The host's screen holds its layout in every language: each phase (lobby, question, reveal, leaderboard, podium;
the extra-time panel folded and open) in English, German and Spanish at 1366x768 and 1920x1080, measured box by
box (tests/browser/host_layout.js). And what a room reads from it: no name of a full lobby vanishes, the first
leaderboard shows no false drops, the podium's points are in the page's language, the reveal's explanation and
source are at least 3 % of the screen's height. Screenshots go to $TMPDIR/quizgate-host-layout/."""

import re
import tempfile
import threading
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from playwright.sync_api import expect

from lobby import services
from lobby.tokens import HOST_TOKENS, host_token
from quiz.kinds import KINDS
from quiz.models import Round
from quiz.validation import QuestionData
from tests.browser.page_checks import check_host_layout, check_page
from tests.factories import RoomFactory, RoundFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(tempfile.gettempdir()) / "quizgate-host-layout"
SIZES = [(1366, 768), (1920, 1080)]
QUESTIONS = [
    QuestionData(
        text="Which of these rivers flows through the most countries on its way from its source to the sea?",
        options=(
            "The Danube, through ten countries",
            "The Nile, through eleven countries",
            "The Amazon, through three countries",
            "The Rhine, through six countries",
        ),
        correct_index=0,
        explanation="The Danube flows through or along ten countries, more than any other river in the world: "
        "Germany, Austria, Slovakia, Hungary, Croatia, Serbia, Romania, Bulgaria, Moldova and Ukraine.",
        source="Encyclopaedia Britannica, “Danube River” (2024 edition), geography section",
    ),
    QuestionData(
        text="How many bones does an adult human skeleton usually have?",
        options=("206", "212", "187", "300"),
        correct_index=0,
        explanation="A newborn has about 300 bones; many fuse while growing, leaving 206 in an adult.",
        source="Gray's Anatomy, 42nd edition",
    ),
]
# Twenty players, the room's most, one with a name of the longest kind a person may choose.
NICKNAMES = ["Bartholomew-Jonesson", *[f"Player {n}" for n in range(2, 21)]]
POINTS = {"en": "points", "de": "Punkte", "es": "puntos"}


def _off_the_loop(call):
    """Playwright's sync API runs an event loop in this thread; the game's services run in another."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", call()))
    thread.start()
    thread.join()
    return result.get("value")


def _hosted_room():
    # The longest check label a round shows ("checked: 2 doubtful kept by the host, 1 unverified, 3 not checked").
    round_ = RoundFactory(title="Quiz night: rivers, bones and the rest", questions=QUESTIONS)
    Round.objects.filter(pk=round_.pk).update(
        check_status="doubtful_kept", check_counts={"total": 11, "doubtful": 2, "unverified": 1, "unchecked": 3}
    )
    room = RoomFactory(round=Round.objects.get(pk=round_.pk), timer_seconds=120)
    session = SessionStore()
    session[HOST_TOKENS] = {room.code: host_token(room_code=room.code)}
    session.create()
    return room, session


def _host_page(browser, live_url, language):
    room, session = _off_the_loop(_hosted_room)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale=language)
    host = live_url.split("//")[1].split(":")[0]
    context.add_cookies(
        [
            {"name": "sessionid", "value": session.session_key, "domain": host, "path": "/"},
            {"name": "django_language", "value": language, "domain": host, "path": "/"},
        ]
    )
    return room, context.new_page()


def _each_size(page, name, check=None):
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        check_host_layout(page, f"{name}-{width}x{height}", screenshots=SHOTS)
        if check:
            check(width, height)


def _with_panel_folded_and_open(page, name, check=None):
    _each_size(page, name, check)
    page.locator("#time-panel summary").click()
    expect(page.locator("#time-list li").first).to_be_visible()
    _each_size(page, f"{name}-panel-open", check)
    page.locator("#time-panel summary").click()
    expect(page.locator("#time-list")).to_be_hidden()


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_every_host_phase_holds_its_layout_in_three_languages_and_two_sizes(live_url, browser, language):
    room, page = _host_page(browser, live_url, language)
    players = [_off_the_loop(lambda n=n: services.player_join(code=room.code, nickname=n).player) for n in NICKNAMES]
    _off_the_loop(lambda: services.player_time_set(room_id=room.pk, player_id=players[1].pk, time_percent=150))
    page.goto(f"{live_url}/host/{room.code}/")
    expect(page.locator("#player-count")).to_contain_text("20")

    def every_name_drawn_or_counted(width, height):
        chips = page.locator("#player-list li")
        drawn = [chip for chip in chips.all() if chip.is_visible()]
        list_box = page.locator("#player-list").bounding_box()
        for chip in drawn:
            box = chip.bounding_box()
            assert box["y"] + box["height"] <= list_box["y"] + list_box["height"] + 0.5, chip.text_content()
        more = page.locator("#player-more")
        counted = int(re.search(r"\d+", more.text_content()).group()) if more.is_visible() else 0
        assert len(drawn) + counted == len(NICKNAMES), (width, height, len(drawn), counted)
        # The first to arrive is never the one pushed out unseen.
        assert counted or page.locator("#player-list li", has_text=NICKNAMES[0]).is_visible()

    _each_size(page, f"{language}-lobby", every_name_drawn_or_counted)

    page.locator("#start-btn").click()
    expect(page.locator("#q-text")).to_have_text(QUESTIONS[0].text)
    _with_panel_folded_and_open(page, f"{language}-question")
    for n, player in enumerate(players[:12]):  # two right: the first leaderboard has players at rank 3 in it
        _off_the_loop(
            lambda p=player, o=int(n >= 2): services.answer_submit(player_id=p.pk, question_index=0, option=o)
        )

    page.locator("#close-btn").click()
    expect(page.locator("#r-explanation")).to_have_text(QUESTIONS[0].explanation)

    def notes_readable_from_the_back(width, height):
        for note in ("#r-explanation", "#r-source"):
            size = page.locator(note).evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
            assert size >= 0.03 * height - 0.05, (note, size, height)

    _with_panel_folded_and_open(page, f"{language}-reveal", notes_readable_from_the_back)

    page.locator("#to-leaderboard-btn").click()
    expect(page.locator("#leaderboard li").first).to_be_visible()

    def no_false_drops(width, height):
        # Everyone started tied: the first leaderboard has no ranking to have dropped from.
        assert page.locator("#leaderboard .rank", has_text="3.").count() > 0
        assert page.locator("#leaderboard .move.down").count() == 0
        assert "▼" not in page.locator("#leaderboard").inner_text()

    _with_panel_folded_and_open(page, f"{language}-leaderboard", no_false_drops)

    page.locator("#next-btn").click()
    expect(page.locator("#q-text")).to_have_text(QUESTIONS[1].text)
    page.locator("#close-btn").click()
    expect(page.locator("#r-explanation")).to_have_text(QUESTIONS[1].explanation)
    page.locator("#to-leaderboard-btn").click()
    page.locator("#next-btn").click()
    expect(page.locator("#podium li").first).to_be_visible()

    def points_in_the_pages_language(width, height):
        scores = page.locator("#podium .score").all_inner_texts()
        assert scores and all(POINTS[language] in text and "pts" not in text for text in scores), scores

    _each_size(page, f"{language}-podium", points_in_the_pages_language)


# Eight teams, the most a room has, with names of the longest a host may type (30 characters).
TEAM_NAMES = ["Die unglaublich schnelle Eulen", *[f"The quiz night's table no. {n}" for n in range(2, 9)]]


def _hosted_team_room():
    round_ = RoundFactory(title="Quiz night: rivers, bones and the rest", questions=QUESTIONS)
    created = services.room_create(
        round_id=round_.pk, timer_seconds=120, teams_mode="named", team_names="\n".join(TEAM_NAMES)
    )
    session = SessionStore()
    session[HOST_TOKENS] = {created.room.code: created.host_token}
    session.create()
    teams = list(created.room.teams.order_by("order").values_list("pk", flat=True))
    players = [
        services.player_join(code=created.room.code, nickname=name, team=teams[n % len(teams)]).player
        for n, name in enumerate(NICKNAMES)
    ]
    return created.room, session, players


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_team_lobby_board_and_podium_hold_their_layout_in_three_languages_and_two_sizes(
    live_url, browser, language
):
    room, session, players = _off_the_loop(_hosted_team_room)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale=language)
    host = live_url.split("//")[1].split(":")[0]
    context.add_cookies(
        [
            {"name": "sessionid", "value": session.session_key, "domain": host, "path": "/"},
            {"name": "django_language", "value": language, "domain": host, "path": "/"},
        ]
    )
    page = context.new_page()
    page.goto(f"{live_url}/host/{room.code}/")
    expect(page.locator("#team-list li")).to_have_count(len(TEAM_NAMES))
    _each_size(page, f"{language}-team-lobby")

    page.locator("#start-btn").click()
    expect(page.locator("#q-text")).to_have_text(QUESTIONS[0].text)
    for n, player in enumerate(players[:12]):
        _off_the_loop(
            lambda p=player, o=int(n >= 2): services.answer_submit(player_id=p.pk, question_index=0, option=o)
        )
    page.locator("#close-btn").click()
    page.locator("#to-leaderboard-btn").click()
    expect(page.locator("#team-board li")).to_have_count(len(TEAM_NAMES))

    def every_team_on_the_board(width, height):
        board = page.locator("#team-board").bounding_box()
        button = page.locator("#next-btn").bounding_box()
        assert board["y"] + board["height"] <= button["y"], (width, height, board, button)
        assert page.locator("#leaderboard li").count() == 3  # the best players under the teams

    _each_size(page, f"{language}-team-leaderboard", every_team_on_the_board)

    page.locator("#next-btn").click()
    page.locator("#close-btn").click()
    page.locator("#to-leaderboard-btn").click()
    page.locator("#next-btn").click()
    expect(page.locator("#podium li")).to_have_count(3)
    _each_size(page, f"{language}-team-podium")


# The pages that make a round, in each language: their words (labels, choices, hints) and their layout.
MAKING = {
    "en": {"labels": ["Topic", "Questions", "Difficulty", "Language of the questions"], "medium": "Medium",
           "single": "2 to 6 options, exactly one marked right."},
    "de": {"labels": ["Thema", "Fragen", "Schwierigkeit", "Sprache der Fragen"], "medium": "Mittel",
           "single": "2 bis 6 Antworten, genau eine als richtig markiert."},
    "es": {"labels": ["Tema", "Preguntas", "Dificultad", "Idioma de las preguntas"], "medium": "Media",
           "single": "De 2 a 6 opciones, exactamente una marcada como correcta."},
}  # fmt: skip
ENGLISH_ON_THE_FORM = ["Topic", "Difficulty", "Medium", "Source text", "or upload one", "exactly one marked right"]


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_generate_and_import_pages_speak_the_hosts_language_and_hold_their_layout(
    live_url, browser, settings, language
):
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"
    words = MAKING[language]
    page = browser.new_context(locale=language, viewport={"width": 1366, "height": 768}).new_page()
    page.goto(f"{live_url}/rounds/generate/")
    for label in words["labels"]:
        expect(page.get_by_label(label, exact=True)).to_be_visible()
    expect(page.get_by_label(words["labels"][2], exact=True).locator("option:checked")).to_have_text(words["medium"])
    check_page(page, f"generate-{language}", scrolls=True)
    page.goto(f"{live_url}/rounds/import/")
    rules = page.locator(".kind-rules > li")
    expect(rules).to_have_count(len(KINDS))  # one line per kind of question, slides included
    expect(rules.first).to_contain_text(words["single"])
    check_page(page, f"import-{language}", scrolls=True)
    if language != "en":
        for url in ("/rounds/generate/", "/rounds/import/"):
            page.goto(f"{live_url}{url}")
            shown = page.locator("main").inner_text()
            for english in ENGLISH_ON_THE_FORM:
                assert english not in shown, (language, url, english)
