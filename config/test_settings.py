import os

os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ.setdefault("DJANGO_READ_DOT_ENV_FILE", "0")

from config.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
GAME_CLOCK_INTERVAL = 0.05
if REDIS_URL:  # noqa: F405
    # Each test run gets its own channel prefix so concurrent runs do not hear each other.
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"quizgate-test-{os.getpid()}"  # noqa: F405
# Rate-limit counters of one run must not leak into the next when the cache is a shared Redis.
CACHES["default"]["KEY_PREFIX"] = f"quizgate-test-{os.getpid()}"  # noqa: F405
RATELIMIT_KEY_PREFIX = f"ratelimit-test-{os.getpid()}"
