"""python manage.py checker_eval [--set FILE.json|.csv] [--store-labels] [--json] [--limit N]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from review.checker_eval import evaluate, format_text, items_from_file, labels_store, pack_items, run_store
from verifier import conf
from verifier.registry import gate_enabled


class Command(BaseCommand):
    help = (
        "Run the configured checker (VERIFIER_BACKEND, second opinion included) over questions whose answer is "
        "known, with play's call budget and concurrency, and say how well it tells good questions from bad ones: "
        "AUROC, medians, what each threshold catches and drops, the share unverified and why, calls and seconds "
        "per question, and a verdict. By default: the sample packs as good questions and two bad copies of each "
        "(the marked option moved; the explanation made false)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--set",
            dest="labelled_set",
            metavar="FILE",
            help="a labelled set instead of the sample packs: JSON (a list, or {about, items}) of {question, "
            "options, correct_index, explanation, label: correct|defective}, or a .csv with the columns question, "
            "option_a..option_f, correct, explanation, label (the sweep's labelled-set format; other columns are "
            "ignored)",
        )
        parser.add_argument(
            "--store-labels",
            action="store_true",
            help="store the answered questions, their probabilities and labels as a labelled set for the sweep",
        )
        parser.add_argument("--limit", type=int, help="only the first N questions of the set")
        parser.add_argument("--json", action="store_true", help="print the report as JSON instead of text")

    def handle(self, *args, **options):
        if not gate_enabled():
            raise CommandError("No checker is configured (VERIFIER_BACKEND is off): there is nothing to evaluate.")
        if not conf.model_id():
            raise CommandError("The checker has no pinned model id (VERIFIER_MODEL).")
        if options["labelled_set"]:
            path = Path(options["labelled_set"])
            try:
                items = items_from_file(path)
            except ValueError as error:
                raise CommandError(f"{path}: {error}") from None
            source = str(path)
        else:
            items = pack_items()
            source = "sample packs (each question, its marked option moved, its explanation made false)"
        if options["limit"]:
            items = items[: max(1, options["limit"])]
        self.stderr.write(f"checking {len(items)} questions with {conf.backend_name()} {conf.model_id()}")
        report, results = evaluate(items, progress=self._progress)
        self.stderr.write("")
        run_store(report, source=source)
        if options["store_labels"]:
            created, skipped = labels_store(results, note=f"checker_eval: {source}")
            self.stderr.write(f"stored {created} labelled question(s) for the sweep, skipped {skipped} already there")
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            self.stdout.write(format_text(report))

    def _progress(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        self.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stderr.flush()
