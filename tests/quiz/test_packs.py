import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from quiz.models import Pack, Provenance, Question
from quiz.packs import PACK_DIRECTORY, PackFileError, pack_file_read, pack_load_all
from quiz.services import round_create_from_pack
from quiz.validation import clean_question

SHIPPED = sorted(PACK_DIRECTORY.glob("*.json"))


def _raw(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write_pack(directory: Path, slug: str, questions: list[dict], title: str = "A pack") -> Path:
    path = directory / f"{slug}.json"
    path.write_text(json.dumps({"slug": slug, "title": title, "questions": questions}), encoding="utf-8")
    return path


def _question(n: int, correct: int = 0) -> dict:
    return {
        "text": f"Question {n}?",
        "options": [f"A{n}", f"B{n}", f"C{n}"],
        "correct_index": correct,
        "explanation": f"Because {n}.",
        "source": "A reference",
    }


def test_the_app_ships_at_least_four_packs():
    assert len(SHIPPED) >= 4


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_shipped_pack_is_well_formed(path):
    raw = _raw(path)
    assert raw["slug"] == path.stem
    assert raw["title"].strip()
    assert len(raw["questions"]) >= 10
    texts = set()
    for number, question in enumerate(raw["questions"], start=1):
        data = clean_question(question)  # raises on anything invalid
        assert data.explanation, f"{path.name} question {number} has no explanation"
        assert data.source, f"{path.name} question {number} has no source"
        if data.kind == "single":
            assert "correct_index" in question, f"{path.name} question {number} should use correct_index"
        texts.add(data.text.casefold())
    assert len(texts) == len(raw["questions"]), f"{path.name} repeats a question"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_shipped_pack_varies_the_position_of_the_correct_option(path):
    positions = [question["correct_index"] for question in _raw(path)["questions"] if "kind" not in question]
    assert len(set(positions)) > 1
    # No single position should dominate a pack.
    assert max(positions.count(position) for position in set(positions)) <= len(positions) // 2


def test_shipped_slugs_and_question_texts_are_unique_across_packs():
    slugs = [_raw(path)["slug"] for path in SHIPPED]
    assert len(set(slugs)) == len(slugs)
    texts = [question["text"].casefold() for path in SHIPPED for question in _raw(path)["questions"]]
    assert len(set(texts)) == len(texts)


@pytest.mark.django_db
def test_load_creates_packs_with_pack_provenance():
    packs = pack_load_all()
    assert {pack.slug for pack in packs} == {path.stem for path in SHIPPED}
    expected = sum(len(_raw(path)["questions"]) for path in SHIPPED)
    assert Question.objects.count() == expected
    assert set(Question.objects.values_list("provenance", flat=True)) == {Provenance.PACK}
    assert not Question.objects.filter(pack__isnull=True).exists()
    history = Pack.objects.get(slug="history")
    first = _raw(PACK_DIRECTORY / "history.json")["questions"][0]
    assert history.questions.order_by("id").first().as_data() == clean_question(first)


@pytest.mark.django_db
def test_loading_twice_gives_the_same_counts_and_keeps_the_questions():
    pack_load_all()
    pack_ids = sorted(Pack.objects.values_list("id", flat=True))
    question_ids = sorted(Question.objects.values_list("id", flat=True))
    pack_load_all()
    assert sorted(Pack.objects.values_list("id", flat=True)) == pack_ids
    assert sorted(Question.objects.values_list("id", flat=True)) == question_ids


@pytest.mark.django_db
def test_reloading_a_changed_pack_replaces_its_questions_and_updates_the_title(tmp_path):
    _write_pack(tmp_path, "mini", [_question(1), _question(2, correct=1)], title="Mini")
    (pack,) = pack_load_all(directory=tmp_path)
    old_ids = set(pack.questions.values_list("id", flat=True))

    _write_pack(tmp_path, "mini", [_question(1), _question(3, correct=2)], title="Mini, revised")
    (reloaded,) = pack_load_all(directory=tmp_path)

    assert reloaded.pk == pack.pk
    assert Pack.objects.get(pk=pack.pk).title == "Mini, revised"
    assert [q.text for q in reloaded.questions.order_by("id")] == ["Question 1?", "Question 3?"]
    assert not old_ids & set(reloaded.questions.values_list("id", flat=True))
    # The old questions left the pack; they are kept, not deleted.
    assert set(Question.objects.filter(pack__isnull=True).values_list("id", flat=True)) == old_ids


@pytest.mark.django_db
def test_reloading_a_changed_pack_keeps_the_questions_a_round_used(tmp_path):
    _write_pack(tmp_path, "mini", [_question(1), _question(2)])
    (pack,) = pack_load_all(directory=tmp_path)
    round_ = round_create_from_pack(pack=pack)

    _write_pack(tmp_path, "mini", [_question(3)])
    pack_load_all(directory=tmp_path)

    assert [q.text for q in pack.questions.all()] == ["Question 3?"]
    # The round still has the questions it was played with; they have left the pack.
    assert [entry.question.text for entry in round_.entries.all()] == ["Question 1?", "Question 2?"]
    assert all(entry.question.pack_id is None for entry in round_.entries.all())


@pytest.mark.django_db
def test_a_bad_question_names_the_file_and_the_question_and_loads_nothing(tmp_path):
    _write_pack(tmp_path, "good", [_question(1), _question(2)])
    bad = _question(3)
    bad["options"] = ["Same", "same", "Other"]
    _write_pack(tmp_path, "broken", [_question(1), _question(2), bad])

    with pytest.raises(PackFileError) as excinfo:
        pack_load_all(directory=tmp_path)

    message = str(excinfo.value)
    assert "broken.json" in message
    assert "question 3" in message
    assert "two options are the same" in message
    assert not Pack.objects.exists()
    assert not Question.objects.exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ('["a list"]', "must hold a JSON object"),
        ('{"slug": "other", "title": "T", "questions": [{}]}', "does not match the file name"),
        ('{"slug": "pack", "title": "", "questions": [{}]}', "title is empty"),
        ('{"slug": "pack", "title": "T", "questions": []}', "questions must be a non-empty list"),
        ('{"slug": "pack", "title": "T", "questions": ["text"]}', "question 1: a question must be an object"),
        (
            '{"slug": "pack", "title": "T", "questions": [{"text": "Q?", "options": ["a", "b"], "correct_index": 5}]}',
            "question 1: the correct option points past the 2 options",
        ),
    ],
)
def test_a_bad_pack_file_gives_a_clear_error(tmp_path, content, expected):
    path = tmp_path / "pack.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PackFileError) as excinfo:
        pack_file_read(path)
    assert str(excinfo.value).startswith("pack.json: ")
    assert expected in str(excinfo.value)


