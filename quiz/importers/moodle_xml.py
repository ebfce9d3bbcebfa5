"""Moodle XML (a question bank exported from Moodle), read with defusedxml: a file that declares entities (the
"billion laughs" bomb) or refers to an outside one is refused before anything is expanded or fetched.

multichoice (one right answer: single; several answers worth marks: multi), truefalse, shortanswer (every answer
worth full marks is accepted), numerical (its tolerance kept; a slider range made around the answer) are imported;
HTML question text becomes plain text and a picture embedded in the file (base64) goes through the picture
pipeline. A description (a page of text) becomes a slide; essay and the kinds Quizgate cannot play are named
and skipped; a category names the round.
"""

import base64
import binascii
import math
import xml.etree.ElementTree as ElementTree
from typing import Any
from urllib.parse import unquote

import defusedxml.ElementTree as SafeTree
from defusedxml import DefusedXmlException
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from quiz.exceptions import InvalidQuestion
from quiz.importers.common import FileRefused, Report, html_parts, number_range, plain, refused, tidy
from quiz.importing import ImportResult
from quiz.pictures.images import data_url_bytes, image_from_bytes

NOT_PLAYABLE = {
    "essay": gettext_lazy(
        "an essay question is answered in free text and marked by a teacher: it cannot be played here"
    ),
    "matching": gettext_lazy("a matching question cannot be played here"),
    "ddmatch": gettext_lazy("a drag-and-drop matching question cannot be played here"),
    "ddwtos": gettext_lazy("a drag-and-drop question cannot be played here"),
    "ddimageortext": gettext_lazy("a drag-and-drop question cannot be played here"),
    "ddmarker": gettext_lazy("a drag-and-drop question cannot be played here"),
    "gapselect": gettext_lazy("a select-the-missing-words question cannot be played here"),
    "cloze": gettext_lazy("an embedded-answers (Cloze) question cannot be played here"),
    "multianswer": gettext_lazy("an embedded-answers (Cloze) question cannot be played here"),
    "calculated": gettext_lazy("a calculated question cannot be played here"),
    "calculatedsimple": gettext_lazy("a calculated question cannot be played here"),
    "calculatedmulti": gettext_lazy("a calculated question cannot be played here"),
    "randomsamatch": gettext_lazy("a random matching question cannot be played here"),
    "ordering": gettext_lazy("an ordering question from Moodle's plugin cannot be read yet"),
}


def detect(name: str, raw: bytes) -> bool:
    head = raw[:2000].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"<") and b"<quiz" in head


def parse(raw: bytes) -> ImportResult:
    try:
        root = SafeTree.fromstring(raw, forbid_dtd=True)
    except DefusedXmlException as error:
        return refused(
            FileRefused(
                _("the XML declares entities or a document type (%(what)s): refused, as it could expand without end")
                % {"what": type(error).__name__}
            )
        )
    except ElementTree.ParseError as error:
        line = error.position[0] if error.position else 0
        return refused(FileRefused(_("the XML cannot be read: %(error)s") % {"error": error.msg}, line))
    if root.tag != "quiz":
        return refused(FileRefused(_("this is XML but not a Moodle question file (its root is not <quiz>)")))
    report = Report()
    number = 0
    for element in root.iter("question"):
        kind = element.get("type", "")
        if kind == "category":
            path = _text(element.find("category"))
            if path and not report.result.title:
                report.result.title = path.split("/")[-1].strip()[:200]
            continue
        number += 1
        _question(report, number, kind, element)
    return report.result


def _text(element: ElementTree.Element | None) -> str:
    """The <text> inside an element (name, questiontext, answer, feedback)."""
    if element is None:
        return ""
    inner = element.find("text")
    return (inner.text if inner is not None else element.text) or ""


def _html(element: ElementTree.Element | None) -> str:
    return plain(
        _text(element), is_html=element is None or element.get("format", "html") in ("html", "moodle_auto_format")
    )


def _fraction(answer: ElementTree.Element) -> float:
    try:
        value = float(answer.get("fraction", "0"))
    except ValueError:
        return 0.0
    return value if math.isfinite(value) else 0.0


