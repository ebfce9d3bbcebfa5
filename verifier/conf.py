"""The gate's settings, read at call time so tests can override them. Their defaults live in
config/settings_checker.py."""

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from core.cost import Price, prices_parse
from verifier.policy import GroundedBounds


def setting(name: str) -> Any:
    # Every default is declared once, in config/settings_checker.py (the one env reader, the README's settings table):
    # a name missing there is a programming error, not something to paper over with a second default here.
    return getattr(settings, name)


def backend_name() -> str:
    return str(setting("VERIFIER_BACKEND") or "off").strip().lower()


def model_id() -> str:
    return str(setting("VERIFIER_MODEL") or "").strip()


def api_key() -> str:
    return str(setting("VERIFIER_API_KEY") or "")


def base_url() -> str:
    return str(setting("VERIFIER_BASE_URL") or "").strip().rstrip("/")


def timeout() -> float:
    return float(setting("VERIFIER_TIMEOUT"))


def concurrency() -> int:
    return max(1, int(setting("VERIFIER_CONCURRENCY")))


def document_field() -> str:
    return str(setting("VERIFIER_DOCUMENT_FIELD") or "document")


def allow_model_alias() -> bool:
    return bool(setting("VERIFIER_ALLOW_MODEL_ALIAS"))


def allow_unpinned_model() -> bool:
    return bool(setting("VERIFIER_ALLOW_UNPINNED_MODEL"))


def max_body_bytes() -> int:
    return int(setting("VERIFIER_MAX_BODY_BYTES"))


def yes_no_floor() -> float:
    return float(setting("VERIFIER_YES_NO_FLOOR"))


# The judge's completion limit when VERIFIER_JUDGE_MAX_TOKENS is 0: a report is one short JSON object (about 100
# tokens); a reasoning model thinks first, and its thinking counts against the limit.
JUDGE_REPORT_TOKENS = 512
JUDGE_REASONING_TOKENS = 4096
# Parts of a model id that name a reasoning model (the id split at every non-alphanumeric, lowercased).
REASONING_PARTS = frozenset({"o1", "o3", "o4", "r1", "qwq", "reason", "reasoner", "reasoning", "think", "thinking"})


def is_reasoning_model(model: str) -> bool:
    """VERIFIER_JUDGE_REASONING true/false; "auto": whether the model id looks like a reasoning model's
    (o1-2024-12-17, deepseek-r1, qwq-32b, gpt-5-mini, a "...-thinking" or "...-reasoning" model)."""
    said = str(setting("VERIFIER_JUDGE_REASONING") or "auto").strip().lower()
    if said in ("1", "true", "yes", "on"):
        return True
    if said in ("0", "false", "no", "off"):
        return False
    name = model.strip().lower()
    parts = set(re.split(r"[^a-z0-9]+", name))
    return bool(REASONING_PARTS & parts) or name.startswith("gpt-5")


def judge_max_tokens(model: str | None = None) -> int:
    """The judge's completion limit: VERIFIER_JUDGE_MAX_TOKENS when set (above 0), else 512 for a report, or 4096
    when the judge's model (`model`, VERIFIER_MODEL by default) is a reasoning model (is_reasoning_model)."""
    value = int(setting("VERIFIER_JUDGE_MAX_TOKENS") or 0)
    if value > 0:
        return value
    reasoning = is_reasoning_model(model_id() if model is None else model)
    return JUDGE_REASONING_TOKENS if reasoning else JUDGE_REPORT_TOKENS


def model_prices() -> dict[str, Price]:
    """MODEL_PRICES, parsed at start-up (config/settings_writer.py); a string set later (a test) is parsed here."""
    prices = getattr(settings, "MODEL_PRICES", None) or {}
    return prices_parse(prices) if isinstance(prices, str) else dict(prices)


def default_threshold() -> float:
    return float(setting("VERIFIER_DEFAULT_THRESHOLD"))


def blind() -> bool:
    return bool(setting("VERIFIER_BLIND"))


def blind_disagree() -> float:
    return float(setting("VERIFIER_BLIND_DISAGREE"))


def blind_orders() -> int:
    return min(2, max(1, int(setting("VERIFIER_BLIND_ORDERS"))))


def blind_seed() -> str:
    return str(setting("VERIFIER_BLIND_SEED") or "")


def second_opinion_backend() -> str:
    return str(setting("VERIFIER_SECOND_OPINION_BACKEND") or "llm").strip().lower()


def second_opinion_model() -> str:
    return str(setting("VERIFIER_SECOND_OPINION_MODEL") or "").strip()


def second_opinion_base_url() -> str:
    return str(setting("VERIFIER_SECOND_OPINION_BASE_URL") or "").strip().rstrip("/")


def second_opinion_api_key() -> str:
    return str(setting("VERIFIER_SECOND_OPINION_API_KEY") or "")


def second_opinion_band() -> float:
    return max(0.0, float(setting("VERIFIER_SECOND_OPINION_BAND")))


def second_opinion_timeout() -> float:
    return float(setting("VERIFIER_SECOND_OPINION_TIMEOUT"))


def breaker_failures() -> int:
    return max(1, int(setting("VERIFIER_BREAKER_FAILURES")))


def breaker_cooldown() -> float:
    return max(0.0, float(setting("VERIFIER_BREAKER_COOLDOWN")))


def crowd_min_answers() -> int:
    return max(1, int(setting("CROWD_MIN_ANSWERS")))