@pytest.mark.django_db
def test_load_packs_command_reports_the_counts():
    out = StringIO()
    call_command("load_packs", stdout=out)
    expected = sum(len(_raw(path)["questions"]) for path in SHIPPED)
    assert out.getvalue().strip() == f"Loaded {len(SHIPPED)} packs, {expected} questions"
    call_command("load_packs", stdout=StringIO())
    assert Question.objects.count() == expected


@pytest.mark.django_db
def test_load_packs_command_turns_a_bad_file_into_a_command_error(tmp_path):
    shutil.copy(PACK_DIRECTORY / "history.json", tmp_path / "history.json")
    broken = _raw(tmp_path / "history.json")
    broken["questions"][1]["options"] = ["Only one"]
    (tmp_path / "history.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(CommandError, match=r"history\.json: question 2: a question needs 2 to 6 options"):
        call_command("load_packs", directory=tmp_path, stdout=StringIO())


# English, German and Spanish packs.
NUMBER_WORDS = {
    "ten": 10,
    "fourteen": 14,
    "vierzehn": 14,
    "catorce": 14,
    "sixteen": 16,
    "sechzehn": 16,
    "dieciséis": 16,
    "eleven": 11,
    "twelve": 12,
    "zehn": 10,
    "elf": 11,
    "zwölf": 12,
    "diez": 10,
    "once": 11,
    "doce": 12,
}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_a_shipped_packs_description_gives_its_true_question_count(path):
    raw = _raw(path)
    said = [NUMBER_WORDS[word] for word in raw["description"].replace(":", " ").split() if word in NUMBER_WORDS]
    assert said == [len(raw["questions"])], raw["description"]


@pytest.mark.django_db
def test_a_pack_says_its_language_and_its_rounds_carry_it(tmp_path):
    from quiz.packs import pack_load_all
    from quiz.services import round_create_from_pack

    packs = {pack.slug: pack for pack in pack_load_all()}
    assert {packs["allgemeinwissen"].language, packs["cultura-general"].language, packs["history"].language} == {
        "de",
        "es",
        "en",
    }
    assert round_create_from_pack(pack=packs["allgemeinwissen"]).language == "de"
    bad = _raw(PACK_DIRECTORY / "history.json") | {"language": "fr"}
    (tmp_path / "history.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(CommandError, match=r"history\.json: the language 'fr' is not one of en, de, es"):
        call_command("load_packs", directory=tmp_path, stdout=StringIO())
