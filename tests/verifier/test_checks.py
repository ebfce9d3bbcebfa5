import pytest
from django.core.exceptions import ImproperlyConfigured

from verifier.checks import refuse_model_alias, verifier_settings_check


@pytest.mark.parametrize("model", ["jev-latest", "speed_latest", "gpt-4o-LATEST"])
def test_alias_model_id_is_refused_at_start_up(settings, model):
    settings.VERIFIER_BACKEND = "systemone"
    settings.VERIFIER_MODEL = model
    with pytest.raises(ImproperlyConfigured, match="Pin an exact model version"):
        refuse_model_alias()
    assert "verifier.E002" in [problem.id for problem in verifier_settings_check()]


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
