"""The manual: its settings reference lists what the settings modules read, and the site builds with warnings as
errors (a broken link fails it; a page other work adds joins the navigation once it exists)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

from docs_hooks.settings_reference import SETTINGS_MODULES, read_settings, settings_page

REPO = Path(__file__).resolve().parents[1]
ENV_READ = re.compile(r"""\benv(?:\.\w+)?\(\s*["']([A-Z0-9_]+)["']""")


def test_the_reference_lists_every_variable_the_settings_modules_read():
    read_in_code = {name for module in SETTINGS_MODULES for name in ENV_READ.findall((REPO / module).read_text())}
    listed = {setting.name for setting in read_settings()}
    assert listed == read_in_code
    assert {"ROOM_MAX_PLAYERS", "VERIFIER_BACKEND", "QUIZ_WRITER_MODEL", "DATABASE_URL"} <= listed


def test_a_setting_is_described_by_its_comment_in_its_module(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings_x.py").write_text(
        "import environ\n"
        "env = environ.Env()\n"
        "# Seconds a lonely socket may wait (issue 12).\n"
        "WAIT = env.float('WAIT_SECONDS', default=15)\n"
        "NAME = env('SITE_NAME', default='')  # what the tab says\n"
        "# Two limits: LIMIT_A a minute and LIMIT_B a burst; 0 is off.\n"
        "A = env.int('LIMIT_A', default=100)\n"
        "B = env.int('LIMIT_B', default=20)\n"
        "SECRET = env('NO_DEFAULT')\n"
    )
    settings = {s.name: s for s in read_settings(tmp_path, ("config/settings_x.py",))}
    assert settings["WAIT_SECONDS"].note == "Seconds a lonely socket may wait."
    assert (settings["WAIT_SECONDS"].kind, settings["WAIT_SECONDS"].default) == ("number", "15")
    assert settings["SITE_NAME"].note == "What the tab says"
    assert settings["SITE_NAME"].default == "empty"
    assert settings["LIMIT_B"].note.startswith("Two limits")
    assert settings["NO_DEFAULT"].default == "required"
    page = settings_page(list(settings.values()))
    assert "| `LIMIT_A` | integer | `100` |" in page
    assert "issue" not in page


def _copy_of_the_manual(tmp_path: Path) -> Path:
    root = tmp_path / "site-src"
    for folder in ("docs", "docs_hooks"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config").mkdir()
    for module in SETTINGS_MODULES:
        shutil.copy(REPO / module, root / module)
    for name in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copy(REPO / name, root / name)
    return root


def _build(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(root / "site")],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )


def test_the_manual_builds_strict_with_an_added_page_and_fails_on_a_broken_link(tmp_path):
    root = _copy_of_the_manual(tmp_path)
    (root / "docs" / "hosts" / "scoring.md").write_text("# Scoring\n\nHow points are won.\n")
    built = _build(root)
    assert built.returncode == 0, built.stderr
    home = (root / "site" / "index.html").read_text()
    assert 'href="hosts/scoring.html"' in home  # in the navigation, under "For hosts"
    settings = (root / "site" / "operators" / "settings.html").read_text()
    assert "<code>ROOM_MAX_PLAYERS</code>" in settings
    assert "fonts.googleapis.com" not in home

    (root / "docs" / "hosts" / "teams.md").write_text("# Teams\n\nSee [the missing page](no-such-page.md).\n")
    broken = _build(root)
    assert broken.returncode != 0
    assert "no-such-page.md" in broken.stderr
