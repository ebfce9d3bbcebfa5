"""GIFT, Moodle's text format for questions, in and out.

A question is `::title::text {answers}`, questions apart by a blank line; `//` starts a comment line,
`$CATEGORY: a/b` a category (it names the round), `[html]`/`[markdown]`/`[plain]` the text's format. `\\~ \\= \\#
\\{ \\} \\:` are the characters themselves. Answers: `{T}`/`{FALSE}` true/false; `{=right ~wrong}` one right
option; `{~%50%a ~%50%b ~%-100%c}` several right (multi); `{=a =b}` accepted typed answers; `{#1969:5}` or
`{#1..5}` a number; `#feedback` after an answer, `####feedback` the question's own (its explanation). An
essay `{}` and a matching question (`->`) are named and skipped; a description (no braces) becomes a slide.
"""

import re
from typing import Any

from django.utils.translation import gettext as _

from quiz.exceptions import InvalidQuestion
from quiz.importers.common import Report, decode, number_range, plain, tidy
from quiz.importing import ImportResult
from quiz.kinds import kind_of
from quiz.validation import QuestionData

SPECIAL = "~=#{}:"
FORMAT = re.compile(r"^\s*\[(html|moodle|markdown|plain)\]", re.I)
WEIGHT = re.compile(r"^%(-?\d+(?:\.\d+)?)%")


def detect(name: str, raw: bytes) -> bool:
    if name.lower().endswith(".gift"):
        return True
    text = raw[:20000].decode("utf-8", errors="replace")
    return bool(re.search(r"(^|\n)\s*(::[^\n]*::|\$CATEGORY:)", text)) or bool(
        re.search(r"\{\s*(=|~|#|T\s*\}|F\s*\}|TRUE|FALSE)", text)
    )


def unescape(text: str) -> str:
    return re.sub(r"\\([~=#{}:n\\])", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def escape(text: str) -> str:
    return "".join("\\" + c if c in SPECIAL or c == "\\" else c for c in text)


def _unescaped(text: str, chars: str) -> list[int]:
    """Where the characters stand in the text, escaped ones left out."""
    found, index = [], 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] in chars:
            found.append(index)
        index += 1
    return found


