"""A game's audit trail for its host: audit.json holds, per question, how it was checked, the reviewer's label,
and how this room's players answered it; the results CSV names each question and its correct option."""

import csv
import io
import json
import uuid

import pytest

from lobby import services
from lobby.models import Answer, Room
from quiz.models import Round
from review.services import flag_record, review_label
from verifier.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    settings.RATELIMIT_KEY_PREFIX = f"ratelimit-test-{uuid.uuid4().hex}"


def _played_room(client, make_round) -> Room:
    round_ = make_round(title="Friday quiz")
    Round.objects.filter(pk=round_.pk).update(owner_key="browser-1")
    session = client.session
    session["owner_key"] = "browser-1"
    session.save()
    client.post("/", {"source": f"round:{round_.pk}", "timer_seconds": 20})
    room = Room.objects.get(round=round_)
    first, second = (entry.question for entry in round_.entries.select_related("question")[:2])
    Verdict.objects.create(
        question=first, backend="systemone", model_id="jev-1.13.0", requested_model_id="jev-1.13.0",
        probabilities={"answer_correct": 0.93}, score=0.93, threshold=0.6, outcome="passed",
        details={"second_opinion": {"model_id": "judge-2", "p": 0.9}},
    )  # fmt: skip
    review_label(question=second, label="defective", note="two planets")
    ada = services.player_join(code=room.code, nickname="=Ada").player
    Answer.objects.create(room=room, player=ada, question_index=0, option=1, elapsed_ms=1200, correct=True, points=900)
    Answer.objects.create(room=room, player=ada, question_index=1, option=0, elapsed_ms=3000, correct=False, points=0)
    flag_record(question_id=second.pk, kind="crowd", room_code=room.code, detail={"share": 0.8})
    Room.objects.filter(pk=room.pk).update(question_index=1, phase="reveal")
    return room


def test_the_audit_json_tells_why_each_question_was_played_and_how_it_went(client, make_round):
    room = _played_room(client, make_round)
    response = client.get(f"/host/{room.code}/audit.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="quizgate-{room.code}-audit.json"'
    audit = json.loads(response.content)
    assert audit["room"]["code"] == room.code and audit["round"]["title"] == "Friday quiz"
    first, second, third = audit["questions"]
    (check,) = first["checks"]
    verdict = Verdict.objects.get(question_id=first["question_id"])
    assert (check["backend"], check["served_model_id"], check["score"], check["threshold"], check["outcome"]) == (
        verdict.backend, verdict.model_id, verdict.score, verdict.threshold, verdict.outcome,
    )  # fmt: skip
    assert check["probabilities"] == {"answer_correct": 0.93} and check["second_opinion"]["model_id"] == "judge-2"
    assert first["answers"] == [
        {
            "player": "=Ada",
            "option": "B",
            "answer": "B: 4",
            "correct": True,
            "credit": None,  # stored before kinds: as "correct" says
            "points": 900,
            "elapsed_ms": 1200,
        }
    ]
    assert first["correct"] == "B" and first["correct_option"] == "4" and first["origin"]["host"] is True
    assert second["review"]["label"] == "defective" and second["flags"][0]["kind"] == "crowd"
    assert second["played"] and not third["played"] and third["checks"] == [] and third["review"] is None
    assert audit["players"] == [{"nickname": "=Ada", "score": 0, "rank": 1, "removed": False}]


def test_only_the_host_may_download_the_audit(client, make_round):
    room = _played_room(client, make_round)
    assert client.__class__().get(f"/host/{room.code}/audit.json").status_code == 403
    assert client.get("/host/NOSUCH/audit.json").status_code == 404


def test_the_results_csv_names_each_question_its_correct_option_and_each_answer(client, make_round):
    room = _played_room(client, make_round)
    rows = list(csv.reader(io.StringIO(client.get(f"/host/{room.code}/results.csv").content.decode())))
    assert rows[0] == [
        "rank", "nickname", "score",
        "Q1: What is 2 + 2? [correct B: 4]",
        "Q2: Which planet is closest to the Sun? [correct C: Mercury]",
        "Q3: What is H2O commonly called? [correct A: Water]",
    ]  # fmt: skip
    assert rows[1] == ["1", "'=Ada", "0", "B: 4 (right, 900)", "A: Venus (wrong, 0)", ""]
