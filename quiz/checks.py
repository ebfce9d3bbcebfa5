"""Start-up checks: a writer model id must be pinned to one version; the generation runner must exist; the
writer's deadlines must be positive."""

from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from quiz import conf


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
    hint = "Unset it, or name quiz.runner.generation_start_on_celery or quiz.runner.generation_start_in_process."
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
