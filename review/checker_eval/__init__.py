"""Know your checker: run the configured gate (any backend, second opinion included) over questions whose answer is
known, and say how well it tells good from bad, in figures and in plain words.

The default set is the sample packs (quiz/pack_data/): each question as it is (good), and two bad copies of it:
the marked option moved to the next option, and the explanation made false (the right option's name swapped for a
wrong one). An operator's own labelled set (review/labelled_set.py's format: JSON items, or the CSV columns, with
`label`; probabilities and backend are not needed) can be given instead.

The checks run as play runs them: rounds of `ROUND_SIZE` questions through `Gate.from_settings()`, each round with
the configured call budget (VERIFIER_TIMEOUT), concurrency (VERIFIER_CONCURRENCY) and circuit breaker. The figures
are computed by `eval_report` (pure) from the per-question results.

The labelled sets are in items.py, the running and storing in runs.py, the figures and their text in
figures.py; every name is re-exported here.
"""

from review.checker_eval.figures import (
    SCORE,
    SEPARATES,
    SLOW_REASONS,
    STRONG,
    UNREACHABLE_REASONS,
    CheckFigures,
    EvalReport,
    EvalResult,
    auroc,
    check_figures,
    eval_report,
    format_text,
    percentile,
    verdict_for,
)
from review.checker_eval.items import (
    AS_WRITTEN,
    FALSE_EXPLANATION,
    GIVEN,
    MOVED,
    EvalItem,
    bad_copies,
    falsified_explanation,
    items_from_file,
    pack_items,
)
from review.checker_eval.runs import ROUND_SIZE, Progress, evaluate, evaluate_async, labels_store, run_store

__all__ = [
    "AS_WRITTEN",
    "FALSE_EXPLANATION",
    "GIVEN",
    "MOVED",
    "ROUND_SIZE",
    "SCORE",
    "SEPARATES",
    "SLOW_REASONS",
    "STRONG",
    "UNREACHABLE_REASONS",
    "CheckFigures",
    "EvalItem",
    "EvalReport",
    "EvalResult",
    "Progress",
    "auroc",
    "bad_copies",
    "check_figures",
    "eval_report",
    "evaluate",
    "evaluate_async",
    "falsified_explanation",
    "format_text",
    "items_from_file",
    "labels_store",
    "pack_items",
    "percentile",
    "run_store",
    "verdict_for",
]
