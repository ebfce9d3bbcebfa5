"""The checker backends, named once: each name's class, the settings it needs, and what it can do.

Every reader of "which backends are there" asks here: the settings check (verifier/checks.py), the backend a
round's gate builds (`backend_for`), whether the gate checks at all (`gate_enabled`, which the gate, the breaker,
"Check my questions" and the bench use), and whether a backend can answer the blind question. A new backend is
one module under verifier/backends/ and one entry in BACKENDS.

A class is named by its dotted path and imported when first built, so reading the registry (a page asking
whether the checker is on) does not load the openai SDK.
"""

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from verifier import conf

if TYPE_CHECKING:
    from verifier.backends.base import Backend

OFF = "off"


@dataclass(frozen=True)
class BackendSpec:
    name: str
    # "module:Class", imported by `backend_class` when a gate first builds one.
    path: str
    # The settings that must be set for it to check anything (an empty one: every question passes unverified).
    needs: tuple[str, ...] = ()
    # Whether it calls a checker at all (`off` does not: every question is labelled unchecked).
    checks: bool = True
    # Whether it can answer the blind question (which option is right, without the marked one).
    blind: bool = False
    # Whether it can be asked for the second opinion on the borderline (VERIFIER_SECOND_OPINION_BACKEND).
    second_opinion: bool = False
    # Whether it can judge a question against its source text (a round written from a document).
    grounded: bool = False


BACKENDS: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec(name=OFF, path="verifier.backends.off:OffBackend", checks=False),
        BackendSpec(
            name="systemone",
            path="verifier.backends.systemone:SystemOneBackend",
            needs=("VERIFIER_MODEL", "VERIFIER_BASE_URL", "VERIFIER_API_KEY"),
            blind=True,
            second_opinion=True,
            grounded=True,
        ),
        BackendSpec(
            name="llm",
            path="verifier.backends.llm:LlmBackend",
            needs=("VERIFIER_MODEL",),
            blind=True,
            second_opinion=True,
            grounded=True,
        ),
        BackendSpec(
            name="judge",
            path="verifier.backends.judge:JudgeBackend",
            needs=("VERIFIER_MODEL",),
            blind=True,
            second_opinion=True,
            grounded=True,
        ),
    )
}


def names() -> tuple[str, ...]:
    """Every value VERIFIER_BACKEND takes, `off` first."""
    return tuple(BACKENDS)


def checking_names() -> tuple[str, ...]:
    """The backends that call a checker (every one but `off`)."""
    return tuple(name for name, spec in BACKENDS.items() if spec.checks)


def second_opinion_names() -> tuple[str, ...]:
    return tuple(name for name, spec in BACKENDS.items() if spec.second_opinion)


def spec_for(name: str) -> BackendSpec | None:
    return BACKENDS.get(name)


def gate_enabled(backend: str | None = None) -> bool:
    """Whether the gate checks questions: the named backend (the configured VERIFIER_BACKEND when None) is a
    known one that calls a checker."""
    spec = spec_for(conf.backend_name() if backend is None else backend)
    return spec is not None and spec.checks


def can(backend: str, capability: str) -> bool:
    """Whether `backend` can do `capability` ("blind", "second_opinion" or "grounded"); an unknown name can't."""
    spec = spec_for(backend)
    return spec is not None and spec.checks and bool(getattr(spec, capability))


def backend_class(name: str) -> "type[Backend]":
    """The class of a backend by name; an unknown name is `off`'s (the settings check has said so at start-up)."""
    spec = spec_for(name) or BACKENDS[OFF]
    module, _, attribute = spec.path.partition(":")
    return getattr(import_module(module), attribute)


def backend_for(config: conf.GateConfig) -> "Backend":
    return backend_class(config.backend)(config)
