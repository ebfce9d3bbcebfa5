"""The writer writes the kinds of question the host ticked, against the scripted server on loopback: the
request's schema holds those kinds and no other, each item is validated as its kind, one of a kind not ticked
is refused with its reason, and a finished job stores each question with its kind and key."""

import json

import pytest
from jsonschema import Draft202012Validator

from quiz.exceptions import InvalidQuestion, QuizError
from quiz.generation.jobs import generation_job_create, generation_retry, generation_run
from quiz.generation.prompts import SYSTEM_PROMPT, RoundSpec, build_messages, question_schema
from quiz.generation.replies import clean_item
from quiz.kinds import KINDS
from quiz.models import GenerationJob, GenerationStatus
from quiz.selectors import generation_round_questions
from tests.fakes.writer_server import Turn, good_question, kind_question, mixed
from tests.quiz.generation import write

ALL = tuple(KINDS)
MIXED = ("single", "true_false", "typed", "number")


def _schema(server, number: int = 0) -> dict:
    return server.writer_bodies[number]["response_format"]["json_schema"]["schema"]


def _variants(schema: dict) -> list[dict]:
    item = schema["properties"]["questions"]["items"]
    return item.get("anyOf", [item])


def _kinds_in(schema: dict) -> list[str]:
    return [variant["properties"]["kind"]["const"] for variant in _variants(schema)]


def _strings(schema: dict):
    """Every string schema inside `schema`."""
    if schema.get("type") == "string" and "const" not in schema:
        yield schema
    for value in schema.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                yield from _strings(child)


# --- a mixed round ------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_mixed_round_is_written_validated_and_stored_with_each_kind_and_its_key(writer):
    writer.writer.make_question = mixed(*MIXED)
    # Ticked in any order, kept in the registry's.
    job = generation_job_create(
        owner_key="k", count=8, topic="Birds", kinds=["number", "typed", "single", "true_false"]
    )
    assert job.kinds == list(MIXED)
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.DONE, job.message
    assert (job.written, job.invalid) == (8, 0)

    # The request asked for these four kinds and no other, and what the model wrote fits it.
    schema = _schema(writer)
    assert _kinds_in(schema) == list(MIXED)
    assert not list(Draft202012Validator(schema).iter_errors(json.loads(_reply(writer))))
    user = writer.user_prompt(0)
    assert "Write a mix of these kinds: single, true_false, typed, number;" in user
    system = writer.writer_bodies[0]["messages"][0]["content"]
    assert system != SYSTEM_PROMPT and "4 kinds" in system
    for name in MIXED:
        assert f'{{"kind": "{name}", "question": "...",' in system and KINDS[name].writer_hint in system

    stored = [question for question, _mark in generation_round_questions(job=job)]
    assert [question.kind for question in stored] == list(MIXED) * 2
    single, true_false, typed, number = stored[:4]
    assert (single.options, single.correct_index, single.key) == (["Right 0.1", "Wrong 0.1", "Other 0.1"], 0, {})
    assert (true_false.options, true_false.key) == ([], {"answer": True})
    assert (typed.options, typed.key) == ([], {"answers": ["Answer 0.3", "The answer 0.3"]})
    assert number.key == {"answer": 1973, "tolerance": 1, "min": 1900, "max": 2100, "unit": "AD"}
    assert stored[5].key == {"answer": False}
    assert all(question.explanation.startswith("Question ") for question in stored)

    # A retry writes the same kinds.
    retried = generation_retry(job_id=job.pk, owner_key="k")
    assert retried.kinds == list(MIXED)


def _reply(server, number: int = 0) -> str:
    """The JSON the scripted model wrote for request `number` (its streamed pieces put together)."""
    prompt = server.user_prompt(number)
    asked = int(prompt.split("Write ", 1)[1].split(" ", 1)[0])
    make = server.writer.make_question
    return json.dumps({"questions": [make(number, index) for index in range(1, asked + 1)]})


async def test_every_kind_ticked_writes_a_round_of_every_kind(writer):
    writer.writer.make_question = mixed(*ALL)
    outcome = await write(len(ALL), kinds=ALL)
    assert outcome.kind == "full" and outcome.progress.invalid == 0
    assert [candidate.data.kind for candidate in outcome.played] == list(ALL)
    assert _kinds_in(_schema(writer)) == list(ALL)