def _blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each question: blank lines apart, comment lines out. A blank line inside braces does
    not end a question."""
    blocks, lines, start, depth = [], [], 0, 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("//"):
            continue
        if not line.strip() and depth == 0:
            if lines:
                blocks.append((start, "\n".join(lines)))
            lines = []
            continue
        if not lines:
            start = number
        lines.append(line)
        for index in _unescaped(line, "{}"):
            depth = max(depth + (1 if line[index] == "{" else -1), 0)
    if lines:
        blocks.append((start, "\n".join(lines)))
    return blocks


def parse(raw: bytes) -> ImportResult:
    text, fallback = decode(raw)
    report = Report(unit="line")
    if fallback:
        report.note(0, "", _("the file is not UTF-8; it was read as Windows-1252 (check accented letters)"))
    number = 0
    for line, block in _blocks(text):
        stripped = block.strip()
        if stripped.startswith("$CATEGORY:"):
            if not report.result.title:
                report.result.title = stripped.removeprefix("$CATEGORY:").strip().split("/")[-1][:200]
            continue
        number += 1
        _question(report, line, block)
    return report.result


def _question(report: Report, line: int, block: str) -> None:
    title = ""
    match = re.match(r"^\s*::(.*?)(?<!\\)::", block, re.S)
    if match:
        title = unescape(match.group(1)).strip()
        block = block[match.end() :]
    braces = _unescaped(block, "{}")
    opens = [i for i in braces if block[i] == "{"]
    if not opens:
        # A description (text with no answer block): a slide, its title (or its first words) over its text.
        text = plain(unescape(block))
        report.add(line, title or text[:80], {"kind": "slide", "question": (title or text)[:300], "explanation": text})
        return
    close = next((i for i in braces if i > opens[0] and block[i] == "}"), None)
    if close is None:
        brace_line = line + block[: opens[0]].count("\n")
        report.skip(
            line,
            title,
            _("the brace opened on line %(line)s is never closed") % {"line": brace_line},
        )
        return
    before, body, after = block[: opens[0]], block[opens[0] + 1 : close], block[close + 1 :]
    is_html = bool(FORMAT.match(before)) and FORMAT.match(before).group(1).lower() in ("html", "moodle")
    before = FORMAT.sub("", before)
    gap = " _____ " if after.strip() else ""
    text = plain(unescape(before + gap + after), is_html=is_html)
    title = title or text
    try:
        raw = {"question": text, **_answers(body)}
    except InvalidQuestion as error:
        report.skip(line, title, str(error))
        return
    report.add(line, title, raw)


def _split_feedback(body: str) -> tuple[str, str]:
    general = body.find("####")
    while general > 0 and body[general - 1] == "\\":
        general = body.find("####", general + 1)
    if general < 0:
        return body, ""
    return body[:general], plain(unescape(body[general + 4 :]), is_html=False)


def _items(body: str) -> list[tuple[str, str]]:
    """(marker, answer text without its feedback) of each answer: marker "=" or "~"."""
    marks = [i for i in _unescaped(body, "=~")]
    items = []
    for n, start in enumerate(marks):
        end = marks[n + 1] if n + 1 < len(marks) else len(body)
        chunk = body[start + 1 : end]
        feedback = _unescaped(chunk, "#")
        if feedback:
            chunk = chunk[: feedback[0]]
        items.append((body[start], chunk.strip()))
    return items


def _answers(body: str) -> dict[str, Any]:
    body, explanation = _split_feedback(body)
    fields: dict[str, Any] = {"explanation": explanation}
    stripped = body.strip()
    head = re.split(r"(?<!\\)#", stripped, maxsplit=1)[0].strip().upper()
    if not stripped:
        raise InvalidQuestion(_("an essay question is answered in free text: it cannot be played here"))
    if head in ("T", "TRUE", "F", "FALSE"):
        return {**fields, "kind": "true_false", "answer": head.startswith("T")}
    if stripped.startswith("#"):
        return {**fields, **_numerical(stripped[1:])}
    if "->" in stripped:
        raise InvalidQuestion(_("a matching question cannot be played here"))
    items = _items(stripped)
    if not items:
        raise InvalidQuestion(_("no answers were found between the braces"))
    texts = [plain(unescape(WEIGHT.sub("", text)), is_html=False) for _marker, text in items]
    weights = []
    for marker, text in items:
        weight = WEIGHT.match(text)
        weights.append(float(weight.group(1)) if weight else (100.0 if marker == "=" else 0.0))
    if all(marker == "=" for marker, _text in items):
        accepted = [text for text, weight in zip(texts, weights, strict=True) if weight >= 100]
        return {**fields, "kind": "typed", "answers": accepted or texts}
    right = [i for i, weight in enumerate(weights) if weight > 0]
    if not right:
        raise InvalidQuestion(_("no answer is marked right (= or a positive %weight%)"))
    if any(marker == "=" for marker, _text in items) or len(right) == 1:
        return {**fields, "kind": "single", "options": texts, "correct_index": weights.index(max(weights))}
    return {**fields, "kind": "multi", "options": texts, "correct_indexes": right}


def _numerical(body: str) -> dict[str, Any]:
    first = body.split("=")[1] if body.lstrip().startswith("=") else body
    first = re.split(r"(?<!\\)[=~#]", first)[0].strip()
    first = WEIGHT.sub("", first)
    try:
        if ".." in first:
            low, high = (float(part) for part in first.split("..", 1))
            value, tolerance = (low + high) / 2, abs(high - low) / 2
        elif ":" in first:
            value, tolerance = (float(part) for part in first.split(":", 1))
        else:
            value, tolerance = float(first), 0.0
    except ValueError as error:
        raise InvalidQuestion(_("the numerical answer %(answer)r is not a number") % {"answer": first}) from error
    low, high = number_range(value, abs(tolerance))
    return {"kind": "number", "answer": tidy(value), "tolerance": tidy(abs(tolerance)), "min": low, "max": high}


def export(title: str, questions: list[QuestionData]) -> tuple[bytes, list[str]]:
    """The questions as GIFT, and the texts of those GIFT cannot hold (an order question)."""
    lines = [f"// {title}", f"$CATEGORY: {title.replace(chr(10), ' ')}", ""]
    left_out = []
    for number, question in enumerate(questions, start=1):
        body = _export_answers(question)
        if body is None:
            left_out.append(question.text)
            lines += [f"// Not exported (GIFT has no {kind_of(question).name} question): {question.text}", ""]
            continue
        if question.explanation:
            body += f" ####{escape(question.explanation)}"
        lines += [f"::Q{number}::{escape(question.text)} {{{body}}}", ""]
    return "\n".join(lines).encode(), left_out


def _export_answers(question: QuestionData) -> str | None:
    kind = kind_of(question).name
    key = question.key
    if kind == "true_false":
        return "TRUE" if key["answer"] else "FALSE"
    if kind == "single":
        return " ".join(
            ("=" if i == question.correct_index else "~") + escape(o) for i, o in enumerate(question.options)
        )
    if kind == "multi":
        right = key["correct_indexes"]
        share = tidy(round(100 / len(right), 5))
        return " ".join(f"~%{share if i in right else -100}%{escape(o)}" for i, o in enumerate(question.options))
    if kind == "typed":
        return " ".join("=" + escape(answer) for answer in key["answers"])
    if kind == "number":
        return f"#{key['answer']}:{key['tolerance']}"
    return None
