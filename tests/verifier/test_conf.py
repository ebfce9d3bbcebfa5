"""The gate's settings have one default each, in config/settings_checker.py; verifier/conf.py only reads them."""

import pytest

from verifier import conf


def test_the_shipped_defaults_come_from_the_settings_module():
    config = conf.gate_config()
    assert (config.backend, config.timeout, config.concurrency, config.default_threshold) == ("off", 6.0, 4, 0.6)
    assert (config.blind, config.blind_disagree, config.breaker_failures, config.breaker_cooldown) == (
        True,
        0.5,
        5,
        30.0,
    )
    assert conf.grounded_bounds() == conf.GroundedBounds(
        supported_min=0.85, answers_question_min=0.80, unsupported_detail_max=0.15, contradiction_max=0.10
    )
    assert (conf.crowd_min_answers(), conf.crowd_majority(), conf.sweep_min_labels()) == (5, 0.6, 10)


def test_a_setting_overridden_is_what_the_gate_reads(settings):
    settings.VERIFIER_BLIND_DISAGREE = 0.7
    settings.VERIFIER_SUPPORTED_MIN = 0.9
    assert conf.gate_config().blind_disagree == 0.7
    assert conf.grounded_bounds().supported_min == 0.9


def test_no_second_default_hides_a_missing_setting(settings):
    del settings.VERIFIER_BREAKER_COOLDOWN
    with pytest.raises(AttributeError):
        conf.breaker_cooldown()
