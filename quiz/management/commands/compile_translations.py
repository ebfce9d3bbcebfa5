"""Build the .mo catalogues from the committed .po files, with polib (no GNU gettext needed on the machine).

Django's own `compilemessages` shells out to gettext's msgfmt, which a fresh machine may not have; the .mo files
are build outputs and are not committed. `make run` and the test session run this first.
"""

from pathlib import Path

import polib
from django.conf import settings
from django.core.management.base import BaseCommand


def compile_catalogues(locale_dirs=None, *, force: bool = False) -> list[Path]:
    """Compile every stale locale/<lang>/LC_MESSAGES/*.po; return the .mo files written."""
    written = []
    for root in locale_dirs or settings.LOCALE_PATHS:
        for po_path in sorted(Path(root).glob("*/LC_MESSAGES/*.po")):
            mo_path = po_path.with_suffix(".mo")
            if not force and mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
                continue
            polib.pofile(str(po_path)).save_as_mofile(str(mo_path))
            written.append(mo_path)
    return written


class Command(BaseCommand):
    help = "Compile the translation catalogues (.po -> .mo) with polib."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="recompile even if the .mo is newer")

    def handle(self, *args, force=False, **options):
        written = compile_catalogues(force=force)
        self.stdout.write(f"{len(written)} catalogue(s) compiled")
