"""Every string a host or player can see is translated: the catalogues are rebuilt from the code the way a
translator would (`makemessages`), in a copy of the tree, and no German or Spanish entry may be empty or fuzzy."""

import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
# Everything a translator's makemessages reads (every app, the templates, the scripts), not the tests or benches.
SKIPPED = {"tests", "bench", "staticfiles", "test-artifacts", "node_modules", "__pycache__"}
LANGUAGES = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


@pytest.fixture(scope="module")
def rebuilt_catalogues(tmp_path_factory):
    if shutil.which("xgettext") is None:
        pytest.skip("xgettext (GNU gettext) is not installed: makemessages cannot read the code")
    tree = tmp_path_factory.mktemp("tree")
    for source in ROOT.iterdir():
        name = source.name
        if name.startswith(".") or name in SKIPPED:
            continue
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
        elif source.suffix == ".py":  # manage.py; not the databases or logs beside it
            shutil.copy2(source, tree / name)
    languages = [arg for code in LANGUAGES for arg in ("-l", code)]
    for domain in ("django", "djangojs"):
        made = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "makemessages",
                "-d",
                domain,
                *languages,
                "--no-obsolete",
                "--ignore",
                "static/vendor/*",
                "--ignore",
                "staticfiles/*",
            ],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
    return tree / "locale"


@pytest.mark.parametrize("domain", ["django", "djangojs"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_no_string_is_left_untranslated(rebuilt_catalogues, language, domain):
    po = polib.pofile(str(rebuilt_catalogues / language / "LC_MESSAGES" / f"{domain}.po"))
    missing = [entry.msgid for entry in po if not entry.translated() and not entry.obsolete]
    assert len(po) > 0, f"no {domain} strings found at all for {language}"
    assert missing == [], f"{len(missing)} {language} {domain} strings untranslated, e.g. {missing[:10]}"
