"""manage.py checker_eval against the scripted checkers on loopback: one that knows the answers, one that answers a
constant, one that hangs."""

import io
import json
import time

import pytest
from django.core.management import CommandError, call_command

from review import checker_eval
from review.checker_eval import EvalItem, bad_copies, pack_items
from review.models import CheckerEvalRun, Review
from review.selectors import labelled_scores
from review.thresholds.sweep import DEFECTIVE, GOOD
from tests.fakes.model_server import ModelServer
from tests.verifier.conftest import TEST_TIMEOUT
from verifier.gate import ROUND_GRACE

pytestmark = pytest.mark.django_db(transaction=True)

# A small set: four questions and their bad copies (12 items), the same shape as the packs' set.
QUESTIONS = [
    EvalItem("Largest planet?", ("Earth", "Jupiter", "Mars"), 1, "Jupiter is the largest planet.", GOOD),
    EvalItem("Third planet from the Sun?", ("Venus", "Mars", "Earth"), 2, "Earth is third from the Sun.", GOOD),
    EvalItem("Capital of France?", ("Paris", "Lyon", "Nice"), 0, "Paris is the capital of France.", GOOD),
    EvalItem("2 + 2?", ("3", "4", "5"), 1, "Two and two make four.", GOOD),
]


@pytest.fixture
def answering(systemone, settings):
    """The scripted checker answers at once; a roomy budget, so a loaded machine does not turn answers into
    timeouts (the hanging checker's test sets its own)."""
    settings.VERIFIER_TIMEOUT = 5.0
    return systemone


def small_set() -> list[EvalItem]:
    return [copy for question in QUESTIONS for copy in bad_copies(question)]


def write_set(tmp_path, items: list[EvalItem]):
    path = tmp_path / "set.json"
    data = [
        {
            "question": item.text,
            "options": list(item.options),
            "correct_index": item.correct_index,
            "explanation": item.explanation,
            "label": item.label,
        }
        for item in items
    ]
    path.write_text(json.dumps(data))
    return path


