"""The checker is told which language a question is in, in the document of every call it gets (checks and blind),
so a German question is not judged as broken English."""

import json

import pytest
from django.utils import translation

from quiz.generation.views import GenerateForm
from verifier.decisions import GateItem
from verifier.gate import Gate


async def test_every_call_for_a_german_question_says_it_is_german(systemone):
    item = GateItem(
        key="q1", text="Welcher Fluss fließt durch Köln?", options=("Rhein", "Elbe", "Donau"), correct_index=0,
        explanation="Köln liegt am Rhein.", language="German",
    )  # fmt: skip
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        decision = await gate.check(item)
    assert decision.outcome == "passed"
    documents = [json.dumps(request.json()) for request in systemone.requests if request.method == "POST"]
    assert len(documents) == 3  # the checks and the blind question in two orders
    assert all('"language": "German"' in document for document in documents), documents


async def test_a_question_of_unknown_language_says_nothing_about_it(systemone):
    gate = Gate.from_settings(threshold=0.6)
    async with gate:
        await gate.check(GateItem(key="q1", text="Two plus two?", options=("4", "5"), correct_index=0))
    assert all('"language"' not in request.body.decode() for request in systemone.requests)


@pytest.mark.parametrize(("page", "expected"), [("de", "de"), ("es", "es"), ("en", "en")])
def test_the_writer_is_asked_for_the_pages_language_unless_the_host_picks_another(page, expected):
    with translation.override(page):
        assert GenerateForm()["language"].initial == expected
