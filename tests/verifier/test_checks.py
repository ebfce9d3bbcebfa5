import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.support.model_ids import MOVING, PINNED
from verifier.checks import refuse_model_alias, verifier_settings_check

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model", ["jev-latest", *MOVING])
def test_alias_model_id_is_refused_at_start_up(settings, model):
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_MODEL = model
    with pytest.raises(ImproperlyConfigured, match="Pin an exact model version"):
        refuse_model_alias()
    assert "verifier.E002" in [problem.id for problem in verifier_settings_check()]


@pytest.mark.parametrize("model", PINNED)
@pytest.mark.parametrize("backend", ["systemone", "llm"])
def test_a_pinned_model_id_starts(settings, backend, model):
    settings.VERIFIER_BACKEND = backend
    settings.VERIFIER_MODEL = model
    settings.VERIFIER_BASE_URL = "https://api.example.test"
    settings.VERIFIER_API_KEY = "key"
    refuse_model_alias()
    assert verifier_settings_check() == []


def _start(**env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )


def test_the_process_refuses_to_start_with_a_moving_name_unless_allowed():
    gate = {"VERIFIER_BACKEND": "llm", "VERIFIER_MODEL": "jev-stable", "VERIFIER_BASE_URL": "http://127.0.0.1:9"}
    refused = _start(**gate)
    assert refused.returncode != 0
    assert "ImproperlyConfigured: VERIFIER_MODEL='jev-stable' is a moving alias" in refused.stderr
    assert "VERIFIER_ALLOW_MODEL_ALIAS=1" in refused.stderr
    assert _start(**gate, VERIFIER_ALLOW_MODEL_ALIAS="1").returncode == 0


def test_alias_allowed_when_asked(settings):
    settings.VERIFIER_BACKEND = "llm"
    settings.VERIFIER_MODEL = "jev-latest"
    settings.VERIFIER_ALLOW_MODEL_ALIAS = True
    refuse_model_alias()
    assert verifier_settings_check() == []


def test_pinned_model_id_is_accepted(settings):
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_BASE_URL = "https://api.example.test"
    settings.VERIFIER_API_KEY = "key"
    refuse_model_alias()
    assert verifier_settings_check() == []


def test_alias_is_irrelevant_when_the_gate_is_off(settings):
    settings.VERIFIER_BACKEND = "off"
    settings.VERIFIER_MODEL = "jev-latest"
    refuse_model_alias()
    assert verifier_settings_check() == []


def test_unknown_backend_is_an_error(settings):
    settings.VERIFIER_BACKEND = "sytemone"
    assert [problem.id for problem in verifier_settings_check()] == ["verifier.E001"]


def test_half_configured_systemone_is_reported(settings):
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_MODEL = ""
    settings.VERIFIER_BASE_URL = ""
    settings.VERIFIER_API_KEY = ""
    assert [problem.id for problem in verifier_settings_check()] == ["verifier.W001", "verifier.W002", "verifier.W003"]
