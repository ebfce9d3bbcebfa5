"""python manage.py sweep [--backend B] [--model-id M] [--json] [--import FILE.json|.csv] [--export FILE.json|.csv]"""

import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from review.labelled_set import (
    labelled_set_csv_export,
    labelled_set_csv_import,
    labelled_set_export,
    labelled_set_import,
    labelled_set_items,
)
from review.selectors import labelled_scores
from review.thresholds.sweep import format_text, sweep
from verifier import conf


class Command(BaseCommand):
    help = (
        "What each threshold would have done to the labelled questions, per backend + model id: defects caught, "
        "good questions dropped, the widest threshold that drops no good question, and each check's calibration."
    )

    def add_arguments(self, parser):
        parser.add_argument("--backend", help="only this backend (systemone, llm, judge)")
        parser.add_argument("--model-id", help="only this model id")
        parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
        parser.add_argument(
            "--import",
            dest="import_file",
            metavar="FILE",
            help="first load a labelled set: a JSON list (or {about, items: [...]}) of {question, options, "
            "correct_index, explanation, backend, model_id, probabilities: {check: p}, label: correct|defective, "
            "[score], [blind: {option letter: p}]}; or a .csv file: question, option_a..option_f, correct, "
            "explanation, backend, model_id, p_<check> per check, [score], label, [blind_a..blind_f]",
        )
        parser.add_argument(
            "--export", metavar="FILE", help="write every labelled, scored question in that format (.csv: as CSV)"
        )

    def handle(self, *args, **options):
        if options["import_file"] and options["import_file"].lower().endswith(".csv"):
            self._import_csv(Path(options["import_file"]))
        elif options["import_file"]:
            path = Path(options["import_file"])
            try:
                items = labelled_set_items(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as error:
                raise CommandError(f"cannot read {path}: {error}") from None
            try:
                result = labelled_set_import(items=items, note=f"imported from {path.name}")
            except ValueError as error:
                raise CommandError(f"{path}: {error}") from None
            self.stderr.write(f"imported {result.created} labelled question(s), skipped {result.skipped} already there")
        if options["export"] and options["export"].lower().endswith(".csv"):
            content = labelled_set_csv_export()
            Path(options["export"]).write_text(content, encoding="utf-8")
            self.stderr.write(f"exported {content.count(chr(10)) - 1} labelled question line(s) to {options['export']}")
        elif options["export"]:
            exported = labelled_set_export()
            Path(options["export"]).write_text(json.dumps(exported, indent=2, ensure_ascii=False), encoding="utf-8")
            self.stderr.write(f"exported {len(exported)} labelled question(s) to {options['export']}")
        items = labelled_scores(backend=options["backend"], model_id=options["model_id"])
        results = sweep(items, min_labels=conf.sweep_min_labels())
        if options["json"]:
            self.stdout.write(json.dumps([asdict(result) for result in results], indent=2))
        else:
            self.stdout.write(format_text(results))

    def _import_csv(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read {path}: {error}") from None
        result = labelled_set_csv_import(text=text, note=f"imported from {path.name}")
        for error in result.errors:
            self.stderr.write(f"{path}: {error} (refused)")
        self.stderr.write(
            f"imported {result.created} labelled question(s), skipped {result.skipped} already there, "
            f"refused {len(result.errors)} line(s)"
        )
        if result.errors and not result.created and not result.skipped:
            raise CommandError(f"{path}: nothing could be imported")
