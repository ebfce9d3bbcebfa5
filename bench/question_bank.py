"""What a search of the question bank costs on 10,000 questions, against listing the same bank unsearched in the
same run.

    DJANGO_DEBUG=1 .venv/bin/python bench/question_bank.py [--questions 10000] [--repeat 7]

The database is DATABASE_URL's (PostgreSQL: its text search through the GIN index), or without it a fresh SQLite
file in a temporary directory (FTS5). Either is migrated first; one owner's 10,000 questions (100 rounds of 100,
words drawn from a vocabulary of 3,000 made-up words, "capital" in one question of ten, "zebracorn" in one) are
added under a fresh owner key (other rows in the database stay as they are) and removed at the end. Each case is
what the bank's page does (quiz.questions.bank.bank_search with the game's played ids, the count and the first
page of 50): the median wall time over --repeat runs, and its ratio to the unsearched listing's."""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")
if not os.environ.get("DATABASE_URL"):
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='bank-bench-')}/bench.sqlite3"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from lobby.reads.question_record import played_question_ids  # noqa: E402
from quiz.models import Provenance, Question, Round, RoundQuestion  # noqa: E402
from quiz.questions.bank import BankQuery, bank_search  # noqa: E402

PAGE = 50


def made_up_words(count: int, rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "ze", "bri", "sta", "gon", "pel", "dra", "qui", "fen"]
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def fill(owner_key: str, questions: int, rng: random.Random) -> None:
    vocabulary = made_up_words(3000, rng)
    kinds = ["single"] * 8 + ["true_false", "typed"]
    with transaction.atomic():
        for start in range(0, questions, 100):
            rows = []
            for n in range(start, min(start + 100, questions)):
                words = rng.sample(vocabulary, 12)
                if n % 10 == 0:
                    words[3] = "capital"
                if n == questions // 2:
                    words[5] = "zebracorn"
                kind = kinds[n % len(kinds)]
                options = ["True", "False"] if kind == "true_false" else [rng.choice(vocabulary) for _ in range(4)]
                rows.append(
                    Question(
                        kind=kind,
                        text=" ".join(words).capitalize() + "?",
                        options=options,
                        correct_index=0,
                        key={"answers": [options[0]]} if kind == "typed" else {},
                        explanation=" ".join(rng.sample(vocabulary, 8)) + ".",
                        provenance=Provenance.HOST,
                    )
                )
            created = Question.objects.bulk_create(rows)
            if connection.vendor == "sqlite" and created[0].pk is None:
                raise SystemExit("bulk_create gave no ids")
            round_ = Round.objects.create(
                title=f"Bench {start}", provenance=Provenance.HOST, owner_key=owner_key, language="en"
            )
            RoundQuestion.objects.bulk_create(
                RoundQuestion(round=round_, question=question, position=position)
                for position, question in enumerate(created)
            )


def page(owner_key: str, query: BankQuery) -> int:
    result = bank_search(owner_key=owner_key, query=query, played_ids=played_question_ids(owner_key=owner_key))
    count = result.questions.count()
    list(result.questions[:PAGE])
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    owner_key = f"bench-{uuid.uuid4().hex}"
    started = time.perf_counter()
    fill(owner_key, args.questions, random.Random(44))
    print(f"{connection.vendor}: {args.questions} questions added in {time.perf_counter() - started:.1f} s")
    try:
        run(owner_key, args)
    finally:
        remove(owner_key)


def remove(owner_key: str) -> None:
    """This run's rounds and questions go again, so the next run on the same database measures the same bank."""
    with transaction.atomic():
        ids = list(RoundQuestion.objects.filter(round__owner_key=owner_key).values_list("question_id", flat=True))
        Round.objects.filter(owner_key=owner_key).delete()
        Question.objects.filter(pk__in=ids).delete()


def run(owner_key: str, args: argparse.Namespace) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE quiz_question")
    cases = [
        ("baseline: the whole bank, unsearched", BankQuery()),
        ("a rare word (1 question)", BankQuery(words="zebracorn")),
        ("a common word (1 in 10)", BankQuery(words="capital")),
        ("a prefix of 4 letters", BankQuery(words="zebr")),
        ("two words", BankQuery(words="capital ka")),
        ("a word + kind + never checked", BankQuery(words="capital", kind="single", check="unchecked")),
        ("never played", BankQuery(played="no")),
        ("10,000 characters of junk", BankQuery(words=("x" * 30 + ' "NEAR(*) ') * 250)),
    ]
    baseline = None
    print(f"{'case':45} {'found':>6} {'median ms':>10} {'runs (ms)':>40} {'× baseline':>10}")
    for name, query in cases:
        found = page(owner_key, query)  # warm
        runs = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            page(owner_key, query)
            runs.append((time.perf_counter() - start) * 1000)
        median = statistics.median(runs)
        baseline = baseline or median
        listed = " ".join(f"{run:.1f}" for run in runs)
        print(f"{name:45} {found:>6} {median:>10.1f} {listed:>40} {median / baseline:>10.2f}")


if __name__ == "__main__":
    main()
