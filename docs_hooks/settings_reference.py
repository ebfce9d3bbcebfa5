"""The settings reference, generated from the settings modules (config/settings*.py), and the site's generated pages.

Every setting read from the environment is an `env(...)`, `env.int(...)`, `env.bool(...)`… call in one of the
settings modules; this reads them with `ast` (nothing is imported, so no setting needs a value) and writes one
table row per variable: its name, type, default as written in the code, the module, and the comment beside or
above it. A setting is documented by its comment in the settings module; the page cannot drift from the code.

Run as a script to print the page:  python docs_hooks/settings_reference.py
Used by mkdocs.yml (`hooks:`) to add `operators/settings.md` and `changelog.md` (from CHANGELOG.md) to the site,
and to put the optional pages that exist (OPTIONAL_PAGES) into the navigation.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_MODULES = (
    "config/settings.py",
    "config/settings_game.py",
    "config/settings_writer.py",
    "config/settings_checker.py",
)
TYPES = {
    "": "text",
    "str": "text",
    "int": "integer",
    "float": "number",
    "bool": "on/off",
    "list": "list",
    "db": "URL",
    "path": "path",
    "json": "JSON",
}
# Work-log references do not belong in a manual.
_WORKLOG = re.compile(r";\s*issue \d+|\s*\(issue \d+\)")

# Pages other parts of the project add: each joins the navigation under its section once its file exists.
OPTIONAL_PAGES = (
    ("For hosts", "hosts/scoring.md", "Scoring"),
    ("For hosts", "hosts/ai-rounds.md", "AI rounds (guide)"),
    ("For hosts", "hosts/importing.md", "Importing questions"),
    ("For hosts", "hosts/question-bank.md", "The question bank"),
    ("For hosts", "hosts/live-show.md", "A live show"),
    ("For operators", "operators/many-machines.md", "Many machines"),
    ("For operators", "operators/big-rooms.md", "Big rooms"),
    ("For operators", "operators/cost.md", "Cost"),
)


NOTES_FILE = Path(__file__).with_name("setting_notes.txt")


def _notes(path: Path = NOTES_FILE) -> dict[str, str]:
    """NAME: note, one a line: the note of a setting whose module has no comment beside it."""
    pairs = (line.split(": ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line[:1].isupper())
    return {name: note for name, note in pairs}


NOTES = _notes()


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str
    default: str
    module: str
    note: str


def _comment_above(lines: list[str], lineno: int) -> list[str]:
    """The block of whole-line comments directly above line `lineno` (1-based)."""
    block: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    return block


def _group_comment(lines: list[str], lineno: int, name: str) -> str:
    """The nearest comment block above, within the same run of lines (no blank line between), if it names `name`."""
    i = lineno - 2
    while i >= 0 and lines[i].strip():
        if lines[i].lstrip().startswith("#"):
            block = _comment_above(lines, i + 2)
            text = " ".join(block)
            return text if name in text else ""
        i -= 1
    return ""


def _inline_comment(line: str) -> str:
    # A '#' after the code, outside a string (the settings modules keep '#' out of their strings).
    code, sep, comment = line.partition("  #")
    return comment.strip() if sep else ""


def _default(call: ast.Call, source: str) -> str:
    for keyword in call.keywords:
        if keyword.arg == "default":
            if isinstance(keyword.value, ast.Constant) and keyword.value.value in ("", None):
                return "empty"
            if isinstance(keyword.value, ast.List) and not keyword.value.elts:
                return "empty"
            return ast.get_source_segment(source, keyword.value) or ""
    return "required"


def read_settings(root: Path = ROOT, modules: tuple[str, ...] = SETTINGS_MODULES) -> list[Setting]:
    """Every environment variable the settings modules read, in the order the modules read them (first read wins)."""
    found: dict[str, Setting] = {}
    for module in modules:
        source = (root / module).read_text(encoding="utf-8")
        lines = source.splitlines()
        calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)]
        calls.sort(key=lambda node: (node.lineno, node.col_offset))
        for call in calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id == "env":
                kind = ""
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "env":
                kind = func.attr
            else:
                continue
            if kind not in TYPES or not call.args:
                continue
            first = call.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or first.value in found:
                continue
            name = first.value
            note = _inline_comment(lines[call.lineno - 1]) or " ".join(_comment_above(lines, call.lineno))
            note = note or _group_comment(lines, call.lineno, name)
            note = _WORKLOG.sub("", note).strip() or NOTES.get(name, "")
            note = note[:1].upper() + note[1:]
            found[name] = Setting(name, TYPES[kind], _default(call, source), module, note)
    return list(found.values())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def settings_page(settings: list[Setting]) -> str:
    """The reference page as Markdown: one table per settings module."""
    out = [
        "# Settings reference",
        "",
        "Every setting is an environment variable (or a line of a `.env` file next to `manage.py`; see",
        "`.env.example`). This page is generated from the settings modules each time the site is built, so it",
        "lists exactly what the code reads; the note is the comment beside the setting in its module.",
        "",
    ]
    titles = {
        "config/settings.py": "Core: the site, database, Redis, security, retention, logs",
        "config/settings_game.py": "The game: rooms, sockets, limits, processes, pictures",
        "config/settings_writer.py": "The writer: AI rounds and their limits",
        "config/settings_checker.py": "The checker (the gate) and the review",
    }
    for module in dict.fromkeys(s.module for s in settings):
        out += [f"## {titles.get(module, module)}", "", f"Read in `{module}`.", ""]
        out += ["| variable | type | default | note |", "| --- | --- | --- | --- |"]
        for s in settings:
            if s.module == module:
                out.append(f"| `{s.name}` | {s.kind} | `{_cell(s.default)}` | {_cell(s.note)} |")
        out.append("")
    return "\n".join(out)


# MkDocs hooks (mkdocs.yml: hooks). Imported only by mkdocs, so the module itself needs nothing but the stdlib.


def on_config(config, **kwargs):
    docs = Path(config["docs_dir"])
    nav = config.get("nav") or []
    for section_title, path, title in OPTIONAL_PAGES:
        if not (docs / path).exists():
            continue
        for section in nav:
            if isinstance(section, dict) and section_title in section:
                entries = section[section_title]
                if not any(path in entry.values() for entry in entries if isinstance(entry, dict)):
                    entries.append({title: path})
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    files.append(File.generated(config, "operators/settings.md", content=settings_page(read_settings())))
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files


if __name__ == "__main__":
    print(settings_page(read_settings()))