def _question(report: Report, number: int, kind: str, element: ElementTree.Element) -> None:
    name = plain(_text(element.find("name")), is_html=False)
    body = element.find("questiontext")
    text, pictures = html_parts(_text(body), is_html=body is None or body.get("format", "html") != "plain_text")
    title = name or text
    if kind in NOT_PLAYABLE:
        report.skip(number, title, str(NOT_PLAYABLE[kind]))
        return
    if kind == "description":
        # A page of text between questions: a slide, its name the title and its text under it.
        text = text.strip()
        raw_slide: dict[str, Any] = {"kind": "slide", "question": (name or text)[:300], "explanation": text}
        if pictures:
            picture = _picture(report, number, title, body, pictures[0])
            if picture is not None:
                raw_slide["image"] = picture
        report.add(number, title, raw_slide)
        return
    reader = READERS.get(kind)
    if reader is None:
        report.skip(number, title, _("the question type “%(type)s” cannot be played here") % {"type": kind})
        return
    raw: dict[str, Any] = {"question": text, "explanation": _html(element.find("generalfeedback"))}
    answers = element.findall("answer")
    try:
        raw.update(reader(element, answers))
    except InvalidQuestion as error:
        report.skip(number, title, str(error))
        return
    if pictures:
        picture = _picture(report, number, title, body, pictures[0])
        if picture is not None:
            raw["image"] = picture
    report.add(number, title, raw)


def _picture(report: Report, number: int, title: str, body: Any, picture: tuple[str, str]) -> Any:
    """The question's first picture, from the file's own <file> (base64) or a data URL; the picture pipeline
    checks and re-encodes it. A picture that cannot be had is a note: the question comes without it."""
    src, alt = picture
    alt = alt.strip() or title[:250] or "picture"
    data = b""
    if src.startswith("@@PLUGINFILE@@/"):
        wanted = src.removeprefix("@@PLUGINFILE@@/").split("?")[0]
        for file in body.findall("file"):
            if file.get("name") == unquote(wanted) and file.get("encoding") == "base64":
                try:
                    data = base64.b64decode("".join((file.text or "").split()), validate=True)
                except (binascii.Error, ValueError):
                    data = b""
    elif src.startswith("data:"):
        try:
            data = data_url_bytes(src)
        except InvalidQuestion:
            data = b""
    if not data:
        report.note(number, title, _("its picture is not inside the file (a link is not fetched): it came without it"))
        return None
    try:
        image = image_from_bytes(data, alt=alt)
    except InvalidQuestion as error:
        report.note(number, title, _("its picture was left out: %(reason)s") % {"reason": error})
        return None
    return image


def _multichoice(element: ElementTree.Element, answers: list[ElementTree.Element]) -> dict[str, Any]:
    options = [_html(answer) for answer in answers]
    fractions = [_fraction(answer) for answer in answers]
    single = (element.findtext("single") or "true").strip().lower() in ("true", "1")
    if not any(f > 0 for f in fractions):
        raise InvalidQuestion(_("no answer is worth any marks, so none is right"))
    if single:
        return {"kind": "single", "options": options, "correct_index": fractions.index(max(fractions))}
    return {"kind": "multi", "options": options, "correct_indexes": [i for i, f in enumerate(fractions) if f > 0]}


def _truefalse(element: ElementTree.Element, answers: list[ElementTree.Element]) -> dict[str, Any]:
    for answer in answers:
        if _fraction(answer) >= 100:
            said = _text(answer).strip().lower()
            if said in ("true", "false"):
                return {"kind": "true_false", "answer": said == "true"}
    raise InvalidQuestion(_("neither true nor false is marked right"))


def _shortanswer(element: ElementTree.Element, answers: list[ElementTree.Element]) -> dict[str, Any]:
    accepted = [plain(_text(answer), is_html=False) for answer in answers if _fraction(answer) >= 100]
    if not accepted:
        raise InvalidQuestion(_("no answer is worth full marks, so none is right"))
    if any("*" in answer for answer in accepted):
        raise InvalidQuestion(_("an accepted answer uses the wildcard *, which cannot be checked here"))
    return {"kind": "typed", "answers": accepted}


def _numerical(element: ElementTree.Element, answers: list[ElementTree.Element]) -> dict[str, Any]:
    for answer in answers:
        if _fraction(answer) < 100:
            continue
        try:
            value = float(_text(answer).strip())
            tolerance = abs(float((answer.findtext("tolerance") or "0").strip() or 0))
        except ValueError as error:
            raise InvalidQuestion(_("the right answer is not a number")) from error
        if not (math.isfinite(value) and math.isfinite(tolerance)):
            raise InvalidQuestion(_("the right answer is not a number"))
        low, high = number_range(value, tolerance)
        unit = next((u.findtext("unit_name") or "" for u in element.iter("unit")), "")
        return {
            "kind": "number",
            "answer": tidy(value),
            "tolerance": tidy(tolerance),
            "min": low,
            "max": high,
            "unit": unit.strip()[:20],
        }
    raise InvalidQuestion(_("no answer is worth full marks, so none is right"))


READERS = {
    "multichoice": _multichoice,
    "truefalse": _truefalse,
    "shortanswer": _shortanswer,
    "numerical": _numerical,
}
