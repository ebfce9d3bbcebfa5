"""Every test's data, built in one place (factory_boy).

Where the app keeps an invariant in a service, the factory goes through that service (`_create`), so a test's
data is what the app itself would have made: a question through `question_create`, a round and its numbered
entries through `round_create`, a room (code, question count, timer bounds) through `room_create`, a player
(nickname key, the room's bump) through `player_join`, a threshold (bounds, one per backend and model) through
`threshold_set`. The rest are stored rows in any state a test needs (a job already running, a verdict, an answer
with exact timings, a report, a flag), so those factories write the row itself.
"""

import factory
from django.contrib.auth import get_user_model
from factory.django import DjangoModelFactory

from accounts.services import host_sign_up
from lobby import services as lobby_services
from lobby.models import Answer, Player, Report, Room
from quiz.models import CheckStatus, GenerationJob, Pack, Provenance, Question, Round
from quiz.services import question_create, round_create
from quiz.validation import QuestionData
from review.models import Flag
from verifier.models import Threshold, Verdict, VerdictOutcome
from verifier.services import threshold_set

# The default round. Q1 marks option 1 of 4, Q2 option 2 of 4, Q3 option 0 of 3 (tests count on it).
SAMPLE = [
    QuestionData(
        text="What is 2 + 2?", options=("3", "4", "5", "22"), correct_index=1, explanation="Two and two make four."
    ),
    QuestionData(
        text="Which planet is closest to the Sun?",
        options=("Venus", "Earth", "Mercury", "Mars"),
        correct_index=2,
        explanation="Mercury orbits nearest the Sun.",
    ),
    QuestionData(
        text="What is H2O commonly called?",
        options=("Water", "Salt", "Air"),
        correct_index=0,
        explanation="H2O is the formula of water.",
    ),
]


class PackFactory(DjangoModelFactory):
    class Meta:
        model = Pack

    slug = factory.Sequence(lambda n: f"pack-{n}")
    title = factory.Sequence(lambda n: f"Pack {n}")
    description = ""


class QuestionFactory(DjangoModelFactory):
    class Meta:
        model = Question

    text = factory.Sequence(lambda n: f"Question {n}: which option is marked?")
    options = ("Right", "Wrong", "Also wrong")
    correct_index = 0
    explanation = factory.LazyAttribute(lambda question: f"About {question.text}")
    source = ""
    provenance = Provenance.HOST
    pack = None
    model_id = ""
    served_model_id = ""
    kind = "single"
    key = factory.LazyFunction(dict)
    seconds = None  # its own time; None: the room's timer

    class Params:
        # Written by the writer model "writer-1", as a generated round's questions are.
        written = factory.Trait(provenance=Provenance.MODEL, model_id="writer-1")

    @classmethod
    def _create(cls, model_class, *, text, options, correct_index, explanation, source, kind, key, seconds, **kwargs):
        data = QuestionData(
            text=text,
            options=tuple(options),
            correct_index=correct_index,
            explanation=explanation,
            source=source,
            kind=kind,
            key=key,
            seconds=seconds,
        )
        return question_create(data=data, **kwargs)

    @classmethod
    def from_data(cls, data: QuestionData, **kwargs) -> Question:
        return cls(
            text=data.text,
            options=data.options,
            correct_index=data.correct_index,
            explanation=data.explanation,
            source=data.source,
            kind=data.kind,
            key=dict(data.key),
            seconds=data.seconds,
            **kwargs,
        )


class RoundFactory(DjangoModelFactory):
    """`questions`: QuestionData (stored as host questions) or stored Questions, in play order; SAMPLE by default."""

    class Meta:
        model = Round

    title = "Test round"
    provenance = Provenance.HOST
    check_status = CheckStatus.UNCHECKED
    pack = None
    owner_key = ""
    questions = factory.LazyFunction(lambda: list(SAMPLE))

    @classmethod
    def _create(cls, model_class, *, questions, **kwargs):
        stored = [q if isinstance(q, Question) else QuestionFactory.from_data(q) for q in questions]
        return round_create(questions=stored, **kwargs)


