"""Start-up checks: a writer model id must be pinned to one version; the generation runner must exist; the
writer's deadlines must be positive; the broker's redelivery of a task must come after a dead worker's job is
taken over. `manage.py check` and `migrate` (so `make serve`) run them; a Celery worker runs the last at start-up
too (config/celery_app.py), since it is the one that would drop the task."""

from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from quiz.jobs import conf


def model_pin_problem() -> str:
    """Why the configured writer model cannot be used, or "" when it can."""
    model = conf.writer_model()
    if not model:
        return "QUIZ_WRITER_MODEL is empty: set it to a dated model id." if conf.writer_configured() else ""
    if conf.is_model_alias(model) and not conf.alias_allowed():
        return (
            f"QUIZ_WRITER_MODEL={model!r} is an alias that can change without notice (a name like latest, stable, "
            "current or default, or one with no version number), and every checker threshold belongs to one "
            "model version. Set a pinned id (a dated snapshot), or QUIZ_ALLOW_MODEL_ALIAS=1 to accept the drift."
        )
    return ""


@checks.register()
def check_writer_model(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    problem = model_pin_problem()
    if not problem:
        return []
    return [checks.Error(problem, hint="Pin the writer model in the environment.", id="quiz.E001")]


@checks.register()
def check_generation_runner(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    # Found at start-up rather than when the first host asks for a round.
    path = settings.QUIZ_GENERATION_RUNNER
    try:
        runner = import_string(path)
    except ImportError as error:
        problem = f"QUIZ_GENERATION_RUNNER={path!r} cannot be imported ({error})."
    else:
        if callable(runner):
            return []
        problem = f"QUIZ_GENERATION_RUNNER={path!r} is not a function."
    hint = (
        "Unset it, or name quiz.generation.runner.generation_start_on_celery or "
        "quiz.generation.runner.generation_start_in_process."
    )
    return [checks.Error(problem, hint=hint, id="quiz.E002")]


@checks.register()
def check_writer_deadlines(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    # Zero or less would fail every round at its first request, with a "too slow" no model deserved.
    wrong = [
        f"{name}={getattr(settings, name)!r}"
        for name in ("QUIZ_WRITER_TIMEOUT", "QUIZ_WRITER_JOB_BUDGET")
        if not float(getattr(settings, name)) > 0
    ]
    if not wrong:
        return []
    return [
        checks.Error(
            f"{' and '.join(wrong)}: the writer's deadlines must be positive seconds.",
            hint="QUIZ_WRITER_TIMEOUT is one attempt's deadline, QUIZ_WRITER_JOB_BUDGET all attempts' together.",
            id="quiz.E003",
        )
    ]


@checks.register()
def check_job_takeover(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A job whose worker died is taken over once its heartbeat is QUIZ_JOB_STALE_SECONDS old (quiz/tasks.py).
    The broker's own redelivery of its task must come later: one that arrives first finds the job still looking
    alive, does nothing and is acknowledged."""
    if not conf.jobs_taken_over():
        return []
    stale = conf.stale_after_seconds()
    visibility = float((settings.CELERY_BROKER_TRANSPORT_OPTIONS or {}).get("visibility_timeout", 3600))
    if stale > 0 and visibility > stale:
        return []
    return [
        checks.Error(
            f"CELERY_VISIBILITY_TIMEOUT={visibility:g} s is not longer than QUIZ_JOB_STALE_SECONDS={stale:g} s: a "
            "generation task the broker hands out again (its worker died) would arrive while its job still looks "
            "alive, and be dropped without writing anything.",
            hint="Set CELERY_VISIBILITY_TIMEOUT above QUIZ_JOB_STALE_SECONDS (defaults: 300 s and 30 s), "
            "and QUIZ_JOB_STALE_SECONDS above 0.",
            id="quiz.E004",
        )
    ]
