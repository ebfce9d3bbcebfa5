"""Configuration checks: a model alias is refused at start-up, an id with no date or version is a warning the
operator acknowledges, a half-configured backend is reported."""

import logging

from django.core.checks import Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from verifier import conf, registry

# The warning each unset setting a backend needs gets (registry.BackendSpec.needs).
_UNSET_WARNINGS = {
    "VERIFIER_MODEL": "verifier.W001",
    "VERIFIER_BASE_URL": "verifier.W002",
    "VERIFIER_API_KEY": "verifier.W003",
}

logger = logging.getLogger("verifier")
UNPINNED_ID = "verifier.W004"


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


def unpinned_model_warning() -> str | None:
    """The warning for a checker model id that names no dated snapshot or version, unless the operator has
    acknowledged it (VERIFIER_ALLOW_UNPINNED_MODEL, or VERIFIER_ALLOW_MODEL_ALIAS, which accepts more)."""
    backend = conf.backend_name()
    model = conf.model_id()
    if not registry.gate_enabled(backend) or not model or conf.is_pinned_version(model):
        return None
    if conf.is_model_alias(model) or conf.allow_unpinned_model() or conf.allow_model_alias():
        return None  # a moving alias is refused outright (E002); an acknowledged id says nothing more
    return (
        f"VERIFIER_MODEL={model!r} names no dated snapshot or version, so its server can re-point it to other "
        "weights under the same name (as with 'gpt-4o', 'model-v2' or 'llama3:8b'), and the stored threshold "
        "would then judge another model. Pin an id with a date (2024-08-06, 20240806 or 2025-01) or a full "
        "version (1.13.0)."
    )


def refuse_model_alias() -> None:
    """Raise at start-up; ASGI servers and Celery workers do not run system checks (they log the warning)."""
    message = model_alias_error()
    if message:
        raise ImproperlyConfigured(message)
    warning = unpinned_model_warning()
    if warning:
        logger.warning("%s Acknowledge it with VERIFIER_ALLOW_UNPINNED_MODEL=1.", warning)


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
    unpinned = unpinned_model_warning()
    if unpinned:
        problems.append(
            Warning(
                unpinned,
                hint=f"Set VERIFIER_ALLOW_UNPINNED_MODEL=1 (or add {UNPINNED_ID!r} to SILENCED_SYSTEM_CHECKS) to "
                "accept it.",
                id=UNPINNED_ID,
            )
        )
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
