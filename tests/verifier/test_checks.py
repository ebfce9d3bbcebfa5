import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from tests.support.model_ids import MOVING, PINNED, UNVERSIONED
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


def _check(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _start(**env: str) -> subprocess.CompletedProcess:
    return _check(**env)


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


# --- an id with no date or version ---------------------------------------------------------------------------


def _configured(settings, backend: str, model: str) -> None:
    settings.VERIFIER_BACKEND = backend
    settings.VERIFIER_MODEL = model
    settings.VERIFIER_BASE_URL = "https://api.example.test"
    settings.VERIFIER_API_KEY = "key"


@pytest.mark.parametrize("model", UNVERSIONED)
@pytest.mark.parametrize("backend", ["systemone", "llm", "judge"])
def test_an_id_with_no_date_or_version_is_a_warning_until_acknowledged(settings, backend, model):
    _configured(settings, backend, model)
    problems = verifier_settings_check()
    assert [(problem.id, problem.level) for problem in problems] == [("verifier.W004", checks.WARNING)]
    assert repr(model) in problems[0].msg and "2024-08-06" in problems[0].msg
    assert "VERIFIER_ALLOW_UNPINNED_MODEL=1" in problems[0].hint
    settings.VERIFIER_ALLOW_UNPINNED_MODEL = True
    assert verifier_settings_check() == []


def test_the_warning_can_be_silenced_like_any_system_check(settings):
    _configured(settings, "llm", "gpt-4o")
    assert "verifier.W004" in [problem.id for problem in checks.run_checks()]
    settings.SILENCED_SYSTEM_CHECKS = ["verifier.W004"]
    assert "verifier.W004" not in [problem.id for problem in checks.run_checks() if not problem.is_silenced()]


def test_an_unversioned_id_is_logged_at_start_up_where_no_checks_run(settings, caplog):
    _configured(settings, "llm", "llama3:8b")
    with caplog.at_level(logging.WARNING, logger="verifier"):
        refuse_model_alias()  # starts: a warning, not a refusal
    assert [r.levelno for r in caplog.records if "'llama3:8b' names no dated snapshot" in r.getMessage()] == [
        logging.WARNING
    ]
    caplog.clear()
    settings.VERIFIER_ALLOW_UNPINNED_MODEL = True
    with caplog.at_level(logging.WARNING, logger="verifier"):
        refuse_model_alias()
    assert caplog.records == []


def test_manage_py_check_fails_on_the_warning_at_warning_level_until_acknowledged():
    gate = {"VERIFIER_BACKEND": "llm", "VERIFIER_MODEL": "gpt-4o", "VERIFIER_BASE_URL": "http://127.0.0.1:9"}
    warned = _start(**gate)
    assert warned.returncode == 0  # a warning, not a refusal: the process starts
    assert "verifier.W004" in warned.stderr and "'gpt-4o' names no dated snapshot or version" in warned.stderr
    strict = _check("--fail-level", "WARNING", **gate)
    assert strict.returncode != 0
    acknowledged = _check("--fail-level", "WARNING", **gate, VERIFIER_ALLOW_UNPINNED_MODEL="1")
    assert acknowledged.returncode == 0, acknowledged.stderr
    assert "verifier.W004" not in acknowledged.stderr
