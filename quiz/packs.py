"""The sample packs that ship with the app: JSON files in quiz/pack_data/, loaded as Pack and Question rows.

A pack file looks like::

    {"slug": "history", "title": "History", "description": "...",
     "questions": [{"text": "...", "options": ["...", "..."], "correct_index": 1,
                    "explanation": "...", "source": "..."}]}

The slug must match the file name (history.json -> "history"). Every question goes through
`clean_question`, and every file is read and checked before anything is written, so one bad file
loads nothing. Loading is idempotent: a pack is found by slug and its questions are replaced only
when they changed (the old ones leave the pack but are kept for the rounds and reports that used them).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction

from quiz.exceptions import InvalidQuestion, QuizError
from quiz.models import Pack, Provenance, Question
from quiz.services import question_create
from quiz.validation import QuestionData, clean_question

PACK_DIRECTORY = Path(__file__).resolve().parent / "pack_data"
MAX_PACK_TITLE = Pack._meta.get_field("title").max_length
MAX_PACK_DESCRIPTION = Pack._meta.get_field("description").max_length


class PackFileError(QuizError):
    """A pack file that cannot be loaded; the message names the file and, if it is one, the question."""


@dataclass(frozen=True)
class PackFile:
    path: Path
    slug: str
    title: str
    description: str
    questions: tuple[QuestionData, ...]
    language: str = "en"


def _pack_text(value: Any, *, name: str, field: str, max_length: int, required: bool) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise PackFileError(f"{name}: {field} must be text")
    value = " ".join(value.split())
    if required and not value:
        raise PackFileError(f"{name}: {field} is empty")
    if len(value) > max_length:
        raise PackFileError(f"{name}: {field} is longer than {max_length} characters")
    return value


def pack_file_read(path: Path) -> PackFile:
    """Read and check one pack file; raise PackFileError naming the file (and question number) if it is bad."""
    name = path.name
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PackFileError(f"{name}: cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise PackFileError(f"{name}: is not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise PackFileError(f"{name}: a pack file must hold a JSON object")

    slug = raw.get("slug")
    if not isinstance(slug, str) or not slug:
        raise PackFileError(f"{name}: the slug is missing")
    try:
        validate_slug(slug)
    except ValidationError as exc:
        raise PackFileError(f"{name}: {slug!r} is not a valid slug") from exc
    if slug != path.stem:
        raise PackFileError(f"{name}: the slug {slug!r} does not match the file name")
    title = _pack_text(raw.get("title"), name=name, field="title", max_length=MAX_PACK_TITLE, required=True)
    description = _pack_text(
        raw.get("description"), name=name, field="description", max_length=MAX_PACK_DESCRIPTION, required=False
    )

    language = raw.get("language", settings.LANGUAGE_CODE)
    if language not in dict(settings.LANGUAGES):
        known = ", ".join(code for code, _name in settings.LANGUAGES)
        raise PackFileError(f"{name}: the language {language!r} is not one of {known}")

    questions_raw = raw.get("questions")
    if not isinstance(questions_raw, list) or not questions_raw:
        raise PackFileError(f"{name}: questions must be a non-empty list")
    questions = []
    for number, question_raw in enumerate(questions_raw, start=1):
        try:
            questions.append(clean_question(question_raw))
        except InvalidQuestion as exc:
            raise PackFileError(f"{name}: question {number}: {exc}") from exc
    return PackFile(
        path=path, slug=slug, title=title, description=description, questions=tuple(questions), language=language
    )


def _questions_retire(questions: list[Question]) -> None:
    """Take old questions out of their pack. They are kept, not deleted: past rounds and players' reports
    may point at them, and they should still show the question as it was played."""
    Question.objects.filter(pk__in=[question.pk for question in questions]).update(pack=None)


def _pack_save(pack_file: PackFile) -> Pack:
    fields = {"title": pack_file.title, "description": pack_file.description, "language": pack_file.language}
    pack, created = Pack.objects.get_or_create(slug=pack_file.slug, defaults=fields)
    if not created and any(getattr(pack, name) != value for name, value in fields.items()):
        for name, value in fields.items():
            setattr(pack, name, value)
        pack.save(update_fields=list(fields))

    current = list(pack.questions.order_by("id"))
    unchanged = [question.as_data() for question in current] == list(pack_file.questions) and all(
        question.provenance == Provenance.PACK for question in current
    )
    if not unchanged:
        _questions_retire(current)
        for data in pack_file.questions:
            question_create(data=data, provenance=Provenance.PACK, pack=pack)
    return pack


def pack_load_all(*, directory: Path | None = None) -> list[Pack]:
    """Load every *.json pack in `directory` (default: the packs that ship with the app), by slug, idempotently."""
    directory = PACK_DIRECTORY if directory is None else Path(directory)
    if not directory.is_dir():
        raise PackFileError(f"{directory}: no such pack directory")
    pack_files = [pack_file_read(path) for path in sorted(directory.glob("*.json"))]
    with transaction.atomic():
        return [_pack_save(pack_file) for pack_file in pack_files]
