import pytest

from tests.fakes.fixtures import *  # noqa: F403
from tests.fakes.model_server import ModelServer
from tests.verifier.helpers import items

# The deadline a test sets when the deadline is its subject (a slow or hanging checker cut there).
TEST_TIMEOUT = 0.5
# Every other test's deadline: roomy, so a call that must succeed does on a loaded machine (two CPU burners and
# a browser build beside the suite); what a test measures it measures against a baseline of its own run.
ROOMY_TIMEOUT = 10.0
JUDGE_TIMEOUT = ROOMY_TIMEOUT


@pytest.fixture
def systemone(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = model_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = ROOMY_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    model_server.script.expected_api_key = "test-key"
    return model_server


@pytest.fixture
def llm(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "llm"
    settings.VERIFIER_BASE_URL = f"{model_server.url}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "checker-8b-2025-01"
    settings.VERIFIER_TIMEOUT = ROOMY_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    return model_server


@pytest.fixture
def judge(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "judge"
    settings.VERIFIER_BASE_URL = f"{model_server.url}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "judge-7b-2025-03"
    settings.VERIFIER_TIMEOUT = JUDGE_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    # The judge backend sends a round's first call alone while it learns the server's reply format, so a blind call
    # can go first with the report that shows the marked option waiting behind it. The unscripted blind checker (one
    # that knows the right option wherever it is shown) is told the helpers' items' right options up front instead:
    # left to wait for the report, it ran out its wait and answered by position in about one run in ten.
    model_server.marked.update({one.text: one.options[one.correct_index] for one in items(100)})
    return model_server