def knows_the_answers(server: ModelServer, items: list[EvalItem]) -> None:
    server.script.oracle = {
        item.text: (item.options[item.correct_index], item.explanation) for item in items if item.label == GOOD
    }


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("checker_eval", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_default_set_is_every_pack_question_and_two_bad_copies():
    items = pack_items()
    good = [item for item in items if item.label == GOOD]
    moved = [item for item in items if item.kind == checker_eval.MOVED]
    false = [item for item in items if item.kind == checker_eval.FALSE_EXPLANATION]
    assert len(good) >= 70 and len(moved) == len(good)
    assert len(false) == sum(1 for item in good if item.explanation.strip())
    first, second, third = items[:3]
    assert second.correct_index != first.correct_index and second.text == first.text
    assert third.explanation != first.explanation and third.correct_index == first.correct_index


def test_the_default_set_is_what_the_gate_asks_of_each_kind_and_no_poll():
    items = pack_items()
    nine = [
        item for item in items if item.text == "Which of these numbers are prime? — Is “9” one of the right answers?"
    ]
    # A several-right question is asked one Yes/No question per option: 9 is not prime, so No is marked.
    assert [(item.kind, item.options, item.correct_index, item.label) for item in nine] == [
        (checker_eval.AS_WRITTEN, ("Yes", "No"), 1, GOOD),
        (checker_eval.MOVED, ("Yes", "No"), 0, DEFECTIVE),
        (checker_eval.FALSE_EXPLANATION, ("Yes", "No"), 1, DEFECTIVE),
    ]
    assert any(item.text.endswith("— Is “Morocco” a right answer?") for item in items)
    assert not any(item.text.startswith("Which would you rather explore?") for item in items)


def test_a_false_explanation_names_a_wrong_option():
    assert (
        checker_eval.falsified_explanation("Jupiter is the largest planet.", ("Earth", "Jupiter", "Mars"), 1)
        == "Mars is the largest planet."
    )
    assert checker_eval.falsified_explanation("It is big.", ("Earth", "Jupiter"), 1).startswith("Earth is the answer")


def test_a_checker_that_knows_the_answers_separates_and_finds_a_threshold(answering, tmp_path):
    items = small_set()
    knows_the_answers(answering, items)
    out, err = run("--set", str(write_set(tmp_path, items)))
    assert "-- the gate's score: AUROC 1.000; median good 0.95, bad 0.03 (4 good, 8 bad)" in out
    assert "widest threshold that drops no good question: 0.95 (catches 8 of 8 bad)" in out
    assert "VERDICT: this checker separates good from bad questions (AUROC 1.00); a threshold of 0.95" in out
    assert "-- answer_correct: AUROC" in out and "-- blind:" in out
    assert "unverified 0 (0%)" in out
    # Each threshold of the sweep's grid, with what it catches and drops.
    table = out.split("drops (good dropped):\n", 1)[1].splitlines()
    assert table[0].split() == ["threshold", "answer_correct", "blind", "explanation_true", "score"]
    assert table[1].split() == ["0.05", "0/0", "4/0", "0/0", "4/0"]
    assert table[12].split() == ["0.6", "4/0", "4/0", "4/0", "8/0"]
    assert "12/12" in err  # the progress bar's end
    run_ = CheckerEvalRun.objects.get()
    assert run_.auroc == 1.0 and run_.questions == 12 and "AUROC 1.000" in run_.text


def test_a_checker_that_answers_a_constant_is_called_useless_in_plain_words(answering, tmp_path):
    answering.script.default_probability = 0.7
    answering.script.default_choice = "A"  # the blind answer: always A, whatever A is
    out, _ = run("--set", str(write_set(tmp_path, small_set())))
    assert "-- the gate's score: AUROC 0.500" in out
    assert "VERDICT: this checker does not separate good from bad questions: do not gate on it." in out
    assert CheckerEvalRun.objects.get().verdict.startswith("this checker does not separate")


def test_a_checker_that_hangs_counts_the_unverified_and_ends_within_the_budget(systemone, settings, tmp_path):
    settings.VERIFIER_BREAKER_FAILURES = 1000  # no rest for the checker: every round waits out its budget
    settings.VERIFIER_TIMEOUT = TEST_TIMEOUT  # the deadline is this test's subject
    hang = 60.0
    items = small_set()
    path = str(write_set(tmp_path, items))
    # The baseline, in the same test: the same command over the same set against the same server answering at once.
    started = time.monotonic()
    run("--set", path)
    clean = time.monotonic() - started
    CheckerEvalRun.objects.all().delete()
    systemone.script.latency = hang
    started = time.monotonic()
    out, _ = run("--set", path)
    elapsed = time.monotonic() - started
    assert "answered 0, unverified 12 (100%)" in out
    assert "unverified because: timeout 12" in out or "unverified because: round_budget" in out
    assert "VERDICT: the checker answered none of the questions" in out
    assert "raise VERIFIER_TIMEOUT" in out
    # Two rounds (10 + 2 questions), each cut at one call budget; the server would have taken a minute each.
    rounds = 2
    assert elapsed <= rounds * (TEST_TIMEOUT + ROUND_GRACE) + 2 * clean, (elapsed, clean)
    report = CheckerEvalRun.objects.get().report
    assert report["seconds_p95"] <= settings.VERIFIER_TIMEOUT * rounds + 1
    assert report["unverified"] == 12


def test_the_labels_are_stored_for_the_sweep(answering, tmp_path):
    items = small_set()
    knows_the_answers(answering, items)
    _, err = run("--set", str(write_set(tmp_path, items)), "--store-labels")
    assert "stored 12 labelled question(s)" in err
    scores = labelled_scores()
    assert sorted(item.label for item in scores) == sorted(item.label for item in items)
    assert Review.objects.filter(label=DEFECTIVE).count() == 8
    # Twice: nothing more.
    _, err = run("--set", str(write_set(tmp_path, items)), "--store-labels")
    assert "stored 0 labelled question(s) for the sweep, skipped 12" in err


def test_a_bad_labelled_set_is_refused_with_its_item(systemone, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"question": "Q?", "options": ["a", "b"], "correct_index": 0, "label": "maybe"}]))
    with pytest.raises(CommandError, match="item 1: label must be correct or defective"):
        run("--set", str(path))
    csv_path = tmp_path / "bad.csv"
    csv_path.write_text("question,option_a,option_b,correct,label\nQ?,a,b,A,correct\nR?,a,b,Z,defective\n")
    with pytest.raises(CommandError, match="line 3"):
        run("--set", str(csv_path))


