"""The words a host reads on the pages that make rounds: the generate page and its job page in the host's language,
the import page's and the editor's help saying what each kind of question needs (not "2 to 6 options with one marked
correct" for every kind), the editor's mistakes in the host's words (no JSON field names), and a kind the editor
does not offer refused by name instead of played as another kind."""

import pytest

from quiz.generation.jobs import generation_job_create
from quiz.kinds import KINDS
from quiz.models import Round
from tests.quiz.test_views import editor_data

pytestmark = pytest.mark.django_db

# The generate form's words in each language: labels, hints and the difficulty and language names.
GENERATE_WORDS = {
    "en": ["Topic", "Questions", "Difficulty", "Medium", "Language of the questions", "English",
           "Source text (optional)", "…or upload one (optional)", "A .txt, .md or .pdf file",
           "What the round is about"],
    "de": ["Thema", "Fragen", "Schwierigkeit", "Mittel", "Sprache der Fragen", "Englisch", "Quelltext (optional)",
           "…oder eine Datei hochladen (optional)", "Eine .txt-, .md- oder .pdf-Datei", "Worum es in der Runde geht"],
    "es": ["Tema", "Preguntas", "Dificultad", "Media", "Idioma de las preguntas", "Inglés", "Texto fuente (opcional)",
           "…o sube uno (opcional)", "Un archivo .txt, .md o .pdf", "De qué trata la ronda"],
}  # fmt: skip
ENGLISH_ONLY = ["Topic", "Difficulty", "Medium", "Source text (optional)", "or upload one", "What the round is about"]


@pytest.fixture
def writer_set(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = "writer-2025-01-01"


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_generate_page_speaks_the_hosts_language(client, writer_set, language):
    page = client.get("/rounds/generate/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    for words in GENERATE_WORDS[language]:
        assert words in page, (language, words)
    if language != "en":
        for words in ENGLISH_ONLY:
            assert words not in page, (language, words)


@pytest.mark.parametrize(("language", "medium", "english"), [("de", "Mittel", "Englisch"), ("es", "Media", "Inglés")])
def test_the_job_page_names_the_difficulty_and_language_in_the_hosts_language(
    client, writer_set, language, medium, english
):
    session = client.session
    session["owner_key"] = "host-key"
    session.save()
    job = generation_job_create(owner_key="host-key", count=5, topic="Birds", language="en")
    page = client.get(f"/rounds/generate/{job.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert f"· {medium} · {english}" in page
    assert "Medium" not in page


@pytest.mark.parametrize("path", ["/rounds/import/", "/rounds/new/"])
@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_the_import_and_editor_help_say_what_each_kind_needs(client, path, language):
    page = client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert "2 to 6 options with one marked correct" not in page
    assert "Each question needs 2 to 6 different options" not in page
    from django.utils import translation

    with translation.override(language):
        for kind in KINDS.values():
            assert f"<strong>{kind.label}</strong>" in page, (language, kind.name)
            assert str(kind.rule).replace("'", "&#x27;") in page, (language, kind.name)
    if language != "en":
        assert "exactly one marked right" not in page and "none of them right" not in page


def test_an_editor_mistake_is_said_in_the_hosts_words(client):
    blocks = [{"kind": "multi", "text": "Which are prime?", "option_0": "2", "option_1": "4"}]
    html = client.post("/rounds/new/", editor_data("Primes", blocks)).content.decode()
    assert "Question 1: mark at least one option as right" in html
    assert "correct_indexes must" not in html
    de = client.post("/rounds/new/", editor_data("Primes", blocks), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Frage 1: markiere mindestens eine Antwort als richtig" in de


def test_a_kind_the_editor_does_not_offer_is_refused_by_name_not_played_as_single(client):
    blocks = [{"kind": "essay", "text": "Write about rivers.", "option_0": "Yes", "option_1": "No", "correct": "0"}]
    response = client.post("/rounds/new/", editor_data("Forged", blocks))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Question 1: Unknown kind of question: essay. Pick one from the list." in html
    assert not Round.objects.filter(title="Forged").exists()
