"""The writer's settings, read at call time (tests override them with `settings`); their defaults are in
config/settings_writer.py, once."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from verifier import conf as gate_conf


def setting(name: str) -> Any:
    # Each default is declared once, in config/settings_writer.py: a missing setting fails loudly here.
    return getattr(settings, name)


def writer_model() -> str:
    return str(setting("QUIZ_WRITER_MODEL") or "").strip()


def writer_configured() -> bool:
    """A model can be reached: a key for OpenAI, or a base URL for any OpenAI-compatible server."""
    return bool(str(setting("OPENAI_API_KEY") or "").strip() or str(setting("OPENAI_BASE_URL") or "").strip())


def is_model_alias(model: str) -> bool:
    """The gate's rule for a moving model name (one rule for both models), plus the ids listed here."""
    name = model.strip().lower()
    listed = {str(alias).strip().lower() for alias in setting("QUIZ_MODEL_ALIASES") or []}
    return gate_conf.is_model_alias(name) or name in listed


def alias_allowed() -> bool:
    value = setting("QUIZ_ALLOW_MODEL_ALIAS")
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def source_max_chars() -> int:
    return int(setting("QUIZ_SOURCE_MAX_CHARS"))


def upload_max_bytes() -> int:
    return int(setting("QUIZ_UPLOAD_MAX_BYTES"))


@dataclass(frozen=True)
class PdfLimits:
    """What reading one uploaded PDF may cost (quiz/generation/uploads.py, quiz/generation/pdf_text.py)."""

    max_pages: int
    max_unpacked_bytes: int
    max_memory_bytes: int
    timeout: float


def pdf_limits() -> PdfLimits:
    return PdfLimits(
        max_pages=int(setting("QUIZ_PDF_MAX_PAGES")),
        max_unpacked_bytes=int(setting("QUIZ_PDF_MAX_UNPACKED_BYTES")),
        max_memory_bytes=int(setting("QUIZ_PDF_MAX_MEMORY_BYTES")),
        timeout=float(setting("QUIZ_PDF_TIMEOUT")),
    )


@dataclass(frozen=True)
class WriterConfig:
    """One snapshot of the settings, taken (sync) when a job starts, used by the async writer."""

    base_url: str
    api_key: str
    model: str
    max_attempts: int
    # Seconds each attempt may take (QUIZ_WRITER_TIMEOUT), and all attempts together (QUIZ_WRITER_JOB_BUDGET).
    timeout: float
    job_budget: float
    max_tokens: int
    max_reply_bytes: int
    # Ask for ceil(over_ask × N) with the gate on (quiz/generation/over_ask.py); a job may set it from the data.
    over_ask: float = 1.5
    # Seconds a failing server is retried once some questions are ready to play (QUIZ_WRITER_GIVE_UP_SECONDS).
    give_up_seconds: float = 5.0


def writer_config() -> WriterConfig:
    return WriterConfig(
        base_url=str(setting("OPENAI_BASE_URL") or "").strip().rstrip("/"),
        api_key=str(setting("OPENAI_API_KEY") or "").strip(),
        model=writer_model(),
        max_attempts=max(1, int(setting("QUIZ_MAX_ATTEMPTS"))),
        timeout=float(setting("QUIZ_WRITER_TIMEOUT")),
        job_budget=float(setting("QUIZ_WRITER_JOB_BUDGET")),
        max_tokens=int(setting("QUIZ_WRITER_MAX_TOKENS")),
        max_reply_bytes=int(setting("QUIZ_WRITER_MAX_REPLY_BYTES")),
        give_up_seconds=float(setting("QUIZ_WRITER_GIVE_UP_SECONDS")),
    )


def stale_after_seconds() -> float:
    """A running job whose heartbeat is older than this has lost its worker."""
    return float(setting("QUIZ_JOB_STALE_SECONDS"))


CELERY_RUNNER = "quiz.generation.runner.generation_start_on_celery"


def jobs_taken_over() -> bool:
    """Jobs run on Celery workers, which take over a job whose worker died (quiz/tasks.py)."""
    return setting("QUIZ_GENERATION_RUNNER") == CELERY_RUNNER