class RoomFactory(DjangoModelFactory):
    """Through `room_create`; any other field (`locked`, `phase`, ...) is written after, as a game would have.
    `option_seed` "" (the default here) shows the round's order, as a room from before shuffling does, so a
    test can name SAMPLE's options by index; a room the app makes draws a secret seed (tests/lobby/test_shuffle.py
    gives fixed ones)."""

    class Meta:
        model = Room

    round = factory.SubFactory(RoundFactory)
    timer_seconds = 20
    option_seed = ""

    @classmethod
    def _create(cls, model_class, *, round, timer_seconds, option_seed, **fields):
        room = lobby_services.room_create(round_id=round.pk, timer_seconds=timer_seconds, option_seed=option_seed).room
        if fields:
            Room.objects.filter(pk=room.pk).update(**fields)
            room.refresh_from_db()
        return room


class PlayerFactory(DjangoModelFactory):
    """Through `player_join`: the room's lock, locked and full rooms, and the nickname key all apply."""

    class Meta:
        model = Player

    room = factory.SubFactory(RoomFactory)
    nickname = factory.Sequence(lambda n: f"Player {n}")

    @classmethod
    def _create(cls, model_class, *, room, nickname):
        return lobby_services.player_join(code=room.code, nickname=nickname).player


def _marked_option(answer) -> int:
    return answer.room.round.entries.get(position=answer.question_index).question.correct_index


class AnswerFactory(DjangoModelFactory):
    """A stored answer with exact timings, right or wrong by the room's question (not counted or scored)."""

    class Meta:
        model = Answer

    player = factory.SubFactory(PlayerFactory)
    room = factory.LazyAttribute(lambda answer: answer.player.room)
    question_index = 0
    option = 0
    elapsed_ms = 0
    correct = factory.LazyAttribute(lambda answer: answer.option == _marked_option(answer))


class ReportFactory(DjangoModelFactory):
    """A stored report on the room's question at `question_index` (the review flag is `FlagFactory`'s job)."""

    class Meta:
        model = Report
        exclude = ("question_index",)

    player = factory.SubFactory(PlayerFactory)
    room = factory.LazyAttribute(lambda report: report.player.room)
    question_index = 0
    question = factory.LazyAttribute(
        lambda report: report.room.round.entries.get(position=report.question_index).question
    )
    text = "This question is wrong."


class FlagFactory(DjangoModelFactory):
    class Meta:
        model = Flag

    question = factory.SubFactory(QuestionFactory)
    kind = "reported"
    room_code = ""
    detail = factory.LazyFunction(dict)


class GenerationJobFactory(DjangoModelFactory):
    """A job row in any state (queued by default); `generation_job_create`'s refusals are tested on their own."""

    class Meta:
        model = GenerationJob

    owner_key = "k"
    count = 3
    topic = "Birds"


def _reason(verdict) -> str:
    return {VerdictOutcome.DROPPED: "below_threshold", VerdictOutcome.UNVERIFIED: "timeout"}.get(verdict.outcome, "")


class VerdictFactory(DjangoModelFactory):
    """The gate's decision on a question as `verdict_record` stores it: dropped at 0.42 under a 0.6 bar by default."""

    class Meta:
        model = Verdict

    question = factory.SubFactory(QuestionFactory, written=True)
    backend = "systemone"
    model_id = "jev-1.13.0"
    requested_model_id = factory.SelfAttribute("model_id")
    score = 0.42
    threshold = 0.6
    probabilities = factory.LazyAttribute(
        lambda verdict: {} if verdict.score is None else {"answer_correct": verdict.score, "explanation_true": 0.97}
    )
    outcome = VerdictOutcome.DROPPED
    reason = factory.LazyAttribute(_reason)
    latency_ms = 12


class ThresholdFactory(DjangoModelFactory):
    """Through `threshold_set`: a value between 0 and 1, one per backend and model id."""

    class Meta:
        model = Threshold

    backend = "systemone"
    model_id = "jev-1.13.0"
    value = 0.5
    note = ""

    @classmethod
    def _create(cls, model_class, *, updated_by=None, **kwargs):
        return threshold_set(user=updated_by, **kwargs)


class HostUserFactory(DjangoModelFactory):
    """A host's account through `host_sign_up` (its owner key made with it); the password is `password`."""

    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"host{n}")
    password = "correct horse battery"

    @classmethod
    def _create(cls, model_class, *, username, password):
        return host_sign_up(username=username, password=password)
