"""The audit trail in a round's exports: an imported round checked against the scripted checker, one question
labelled by a reviewer; the CSV's audit columns and the JSON's audit fields equal the Verdict rows, a formula-looking
cell is neutralised, and importing the export gives the same questions back without their verdicts."""

import csv
import io
import json

import pytest

from quiz.importing import AUDIT_CSV_COLUMNS, CSV_COLUMNS, parse_csv, parse_json
from quiz.models import Question, Round
from review.services import review_label
from tests.quiz.checking.test_rounds import BLIND_CHOICES, press_check
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)

HEADER = ",".join(CSV_COLUMNS)
# The third question starts with "=": a spreadsheet would run it as a formula.
ROUND_CSV = "\n".join(
    [
        HEADER,
        "What colour is a ripe banana?,Yellow,Blue,Red,,,,A,,",
        "What is the capital of Australia?,Canberra,Sydney,Perth,,,,B,The capital is Sydney.,",
        '"=1+1, what is it?",2,3,11,,,,A,,',
    ]
)


@pytest.fixture
def checked_round(gate_on, client, started_jobs) -> Round:
    gate_on.script.probabilities = {"capital of Australia": 0.1}
    gate_on.script.choice_texts = BLIND_CHOICES
    response = client.post("/rounds/import/", {"text": ROUND_CSV})
    assert "Imported 3 questions" in response.content.decode()
    round_ = Round.objects.get(owner_key=client.session["owner_key"])
    press_check(client, round_, started_jobs, count=3)
    wrong = Question.objects.get(text="What is the capital of Australia?")
    review_label(question=wrong, label="defective", note="Canberra is the capital")
    # A second opinion recorded by another checker lands in the verdict's details; the audit carries it whole.
    verdict = Verdict.objects.get(question=wrong)
    verdict.details = {**verdict.details, "second_opinion": {"backend": "llm", "model_id": "judge-2", "p": 0.05}}
    verdict.save(update_fields=["details"])
    return round_


def test_the_csv_export_carries_the_audit_columns_equal_to_the_verdicts(client, checked_round):
    response = client.get(f"/rounds/{checked_round.pk}/export.csv")
    text = response.content.decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    assert list(rows[0]) == [*CSV_COLUMNS, *AUDIT_CSV_COLUMNS]
    by_text = {row["question"]: row for row in rows}
    for question in checked_round.questions.all():
        row = by_text[question.text if not question.text.startswith("=") else "'" + question.text]
        verdict = Verdict.objects.get(question=question)
        assert row["origin"] == "host" and row["check_count"] == "1"
        assert row["check_backend"] == verdict.backend and row["check_served_model_id"] == verdict.model_id
        assert row["check_requested_model_id"] == verdict.requested_model_id
        assert json.loads(row["check_probabilities"]) == verdict.probabilities
        assert float(row["check_score"]) == verdict.score and float(row["check_threshold"]) == verdict.threshold
        assert row["check_outcome"] == verdict.outcome and row["check_reason"] == verdict.reason
        assert row["check_message"] == verdict.message
        (check,) = json.loads(row["checks"])
        assert check["details"] == verdict.details and check["latency_ms"] == verdict.latency_ms
    wrong = by_text["What is the capital of Australia?"]
    assert wrong["check_outcome"] == "dropped"
    assert json.loads(wrong["check_second_opinion"]) == {"backend": "llm", "model_id": "judge-2", "p": 0.05}
    assert (wrong["review_label"], wrong["review_note"]) == ("defective", "Canberra is the capital")
    # The formula-looking question is written as text.
    assert "'=1+1, what is it?" in by_text
    # Importing the export gives the same questions, and none of the verdicts.
    imported = parse_csv(text)
    assert imported.errors == []
    assert imported.questions == [question.as_data() for question in _round_questions(checked_round)]
    assert client.post("/rounds/import/", {"text": text}).status_code == 200
    copy = Round.objects.exclude(pk=checked_round.pk).get()
    assert [q.as_data() for q in _round_questions(copy)] == imported.questions
    assert not Verdict.objects.filter(question__in=copy.questions.all()).exists()
    assert copy.check_label == "Not checked"


def test_the_json_export_carries_every_check_and_the_review_whole(client, checked_round):
    payload = json.loads(client.get(f"/rounds/{checked_round.pk}/export.json").content)
    assert payload["round"]["id"] == checked_round.pk
    assert payload["round"]["check_label"] == "checked: 1 doubtful kept by the host"
    for item, question in zip(payload["questions"], _round_questions(checked_round), strict=True):
        audit = item["audit"]
        assert audit["question_id"] == question.pk and audit["origin"]["host"] is True
        verdicts = list(Verdict.objects.filter(question=question).order_by("created_at", "id"))
        assert len(audit["checks"]) == len(verdicts) == 1
        for check, verdict in zip(audit["checks"], verdicts, strict=True):
            assert check["backend"] == verdict.backend and check["served_model_id"] == verdict.model_id
            assert check["probabilities"] == verdict.probabilities and check["score"] == verdict.score
            assert check["threshold"] == verdict.threshold and check["outcome"] == verdict.outcome
            assert check["reason"] == verdict.reason and check["details"] == verdict.details
    wrong = next(item["audit"] for item in payload["questions"] if "Australia" in item["question"])
    assert wrong["checks"][0]["second_opinion"]["model_id"] == "judge-2"
    assert wrong["review"]["label"] == "defective" and wrong["review"]["note"] == "Canberra is the capital"
    assert [item["audit"]["review"] for item in payload["questions"]].count(None) == 2
    # The JSON imports back as the same questions.
    imported = parse_json(json.dumps(payload))
    assert imported.errors == [] and imported.title == checked_round.title
    assert imported.questions == [question.as_data() for question in _round_questions(checked_round)]


def test_another_session_cannot_export_the_round(client, checked_round):
    from django.test import Client

    stranger = Client()
    assert stranger.get(f"/rounds/{checked_round.pk}/export.json").status_code == 404
    assert stranger.get(f"/rounds/{checked_round.pk}/export.csv").status_code == 404


def _round_questions(round_: Round) -> list[Question]:
    return [entry.question for entry in round_.entries.select_related("question")]
