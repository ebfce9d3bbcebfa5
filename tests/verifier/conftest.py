import pytest

from tests.fakes.fixtures import *  # noqa: F403
from tests.fakes.model_server import ModelServer

TEST_TIMEOUT = 0.5
JUDGE_TIMEOUT = 2.0


@pytest.fixture
def systemone(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_BASE_URL = model_server.url
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_TIMEOUT = TEST_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    model_server.script.expected_api_key = "test-key"
    return model_server


@pytest.fixture
def llm(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "llm"
    settings.VERIFIER_BASE_URL = f"{model_server.url}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "checker-8b-2025-01"
    settings.VERIFIER_TIMEOUT = TEST_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    return model_server


@pytest.fixture
def judge(settings, model_server: ModelServer) -> ModelServer:
    settings.VERIFIER_BACKEND = "judge"
    settings.VERIFIER_BASE_URL = f"{model_server.url}/v1"
    settings.VERIFIER_API_KEY = "test-key"
    settings.VERIFIER_MODEL = "judge-7b-2025-03"
    # Roomier than TEST_TIMEOUT: several judge tests make calls in a row on a shared machine; the deadline
    # tests set their own.
    settings.VERIFIER_TIMEOUT = JUDGE_TIMEOUT
    settings.VERIFIER_CONCURRENCY = 4
    return model_server
