from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from quiz.packs import PackFileError, pack_load_all


class Command(BaseCommand):
    help = "Load the sample packs that ship with the app. Safe to run again: packs are updated by slug."

    def add_arguments(self, parser):
        parser.add_argument("--directory", type=Path, default=None, help="Load pack files from this directory.")

    def handle(self, *args, directory: Path | None = None, **options):
        try:
            packs = pack_load_all(directory=directory)
        except PackFileError as exc:
            raise CommandError(str(exc)) from exc
        question_count = sum(pack.questions.count() for pack in packs)
        self.stdout.write(f"Loaded {len(packs)} packs, {question_count} questions")