def crowd_majority() -> float:
    return float(setting("CROWD_MAJORITY"))


def sweep_min_labels() -> int:
    return int(setting("VERIFIER_SWEEP_MIN_LABELS"))


def grounded_bounds() -> GroundedBounds:
    return GroundedBounds(
        supported_min=float(setting("VERIFIER_SUPPORTED_MIN")),
        answers_question_min=float(setting("VERIFIER_ANSWERS_QUESTION_MIN")),
        unsupported_detail_max=float(setting("VERIFIER_UNSUPPORTED_DETAIL_MAX")),
        contradiction_max=float(setting("VERIFIER_CONTRADICTION_MAX")),
    )


@dataclass(frozen=True)
class GateConfig:
    """One snapshot of the settings, taken when a round starts (sync), used by the async part."""

    backend: str
    model_id: str
    api_key: str
    base_url: str
    timeout: float
    concurrency: int
    document_field: str
    max_body_bytes: int
    default_threshold: float
    grounded_bounds: GroundedBounds
    blind: bool
    blind_disagree: float
    breaker_failures: int
    breaker_cooldown: float
    yes_no_floor: float
    judge_max_tokens: int
    blind_orders: int
    blind_seed: str
    # The judge asked about the borderline (None: no second opinion), and how near the threshold "borderline" is.
    second_opinion: "GateConfig | None"
    second_opinion_band: float
    # MODEL_PRICES: what each model's tokens cost (core/cost.py).
    prices: dict[str, Price] = field(default_factory=dict)


def second_opinion_config(first: GateConfig) -> GateConfig | None:
    """The second opinion's own backend config (its model, URL, key and deadline), or None when no model is set."""
    model = second_opinion_model()
    if not model:
        return None
    return replace(
        first,
        backend=second_opinion_backend(),
        model_id=model,
        base_url=second_opinion_base_url(),
        api_key=second_opinion_api_key(),
        timeout=second_opinion_timeout(),
        judge_max_tokens=judge_max_tokens(model),
        second_opinion=None,
        second_opinion_band=0.0,
    )


def gate_config() -> GateConfig:
    first = _first_config()
    return replace(first, second_opinion=second_opinion_config(first))


def _first_config() -> GateConfig:
    return GateConfig(
        backend=backend_name(),
        model_id=model_id(),
        api_key=api_key(),
        base_url=base_url(),
        timeout=timeout(),
        concurrency=concurrency(),
        document_field=document_field(),
        max_body_bytes=max_body_bytes(),
        default_threshold=default_threshold(),
        grounded_bounds=grounded_bounds(),
        blind=blind(),
        blind_disagree=blind_disagree(),
        breaker_failures=breaker_failures(),
        breaker_cooldown=breaker_cooldown(),
        yes_no_floor=yes_no_floor(),
        judge_max_tokens=judge_max_tokens(),
        blind_orders=blind_orders(),
        blind_seed=blind_seed(),
        second_opinion=None,
        second_opinion_band=second_opinion_band(),
        prices=model_prices(),
    )


# Words that name whichever version a server calls current today ("gpt-4o-latest", "llama3:latest", "jev-stable").
MOVING_WORDS = frozenset({"latest", "stable", "current", "default"})


def is_model_alias(model: str) -> bool:
    """A name that can move to another model: every threshold belongs to one model version, and a moving name
    would move it silently. Moving: a moving word as a part of the id (split at any non-alphanumeric, so `:latest`
    tags count too), an id ending in "latest", or an id with no digit at all ("jev", "default"), which cannot
    name a version. The empty id is not an alias: it is "not configured"."""
    name = model.strip().lower()
    if not name:
        return False
    if not any(char.isdigit() for char in name):
        return True
    return name.endswith("latest") or bool(MOVING_WORDS.intersection(re.split(r"[^a-z0-9]+", name)))


# What pins an id to one model version: a date as a part of it (2024-08-06, 20240806, or a monthly 2025-01), or a
# full version x.y.z (optionally v-prefixed). Digits alone do not: `gpt-4o`, `model-v2`, `llama3:8b` and
# `qwen2.5:0.5b` name a family or a size, which their servers re-point to newer weights without a new id.
_DATED = re.compile(
    r"(?<![0-9])(?:19|20)[0-9]{2}"
    r"(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12][0-9]|3[01]))?|(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]))"
    r"(?![0-9])"
)
_VERSIONED = re.compile(r"(?<![0-9a-z.])v?[0-9]+\.[0-9]+\.[0-9]+(?![0-9.])")


def is_pinned_version(model: str) -> bool:
    """Whether the id names one model version: a date or a full x.y.z version as a part of it (see _DATED)."""
    name = model.strip().lower()
    return bool(_DATED.search(name) or _VERSIONED.search(name))


_mismatches_warned: set[tuple[str, str, str]] = set()


def model_mismatch_warn_once(*, logger: logging.Logger, who: str, pinned: str, served: str, consequence: str) -> None:
    """A server answered as another model than the one pinned: a WARNING once per process and (who, pinned,
    served), however many rounds see it. The gate and the writer both say it this way."""
    if (who, pinned, served) in _mismatches_warned:
        return
    _mismatches_warned.add((who, pinned, served))
    logger.warning("%s was asked for %r and served %r; %s", who, pinned, served, consequence)


def model_mismatch_warnings_forget() -> None:
    """Forget which mismatches this process has warned about (a test that looks for the warning needs that)."""
    _mismatches_warned.clear()
