import pytest

from quiz.exceptions import QuizError
from quiz.jobs.checks import check_generation_runner, check_writer_deadlines, check_writer_model
from tests.quiz.generation import WRITER_MODEL
from tests.support.model_ids import MOVING, PINNED, UNVERSIONED


@pytest.fixture
def writer_configured(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.QUIZ_ALLOW_MODEL_ALIAS = False
    settings.QUIZ_MODEL_ALIASES = []


@pytest.mark.parametrize("model", MOVING)
def test_a_moving_writer_model_is_refused(writer_configured, settings, model):
    settings.QUIZ_WRITER_MODEL = model
    errors = check_writer_model()
    assert [error.id for error in errors] == ["quiz.E001"]
    assert "QUIZ_ALLOW_MODEL_ALIAS=1" in errors[0].msg
    settings.QUIZ_ALLOW_MODEL_ALIAS = True
    assert check_writer_model() == []


@pytest.mark.parametrize("model", PINNED + UNVERSIONED)
def test_a_pinned_writer_model_is_accepted(writer_configured, settings, model):
    settings.QUIZ_WRITER_MODEL = model
    assert check_writer_model() == []


@pytest.mark.django_db
@pytest.mark.parametrize("model", ["jev-stable", "llama3:latest", "default"])
def test_a_moving_writer_model_refuses_to_start_a_job(writer_configured, settings, model):
    from quiz.generation.jobs import generation_job_create

    settings.QUIZ_WRITER_MODEL = model
    with pytest.raises(QuizError, match="alias that can change without notice"):
        generation_job_create(owner_key="k", count=5, topic="Cats")


def test_an_alias_model_id_is_refused(writer, settings):
    settings.QUIZ_WRITER_MODEL = "gpt-4o-latest"
    errors = check_writer_model()
    assert [error.id for error in errors] == ["quiz.E001"]
    assert "QUIZ_ALLOW_MODEL_ALIAS" in errors[0].msg
    settings.QUIZ_WRITER_MODEL = "my-model"
    settings.QUIZ_MODEL_ALIASES = ["my-model"]
    assert [error.id for error in check_writer_model()] == ["quiz.E001"]
    settings.QUIZ_ALLOW_MODEL_ALIAS = True
    assert check_writer_model() == []
    settings.QUIZ_ALLOW_MODEL_ALIAS = False
    settings.QUIZ_WRITER_MODEL = WRITER_MODEL
    assert check_writer_model() == []


@pytest.mark.parametrize(
    "path",
    [
        "quiz.generation.runner.generation_start_nowhere",
        "no_such_module.start",
        "quiz.generation.prompts.SYSTEM_PROMPT",
    ],
)
def test_a_generation_runner_that_is_not_a_function_is_refused_at_start_up(settings, path):
    settings.QUIZ_GENERATION_RUNNER = path
    errors = check_generation_runner()
    assert [error.id for error in errors] == ["quiz.E002"] and path in errors[0].msg


@pytest.mark.parametrize(
    "path", ["quiz.generation.runner.generation_start_on_celery", "quiz.generation.runner.generation_start_in_process"]
)
def test_the_shipped_generation_runners_are_accepted(settings, path):
    settings.QUIZ_GENERATION_RUNNER = path
    assert check_generation_runner() == []


def test_the_writers_deadlines_must_be_positive(settings):
    assert check_writer_deadlines() == []
    settings.QUIZ_WRITER_JOB_BUDGET = 0
    errors = check_writer_deadlines()
    assert [error.id for error in errors] == ["quiz.E003"]
    assert errors[0].msg == "QUIZ_WRITER_JOB_BUDGET=0: the writer's deadlines must be positive seconds."
    settings.QUIZ_WRITER_TIMEOUT = -1.0
    assert "QUIZ_WRITER_TIMEOUT=-1.0 and QUIZ_WRITER_JOB_BUDGET=0" in check_writer_deadlines()[0].msg
