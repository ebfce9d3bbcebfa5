"""The `slide` kind (quiz/kinds/slide.py) and how a game steps over it: no answer, no clock, no reveal, no
leaderboard, no number; the host's key moves on."""

import json

import pytest
from channels.db import database_sync_to_async

from lobby.models import Answer, Room
from lobby.pages.results import game_results
from lobby.rules.machine import Action, Phase, Position, transition
from lobby.services import CreatedRoom
from lobby.tokens import host_token
from quiz.importing import export_json, parse_json
from quiz.kinds import KINDS, BadAnswer
from quiz.validation import clean_question
from tests.factories import RoomFactory, RoundFactory

SLIDE = {"kind": "slide", "question": "Round two: space", "explanation": "Three questions about the planets."}


def _file(items) -> str:
    return json.dumps({"title": "Mixed", "questions": [{"explanation": "", "source": "", **item} for item in items]})


ROUND = [SLIDE, {"question": "Largest planet?", "options": ["Jupiter", "Mars"], "correct": "A"}, SLIDE]


def test_a_slide_reads_and_writes_back_as_the_same_file_and_refuses_answers():
    result = parse_json(_file(ROUND))
    assert result.errors == [] and [q.kind for q in result.questions] == ["slide", "single", "slide"]
    slide = result.questions[0]
    shown = (slide.text, slide.explanation, slide.options, slide.key)
    assert shown == (SLIDE["question"], SLIDE["explanation"], (), {})
    assert json.loads(export_json(title="Mixed", questions=result.questions))["questions"][0] == {
        "kind": "slide", "question": SLIDE["question"], "explanation": SLIDE["explanation"], "source": "",
    }  # fmt: skip
    with pytest.raises(BadAnswer, match="nothing to answer"):
        KINDS["slide"].judge(slide, {"option": 0}, ())
    assert KINDS["slide"].public(clean_question(SLIDE), ()) == {"body": SLIDE["explanation"]}


def test_the_host_key_on_a_slide_goes_to_the_next_step_with_no_reveal():
    at_slide = Position(Phase.QUESTION, 0)
    for action in (Action.NEXT, Action.CLOSE):
        assert transition(at_slide, action, total=3, slide=True) == Position(Phase.QUESTION, 1)
    assert transition(Position(Phase.QUESTION, 2), Action.NEXT, total=3, slide=True) == Position(Phase.FINISHED, 2)
    # Not a slide: close reveals, and next is not allowed in a question.
    assert transition(at_slide, Action.CLOSE, total=3) == Position(Phase.REVEAL, 0)


@pytest.mark.django_db(transaction=True)
async def test_a_round_with_slides_plays_over_the_sockets(sockets, host_socket):
    room = await database_sync_to_async(
        lambda: RoomFactory(round=RoundFactory(questions=parse_json(_file(ROUND)).questions), option_seed="")
    )()
    host = await host_socket(CreatedRoom(room=room, host_token=host_token(room_code=room.code)))
    ann, _ = await sockets.join(room.code, "Ann")
    await host.send(type="start")
    slide = await ann.state(phase="question", question_index=0)
    assert slide["question"] == {"index": 0, "kind": "slide", "text": SLIDE["question"], "body": SLIDE["explanation"]}
    assert slide["numbering"] == {"number": None, "of": 1}
    assert (await database_sync_to_async(lambda: Room.objects.get(pk=room.pk).deadline)()) is None
    await ann.send(type="answer", question=0, option=0)
    assert (await ann.error())["message"] == "This is a slide: there is nothing to answer. Look at the screen."
    await host.send(type="close", phase="question", index=0)  # Space on the host's screen
    question = await ann.state(phase="question", question_index=1)
    assert question["numbering"] == {"number": 1, "of": 1}
    await ann.send(type="answer", question=1, option=0)
    await ann.state(phase="reveal", question_index=1)
    await host.send(type="next", phase="reveal", index=1)
    await ann.state(phase="leaderboard", question_index=1)
    await host.send(type="next", phase="leaderboard", index=1)
    await ann.state(phase="question", question_index=2)
    await host.send(type="next", phase="question", index=2)
    finished = await ann.state(phase="finished")
    assert finished["you"]["score"] > 0

    def stored():
        fresh = Room.objects.get(pk=room.pk)
        results = game_results(room=fresh)
        return Answer.objects.filter(room=fresh).count(), results.played, [q.text for q in results.questions]

    assert await database_sync_to_async(stored)() == (1, 1, ["Largest planet?"])
