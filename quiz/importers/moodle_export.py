"""A round as Moodle XML, to import into a Moodle question bank (and back here: the round trip keeps every kind
Moodle can hold). single and multi are multichoice (a multi's right answers share the marks), true_false is
truefalse, typed is shortanswer, number is numerical with its tolerance and unit; a picture is embedded in the file
(base64). A poll or an order question has no Moodle type of the core and is left out, named."""

import base64
import xml.etree.ElementTree as ElementTree

from quiz.kinds import kind_of
from quiz.pictures.images import image_bytes
from quiz.validation import QuestionData

TYPES = {
    "single": "multichoice",
    "multi": "multichoice",
    "true_false": "truefalse",
    "typed": "shortanswer",
    "number": "numerical",
}


def _text(parent: ElementTree.Element, tag: str, text: str, **attributes: str) -> ElementTree.Element:
    element = ElementTree.SubElement(parent, tag, attributes)
    ElementTree.SubElement(element, "text").text = text
    return element


def _answer(parent: ElementTree.Element, text: str, fraction: float) -> ElementTree.Element:
    answer = ElementTree.SubElement(parent, "answer", {"fraction": f"{fraction:g}", "format": "plain_text"})
    ElementTree.SubElement(answer, "text").text = text
    return answer


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def export(title: str, questions: list[QuestionData]) -> tuple[bytes, list[str]]:
    quiz = ElementTree.Element("quiz")
    category = ElementTree.SubElement(quiz, "question", {"type": "category"})
    _text(category, "category", f"$course$/top/{title.replace('/', '-')}")
    left_out = []
    for number, question in enumerate(questions, start=1):
        kind = kind_of(question).name
        if kind not in TYPES:
            left_out.append(question.text)
            quiz.append(ElementTree.Comment(f" Not exported (Moodle has no {kind} question): {question.text} "))
            continue
        element = ElementTree.SubElement(quiz, "question", {"type": TYPES[kind]})
        _text(element, "name", f"Q{number} {question.text[:60]}")
        body = _escape_html(question.text)
        if question.image is not None:
            file_name = question.image.name
            body += f'<p><img src="@@PLUGINFILE@@/{file_name}" alt="{_escape_html(question.image.alt)}"></p>'
        text = _text(element, "questiontext", f"<p>{body}</p>" if question.image else body, format="html")
        if question.image is not None:
            content = question.image.content or image_bytes(question.image.name)
            file = ElementTree.SubElement(
                text, "file", {"name": question.image.name, "path": "/", "encoding": "base64"}
            )
            file.text = base64.b64encode(content).decode("ascii")
        _text(element, "generalfeedback", _escape_html(question.explanation), format="html")
        ElementTree.SubElement(element, "defaultgrade").text = "1"
        _answers(element, kind, question)
    ElementTree.indent(quiz)
    body = ElementTree.tostring(quiz, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'.encode(), left_out


def _answers(element: ElementTree.Element, kind: str, question: QuestionData) -> None:
    key = question.key
    if kind == "single":
        ElementTree.SubElement(element, "single").text = "true"
        for index, option in enumerate(question.options):
            _answer(element, option, 100 if index == question.correct_index else 0)
    elif kind == "multi":
        ElementTree.SubElement(element, "single").text = "false"
        right = key["correct_indexes"]
        for index, option in enumerate(question.options):
            _answer(element, option, round(100 / len(right), 5) if index in right else -100)
    elif kind == "true_false":
        _answer(element, "true", 100 if key["answer"] else 0)
        _answer(element, "false", 0 if key["answer"] else 100)
    elif kind == "typed":
        ElementTree.SubElement(element, "usecase").text = "0"
        for answer in key["answers"]:
            _answer(element, answer, 100)
    elif kind == "number":
        answer = _answer(element, str(key["answer"]), 100)
        ElementTree.SubElement(answer, "tolerance").text = str(key["tolerance"])
        if key.get("unit"):
            unit = ElementTree.SubElement(ElementTree.SubElement(element, "units"), "unit")
            ElementTree.SubElement(unit, "multiplier").text = "1"
            ElementTree.SubElement(unit, "unit_name").text = key["unit"]
