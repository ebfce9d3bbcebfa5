"""Configuration checks: a model alias is refused at start-up, a half-configured backend is reported."""

from django.core.checks import Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from verifier import conf, registry

# The warning each unset setting a backend needs gets (registry.BackendSpec.needs).
_UNSET_WARNINGS = {
    "VERIFIER_MODEL": "verifier.W001",
    "VERIFIER_BASE_URL": "verifier.W002",
    "VERIFIER_API_KEY": "verifier.W003",
}


def model_alias_error() -> str | None:
    backend = conf.backend_name()
    model = conf.model_id()
    if registry.gate_enabled(backend) and conf.is_model_alias(model) and not conf.allow_model_alias():
        return (
            f"VERIFIER_MODEL={model!r} is a moving alias: a name like latest, stable, current or default, or one "
            "with no version number, can point at another model any day. Pin an exact model version "
            "(e.g. 'jev-1.13.0'): every threshold belongs to one model version. "
            "Set VERIFIER_ALLOW_MODEL_ALIAS=1 to accept it anyway."
        )
    return None


def refuse_model_alias() -> None:
    """Raise at start-up; ASGI servers and Celery workers do not run system checks."""
    message = model_alias_error()
    if message:
        raise ImproperlyConfigured(message)


@register()
def verifier_settings_check(app_configs=None, **kwargs) -> list:
    problems: list = []
    backend = conf.backend_name()
    spec = registry.spec_for(backend)
    if spec is None:
        problems.append(
            Error(
                f"VERIFIER_BACKEND={backend!r} is not one of {', '.join(registry.names())}.",
                hint="Nothing will be checked until it is fixed.",
                id="verifier.E001",
            )
        )
        return problems
    alias = model_alias_error()
    if alias:
        problems.append(Error(alias, id="verifier.E002"))
    if not spec.checks:
        return problems
    for name in spec.needs:
        if not str(conf.setting(name) or "").strip():
            problems.append(Warning(f"{name} is empty; every question will pass unverified.", id=_UNSET_WARNINGS[name]))
    if conf.second_opinion_model() and not registry.can(conf.second_opinion_backend(), "second_opinion"):
        problems.append(
            Error(
                f"VERIFIER_SECOND_OPINION_BACKEND={conf.second_opinion_backend()!r} is not one of "
                f"{', '.join(registry.second_opinion_names())}.",
                hint="The borderline would get no second opinion.",
                id="verifier.E004",
            )
        )
    if conf.timeout() <= 0 or int(conf.setting("VERIFIER_CONCURRENCY")) < 1:
        problems.append(Error("VERIFIER_TIMEOUT must be > 0 and VERIFIER_CONCURRENCY >= 1.", id="verifier.E003"))
    return problems
