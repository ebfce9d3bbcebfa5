"""The one list of checker backends: every name builds its own class, says what it needs, and every reader
(the settings check, the gate, "Check my questions") follows it."""

import pytest

from verifier import conf, registry
from verifier.checks import verifier_settings_check
from verifier.gate import Gate


def test_every_name_builds_the_backend_of_that_name(settings):
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_BASE_URL = "http://127.0.0.1:9"
    for name in registry.names():
        settings.VERIFIER_BACKEND = name
        assert registry.backend_for(conf.gate_config()).name == name


def test_off_is_the_one_that_checks_nothing():
    assert registry.names()[0] == "off"
    assert registry.checking_names() == tuple(name for name in registry.names() if name != "off")
    assert not registry.gate_enabled("off")
    assert all(registry.gate_enabled(name) for name in registry.checking_names())
    assert not registry.gate_enabled("sytemone")


def test_gate_enabled_reads_the_configured_backend(settings):
    settings.VERIFIER_BACKEND = "judge"
    assert registry.gate_enabled()
    settings.VERIFIER_BACKEND = " Off "
    assert not registry.gate_enabled()


def test_capabilities_are_what_the_gate_acts_on(settings):
    settings.VERIFIER_MODEL = "jev-1.13.0"
    settings.VERIFIER_BLIND = True
    for name in registry.names():
        settings.VERIFIER_BACKEND = name
        gate = Gate(config=conf.gate_config(), threshold=0.6, calibrated=False)
        assert gate.enabled == registry.gate_enabled(name)
        assert gate.blind_enabled == registry.can(name, "blind")
    assert not registry.can("off", "blind") and not registry.can("nonesuch", "grounded")


@pytest.mark.parametrize("name", registry.checking_names())
def test_each_setting_a_backend_needs_is_reported_when_empty(settings, name):
    settings.VERIFIER_BACKEND = name
    settings.VERIFIER_MODEL = ""
    settings.VERIFIER_BASE_URL = ""
    settings.VERIFIER_API_KEY = ""
    messages = [problem.msg for problem in verifier_settings_check()]
    needs = registry.spec_for(name).needs
    assert needs and "VERIFIER_MODEL" in needs
    assert messages == [f"{setting} is empty; every question will pass unverified." for setting in needs]


def test_an_unknown_second_opinion_names_the_ones_that_can(settings):
    settings.VERIFIER_BACKEND = "llm"
    settings.VERIFIER_MODEL = "checker-8b-2025-01"
    settings.VERIFIER_SECOND_OPINION_MODEL = "judge-7b-2025-03"
    settings.VERIFIER_SECOND_OPINION_BACKEND = "off"
    problems = {problem.id: problem.msg for problem in verifier_settings_check()}
    assert problems == {
        "verifier.E004": "VERIFIER_SECOND_OPINION_BACKEND='off' is not one of systemone, llm, judge.",
    }
    settings.VERIFIER_SECOND_OPINION_BACKEND = "judge"
    assert verifier_settings_check() == []