async def test_a_grounded_mixed_round_asks_each_kind_for_its_supporting_sentence(writer):
    writer.writer.make_question = mixed("typed", "order")
    outcome = await write(4, topic="", source_text="The kestrel hovers. " * 5, kinds=("typed", "order"))
    assert outcome.kind == "full"
    for variant in _variants(_schema(writer)):
        assert "support" in variant["required"] and variant["properties"]["support"]["maxLength"] == 500
    assert [c.data.kind for c in outcome.played] == ["typed", "order"] * 2
    assert all(c.data.source.startswith("Sentence") for c in outcome.played)


# --- the request's schema: the ticked kinds, bounded --------------------------------------------------------


@pytest.mark.parametrize("kinds", [("typed",), ("single", "poll"), ("true_false", "multi", "order"), ALL])
async def test_the_requests_schema_holds_exactly_the_ticked_kinds_each_closed_and_bounded(writer, kinds):
    writer.writer.make_question = mixed(*kinds)
    outcome = await write(3, kinds=kinds)
    assert outcome.kind == "full"
    schema = _schema(writer)
    Draft202012Validator.check_schema(schema)
    item = schema["properties"]["questions"]["items"]
    # One kind: its object; several: one object per kind, told apart by `kind`.
    assert ("anyOf" in item) == (len(kinds) > 1)
    assert _kinds_in(schema) == list(kinds)
    for variant in _variants(schema):
        kind = KINDS[variant["properties"]["kind"]["const"]]
        assert variant["additionalProperties"] is False
        assert variant["required"] == list(variant["properties"])
        assert list(variant["properties"]) == ["kind", "question", *kind.writer_schema(), "explanation"]
    assert all("maxLength" in string for string in _strings(schema))
    if len(kinds) > 1:
        assert "Write a mix of these kinds: " + ", ".join(kinds) + ";" in writer.user_prompt(0)


async def test_a_server_refusing_string_lengths_keeps_every_kind_and_its_counts(writer):
    writer.writer.reject_schema_keywords = ("maxLength", "minLength")
    writer.writer.make_question = mixed(*MIXED)
    outcome = await write(4, kinds=MIXED)
    assert outcome.kind == "full" and len(writer.writer_bodies) == 2
    kept = _schema(writer, 1)
    assert _kinds_in(kept) == list(MIXED)
    assert "maxLength" not in json.dumps(kept) and "minLength" not in json.dumps(kept)
    typed = next(v for v in _variants(kept) if v["properties"]["kind"]["const"] == "typed")
    assert typed["properties"]["answers"]["maxItems"] == 10


def test_the_single_only_request_is_the_one_from_before_kinds():
    # No `kind` anywhere: the schema, the instructions and the prompt every server took before.
    schema = question_schema(grounded=False)
    assert "kind" not in schema["properties"]["questions"]["items"]["properties"]
    assert "anyOf" not in json.dumps(schema)
    system, user = build_messages(spec=RoundSpec(count=5, topic="Birds"), ask=5, already=[], source_limit=100)
    assert system["content"] == SYSTEM_PROMPT and '"kind"' not in SYSTEM_PROMPT
    assert SYSTEM_PROMPT.startswith("You write multiple-choice questions for a live pub-quiz game.")
    assert "mix" not in user["content"]


def _item(kind: str, **changes):
    return {**kind_question(kind, 0, 1), **changes}


# Items of each kind that a constrained decoder must not be able to write, because validation would refuse
# them too.
OUT_OF_BOUNDS = {
    "true_false answer not a boolean": _item("true_false", answer=1),
    "multi with no right option": _item("multi", correct_indexes=[]),
    "multi marking past the sixth option": _item("multi", correct_indexes=[6]),
    "multi with seven options": _item("multi", options=[f"Option {n}" for n in range(7)]),
    "typed with no accepted answer": _item("typed", answers=[]),
    "typed with eleven accepted answers": _item("typed", answers=[f"Answer {n}" for n in range(11)]),
    "typed answer too long": _item("typed", answers=["A" * 101]),
    "typed answer empty": _item("typed", answers=[""]),
    "order with two items": _item("order", items=["One", "Two"]),
    "order with seven items": _item("order", items=[f"Item {n}" for n in range(7)]),
    "number with a negative tolerance": _item("number", tolerance=-1),
    "number answer as text": _item("number", answer="1969"),
    "number unit too long": _item("number", unit="U" * 21),
    "poll with one option": _item("poll", options=["Only"]),
    "poll option too long": _item("poll", options=["O" * 121, "Two"]),
    "single with an index past the sixth option": _item("single", correct_index=6),
}
AT_THE_LIMITS = {
    # At least one option is wrong (ticking every option must earn nothing): five of six right is the limit.
    "multi with five of six options right": _item(
        "multi", options=[f"Option {n}" for n in range(6)], correct_indexes=list(range(5))
    ),
    "typed with ten longest answers": _item("typed", answers=[f"{n}" + "A" * 99 for n in range(10)]),
    "order with six items": _item("order", items=[f"Item {n}" for n in range(6)]),
    "number, exact, a fraction, no unit": _item("number", answer=3.5, tolerance=0, min=0, max=10, unit=""),
    "poll with six options and no explanation": _item(
        "poll", options=[f"Option {n}" for n in range(6)], explanation=""
    ),
    "a false statement": _item("true_false", answer=False),
}


