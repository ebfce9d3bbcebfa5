"""Teams in real Chromium pages, played in Spanish (issue 30): the host makes a room of named teams with team talk
on the home page; three phones pick their teams on joining and one switches in the lobby; during team talk the
options show but cannot be pressed; after the question the host's screen ranks the teams by the mean of their
members' points (the smaller team first) and each phone says its team's place and its own place in the team;
the podium is the teams'. Every page passes axe and fits its screen."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from lobby.models import Answer, Room
from lobby.reads import team_board
from tests.browser.page_checks import check_page
from tests.browser.test_axe import AxeAudit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TALK = 5


@pytest.fixture
def packs(transactional_db):
    # Before the browser starts: Playwright's loop then runs in this thread, and Django refuses sync queries.
    call_command("load_packs", verbosity=0)


def _off_the_loop(call):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


def _phone(browser, live_url, code, nickname, team):
    phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
    phone.goto(f"{live_url}/play/{code}/")
    phone.get_by_label("Tu apodo").fill(nickname)
    phone.get_by_label("Tu equipo").select_option(label=team)
    phone.get_by_role("button", name="Unirse").click()
    expect(phone.get_by_text("¡Ya estás dentro!")).to_be_visible()
    expect(phone.locator("#lobby-team")).to_have_text(f"Tu equipo: {team}")
    return phone


def test_named_teams_in_spanish_from_the_join_form_to_the_teams_podium(packs, live_url, browser):
    axe = AxeAudit()
    host = browser.new_context(locale="es-ES", viewport={"width": 1366, "height": 768}).new_page()
    host.goto(f"{live_url}/")
    host.locator("label", has_text="Cultura general").locator("input").check()
    host.get_by_label("Equipos con nombre").check()
    host.get_by_label("Nombres de los equipos, uno por línea (2–8)").fill("Búhos\nZorros")
    host.get_by_label("Segundos para hablar en equipo antes de que empiece el reloj (0–30)").fill(str(TALK))
    axe.check(host, "teams-home")
    host.get_by_role("button", name="Crear sala").click()
    expect(host).to_have_url(re.compile(r"/host/[A-Z2-9]{6}/$"))
    code = host.url.rstrip("/").rsplit("/", 1)[1]

    ana = _phone(browser, live_url, code, "Ana", "Búhos")
    beto = _phone(browser, live_url, code, "Beto", "Búhos")
    carla = _phone(browser, live_url, code, "Carla", "Zorros")
    # Beto moves to the Zorros in the lobby: his phone and the host's screen both say so.
    beto.get_by_label("Cambiar de equipo").select_option(label="Zorros")
    expect(beto.locator("#lobby-team")).to_have_text("Tu equipo: Zorros")
    teams = host.locator("#team-list li")
    expect(teams.filter(has_text="Zorros")).to_contain_text("2 jugadores")
    expect(teams.filter(has_text="Búhos")).to_contain_text("1 jugador")
    expect(teams.filter(has_text="Zorros")).to_contain_text("Beto, Carla")  # in the order they joined
    axe.check(host, "teams-host-lobby")
    axe.check(beto, "teams-phone-lobby")
    check_page(host, "teams-host-lobby-es-1366")
    check_page(beto, "teams-phone-lobby-es")

    host.get_by_role("button", name="Empezar la partida").click()
    # Team talk: the options are there to discuss, not yet to press; the clock waits.
    expect(ana.locator("#q-reading")).to_contain_text("Charla de equipo")
    expect(host.locator("#q-reading")).to_contain_text("Charla de equipo")
    right = ana.locator("#q-options button").filter(has_text="Buenos Aires")
    expect(right).to_be_visible()
    expect(right).to_be_disabled()
    assert ana.locator("#timer").text_content() == ""
    axe.check(ana, "teams-phone-talk")
    check_page(ana, "teams-phone-talk-es")

    expect(right).to_be_enabled(timeout=TALK * 1000 + 5000)
    right.click()
    beto.locator("#q-options button").filter(has_text="Buenos Aires").click()
    carla.locator("#q-options button").filter(has_text="Rosario").click()
    expect(ana.locator("#verdict")).to_contain_text("¡Correcto!")
    # Counted from the clock's start: the team talk is not in the answer's time.
    elapsed = _off_the_loop(lambda: Answer.objects.get(player__nickname="Ana").elapsed_ms)
    assert elapsed < TALK * 1000, elapsed

    host.get_by_role("button", name="Clasificación").click()
    board = host.locator("#team-board li")
    expect(board).to_have_count(2)
    # One right answer alone beats one right and one wrong: the mean, not the sum, ranks the teams.
    expect(board.first).to_contain_text("Búhos")
    expected = _off_the_loop(lambda: team_board.room_board(Room.objects.get(code=code)))
    for line in expected:
        expect(board.filter(has_text=line.name).locator(".score")).to_have_text(str(line.shown_score))
    expect(ana.locator("#lb-team")).to_contain_text("Búhos va #1 de 2 equipos")
    expect(beto.locator("#lb-team")).to_contain_text("Zorros va #2 de 2 equipos")
    expect(beto.locator("#lb-team")).to_contain_text("tú eres #1 de 2 en tu equipo")
    expect(carla.locator("#lb-team")).to_contain_text("tú eres #2 de 2 en tu equipo")
    axe.check(host, "teams-host-leaderboard")
    axe.check(carla, "teams-phone-leaderboard")
    check_page(host, "teams-host-leaderboard-es-1366")
    check_page(carla, "teams-phone-leaderboard-es")

    # The rest of the round unanswered, closed by the host at once.
    count = _off_the_loop(lambda: Room.objects.get(code=code).question_count)
    for number in range(2, count + 1):
        host.get_by_role("button", name="Siguiente pregunta").click()
        expect(host.locator("#q-progress")).to_contain_text(f"Pregunta {number} de {count}")
        host.get_by_role("button", name="Cerrar ahora").click()
        host.get_by_role("button", name="Clasificación").click()
        expect(host.locator("#team-board li").first).to_be_visible()
    host.get_by_role("button", name="Resultados finales").click()
    podium = host.locator("#podium li")
    expect(podium).to_have_count(2)
    expect(podium.first).to_contain_text("Búhos")
    expect(host.get_by_role("link", name="Resultados por equipo (CSV)")).to_be_visible()
    expect(beto.locator("#final-team")).to_contain_text("Zorros va #2 de 2 equipos")
    axe.check(host, "teams-host-podium")
    axe.check(beto, "teams-phone-finished")
    check_page(host, "teams-host-podium-es-1366")
    check_page(beto, "teams-phone-finished-es", scrolls=True)
    axe.assert_clean()
