import pytest

from tests.fakes.writer_server import *  # noqa: F403
from tests.fakes.writer_server import WriterServer
from tests.quiz import generation
from tests.quiz.generation import RECORDING_RUNNER, WRITER_MODEL


@pytest.fixture
def writer(settings, writer_server: WriterServer) -> WriterServer:
    settings.OPENAI_BASE_URL = f"{writer_server.url}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.QUIZ_WRITER_MODEL = WRITER_MODEL
    settings.QUIZ_WRITER_TIMEOUT = 10.0
    settings.QUIZ_MAX_ATTEMPTS = 3
    settings.VERIFIER_BACKEND = "off"
    return writer_server


@pytest.fixture
def gate_on(settings, writer: WriterServer) -> WriterServer:
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = writer.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = 10.0  # roomy: the checker answers at once; its deadline is not the subject here
    settings.VERIFIER_CONCURRENCY = 4
    return writer


@pytest.fixture
def started_jobs(settings) -> list[int]:
    """The ids of the generation jobs started during the test, in order; none of them runs."""
    settings.QUIZ_GENERATION_RUNNER = RECORDING_RUNNER
    generation.started.clear()
    return generation.started