async def test_each_kinds_schema_carries_the_bounds_its_validation_enforces(writer):
    writer.writer.make_question = mixed(*ALL)
    await write(len(ALL), kinds=ALL)
    validator = Draft202012Validator(_schema(writer))
    for name, bad in OUT_OF_BOUNDS.items():
        assert not validator.is_valid({"questions": [bad]}), f"the schema lets through: {name}"
        with pytest.raises(InvalidQuestion):
            clean_item(bad, grounded=False, kinds=ALL)
    for name, good in AT_THE_LIMITS.items():
        assert validator.is_valid({"questions": [good]}), f"the schema refuses: {name}"
        clean_item(good, grounded=False, kinds=ALL)
    # Each kind's fields are its own: another kind's field, or none of `kind`, matches no object of the schema.
    assert not validator.is_valid({"questions": [_item("poll", correct_index=0)]})
    assert not validator.is_valid({"questions": [_item("typed", options=["A", "B"])]})
    assert not validator.is_valid({"questions": [good_question(0, 1)]})


def test_each_kinds_example_in_the_instructions_fits_its_schema():
    for kind in KINDS.values():
        assert list(kind.writer_example) == list(kind.writer_schema()), kind.name
        for field, schema in kind.writer_schema().items():
            assert Draft202012Validator(schema).is_valid(kind.writer_example[field]), (kind.name, field)
        assert kind.writer_noun and kind.writer_hint and "\n" not in kind.writer_hint


# --- an item of a kind not ticked ---------------------------------------------------------------------------


async def test_an_item_of_a_kind_not_ticked_is_refused_as_invalid_with_its_reason(writer, settings):
    settings.QUIZ_MAX_ATTEMPTS = 1
    writer.writer.turns = [
        Turn(
            questions=[
                kind_question("single", 0, 1),
                kind_question("number", 0, 2),
                kind_question("typed", 0, 3),
                kind_question("poll", 0, 4),
                {**kind_question("typed", 0, 5), "kind": "essay"},
            ]
        )
    ]
    outcome = await write(5, kinds=("single", "typed"))
    assert [c.data.kind for c in outcome.played] == ["single", "typed"]
    assert (outcome.progress.written, outcome.progress.invalid) == (5, 3)
    assert outcome.progress.problems[:3] == [
        "item 2: a question of kind 'number', which this round did not ask for (asked for: single, typed)",
        "item 4: a question of kind 'poll', which this round did not ask for (asked for: single, typed)",
        "item 5: unknown question kind 'essay' "
        "(one of: single, true_false, multi, typed, order, number, poll, open, slide)",
    ]


@pytest.mark.django_db(transaction=True)
def test_a_single_only_job_refuses_the_other_kinds_and_tells_the_host_why(writer, settings):
    settings.QUIZ_MAX_ATTEMPTS = 1
    writer.writer.default = Turn(questions=[kind_question("typed", 0, n) for n in range(1, 4)])
    job = generation_job_create(owner_key="k", count=3, topic="Birds")
    assert job.kinds == ["single"]
    generation_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == GenerationStatus.FAILED and job.invalid == 3
    assert job.message == (
        "The model's reply had 3 questions, none usable: a question of kind 'typed', which this round did not ask "
        "for (asked for: single). Try again."
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("kinds", "error"), [([], "at least one kind"), (["single", "essay"], "Unknown kinds")])
def test_a_job_needs_known_kinds_and_at_least_one(writer, kinds, error):
    with pytest.raises(QuizError, match=error):
        generation_job_create(owner_key="k", count=3, topic="Birds", kinds=kinds)
    assert not GenerationJob.objects.exists()
