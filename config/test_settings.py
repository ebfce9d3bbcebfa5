import os

os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ.setdefault("DJANGO_READ_DOT_ENV_FILE", "0")

from config.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
GAME_CLOCK_INTERVAL = 0.05
# Celery runs a task at once only in a test that says so; the others see what was queued (on-commit callbacks).
CELERY_TASK_ALWAYS_EAGER = False
# A generation job is queued for a worker, and none runs here: a test runs the job itself or names a runner.
QUIZ_GENERATION_RUNNER = "quiz.generation.runner.generation_start_on_celery"
if REDIS_URL:  # noqa: F405
    # Each test run gets its own channel prefix so concurrent runs do not hear each other.
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"quizgate-test-{os.getpid()}"  # noqa: F405
# Rate-limit counters of one run must not leak into the next when the cache is a shared Redis.
CACHES["default"]["KEY_PREFIX"] = f"quizgate-test-{os.getpid()}"  # noqa: F405
RATELIMIT_KEY_PREFIX = f"ratelimit-test-{os.getpid()}"
# Pictures a test stores go to a directory of this run, never the checkout's media/.
MEDIA_ROOT = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"quizgate-test-media-{os.getpid()}")
STORAGES["question_images"]["OPTIONS"]["location"] = os.path.join(MEDIA_ROOT, "questions")  # noqa: F405