def test_no_checker_configured_is_said(settings):
    settings.VERIFIER_BACKEND = "off"
    with pytest.raises(CommandError, match="No checker is configured"):
        run()


def test_the_admin_shows_the_last_run(answering, tmp_path, client, django_user_model):
    staff = django_user_model.objects.create_superuser("reviewer", "r@example.com", "pw-for-tests-only")
    client.force_login(staff)
    response = client.get("/admin/review/checkerevalrun/last/", follow=True)
    assert "No checker evaluation yet" in response.content.decode()
    answering.script.default_probability = 0.7
    answering.script.default_choice = "A"
    run("--set", str(write_set(tmp_path, small_set())))
    items = small_set()
    knows_the_answers(answering, items)
    run("--set", str(write_set(tmp_path, items)))
    page = client.get("/admin/review/checkerevalrun/last/", follow=True).content.decode()
    assert "this checker separates good from bad questions (AUROC 1.00)" in page
    assert '<tr data-check="score">' in page
    score_row = page.split('<tr data-check="score">', 1)[1].split("</tr>", 1)[0]
    assert '<td data-field="auroc">1.000</td>' in score_row
    assert "0.95 (catches 8 of 8 bad)" in score_row
    listing = client.get("/admin/review/checkerevalrun/").content.decode()
    assert "0.500" in listing and "1.000" in listing


def _results(reason: str, count: int, *, label: str = GOOD) -> list:
    item = QUESTIONS[0] if label == GOOD else bad_copies(QUESTIONS[0])[1]
    return [
        checker_eval.EvalResult(item, "unverified", None, {}, reason, "", 0.0, None, "systemone", "jev-1.13.0")
        for _ in range(count)
    ]


def test_timeouts_then_a_pause_by_the_breaker_name_the_setting_to_change():
    results = _results("round_budget", 10) + _results("checker_unavailable", 215, label=DEFECTIVE)
    report = checker_eval.eval_report(
        results, backend="systemone", model_id="jev-1.13.0", timeout=6.0, concurrency=4, wall_seconds=6.5
    )
    assert report.unverified == 225 and report.unverified_reasons == {"checker_unavailable": 215, "round_budget": 10}
    assert report.verdict.startswith("the checker answered none of the questions")
    assert report.advice == [
        "10 of 225 checks ran out of time at 6 s, and the breaker then paused the checker for 215 more: the checker "
        "is too slow for VERIFIER_TIMEOUT; raise VERIFIER_TIMEOUT (or lower VERIFIER_CONCURRENCY, or use a faster "
        "checker) and run this again."
    ]


def test_an_unreachable_checker_is_not_called_slow():
    results = _results("connection_refused", 6) + _results("checker_unavailable", 6)
    report = checker_eval.eval_report(
        results, backend="systemone", model_id="jev-1.13.0", timeout=6.0, concurrency=4, wall_seconds=1
    )
    assert report.advice == [
        "12 of 12 checks could not reach the checker: check VERIFIER_BASE_URL and that the server is up."
    ]


def test_auroc_counts_ties_as_half():
    assert checker_eval.auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert checker_eval.auroc([0.5, 0.5], [0.5]) == 0.5
    assert checker_eval.auroc([0.1], [0.9]) == 0.0
    assert checker_eval.auroc([], [0.9]) is None


def test_the_second_opinion_is_asked_as_in_play(answering, settings, tmp_path):
    settings.VERIFIER_SECOND_OPINION_BACKEND = "judge"
    settings.VERIFIER_SECOND_OPINION_MODEL = "judge-7b-2025-03"
    settings.VERIFIER_SECOND_OPINION_BASE_URL = f"{answering.url}/v1"
    settings.VERIFIER_SECOND_OPINION_API_KEY = "test-key"
    settings.VERIFIER_SECOND_OPINION_TIMEOUT = 5.0
    # Every score 0.55: within the band of the 0.6 threshold, so each question is asked again.
    answering.script.default_probability = 0.55
    answering.script.default_choice = "A"
    out, _ = run("--set", str(write_set(tmp_path, small_set())), "--json")
    report = json.loads(out)
    judge_reports = [r for r in answering.requests_to("/v1/chat/completions") if "one JSON object" in r.body.decode()]
    assert len(judge_reports) == 12
    # Three System One calls (the checks, the blind question in two orders) and the second opinion's report.
    assert report["calls_median"] == 4.0 and report["calls_total"] == 48
