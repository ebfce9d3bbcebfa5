"""The writer's settings (quiz/generation/): the model server, its limits, uploads and where a job runs.

Star-imported by config/settings.py after the .env file is read; each default is declared here once, and
quiz/jobs/conf.py and quiz/generation/limits.py only read them.
"""

import environ
from django.core.exceptions import ImproperlyConfigured

from core.cost import PriceSettingError, prices_parse

env = environ.Env()

# The writer (quiz/generation/writer.py): any OpenAI-compatible server. The model id is pinned: a moving name is
# refused.
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
# No default: a round is filed under the model that wrote it, so writing needs a pinned id set on purpose.
QUIZ_WRITER_MODEL = env("QUIZ_WRITER_MODEL", default="")
QUIZ_ALLOW_MODEL_ALIAS = env.bool("QUIZ_ALLOW_MODEL_ALIAS", default=False)
QUIZ_MODEL_ALIASES = env.list("QUIZ_MODEL_ALIASES", default=[])
# What each model costs, in dollars per million input/output tokens (core/cost.py):
# "jev-1.13.0=0.042/0,gpt-4o-mini-2024-07-18=0.15/0.60". A model not named has its tokens counted and its cost
# shown as "no price". A value that does not parse stops the start-up with a message naming the model.
try:
    MODEL_PRICES = prices_parse(env("MODEL_PRICES", default=""))
except PriceSettingError as error:
    raise ImproperlyConfigured(str(error)) from None
# With the gate on, a round asks for 1.5x the questions it needs (quiz/generation/over_ask.py). With
# QUIZ_OVER_ASK_AUTO, it asks for what would have kept 95 % of the last QUIZ_OVER_ASK_ROUNDS rounds of the same writer
# and checker whole (bounded 1.2x-2.5x), once there are QUIZ_OVER_ASK_MIN_ROUNDS of them.
QUIZ_OVER_ASK_AUTO = env.bool("QUIZ_OVER_ASK_AUTO", default=False)
QUIZ_OVER_ASK_ROUNDS = env.int("QUIZ_OVER_ASK_ROUNDS", default=50)
QUIZ_OVER_ASK_MIN_ROUNDS = env.int("QUIZ_OVER_ASK_MIN_ROUNDS", default=10)
QUIZ_MAX_ATTEMPTS = env.int("QUIZ_MAX_ATTEMPTS", default=3)
# A running generation beats every 5 s; one silent this long lost its worker (retried or reported failed).
QUIZ_JOB_STALE_SECONDS = env.float("QUIZ_JOB_STALE_SECONDS", default=30)
# Seconds one attempt may take (connecting, retries and the whole streamed reply); a slower one is cut there, its
# complete questions kept, and the next attempt runs while the job budget lasts: the seconds all attempts of one
# round may take together (the checker's last call budget comes on top). Keep it under CELERY_VISIBILITY_TIMEOUT.
QUIZ_WRITER_TIMEOUT = env.float("QUIZ_WRITER_TIMEOUT", default=60.0)
QUIZ_WRITER_JOB_BUDGET = env.float("QUIZ_WRITER_JOB_BUDGET", default=180.0)
# Once some of the round's questions are ready (a game may be playing them and waiting for the next), a model
# server that keeps failing (5xx, no connection) is given up after this many seconds rather than retried to the
# attempt's deadline: the round ends with what it has, and a waiting game ends within seconds, saying why.
QUIZ_WRITER_GIVE_UP_SECONDS = env.float("QUIZ_WRITER_GIVE_UP_SECONDS", default=5.0)
QUIZ_WRITER_MAX_TOKENS = env.int("QUIZ_WRITER_MAX_TOKENS", default=16384)
# One reply's bytes as sent (Server-Sent Events framing included, ~250 bytes a token): 8 MiB holds a full
# QUIZ_WRITER_MAX_TOKENS reply with room to spare; a longer one ends the attempt, complete questions kept.
QUIZ_WRITER_MAX_REPLY_BYTES = env.int("QUIZ_WRITER_MAX_REPLY_BYTES", default=8 * 1024 * 1024)
QUIZ_SOURCE_MAX_CHARS = env.int("QUIZ_SOURCE_MAX_CHARS", default=50_000)
QUIZ_UPLOAD_MAX_BYTES = env.int("QUIZ_UPLOAD_MAX_BYTES", default=5 * 1024 * 1024)
# An uploaded PDF is read in a child process (quiz/generation/uploads.py): at most this many pages, this many bytes
# its pages' content streams unpack to (counted once per page that uses them), this much address space, and it is killed
# after this many seconds. A refused PDF gets a message that says which limit it met.
QUIZ_PDF_MAX_PAGES = env.int("QUIZ_PDF_MAX_PAGES", default=200)
QUIZ_PDF_MAX_UNPACKED_BYTES = env.int("QUIZ_PDF_MAX_UNPACKED_BYTES", default=20 * 1024 * 1024)
QUIZ_PDF_MAX_MEMORY_BYTES = env.int("QUIZ_PDF_MAX_MEMORY_BYTES", default=512 * 1024 * 1024)
QUIZ_PDF_TIMEOUT = env.float("QUIZ_PDF_TIMEOUT", default=10.0)
# Where a generation job runs (quiz/generation/runner.py): a dotted path to a function taking the job's id. A Celery
# worker when there is a broker; else this server's own event loop (eager Celery would write the round in the request).
QUIZ_GENERATION_RUNNER = env(
    "QUIZ_GENERATION_RUNNER",
    default="quiz.generation.runner.generation_start_on_celery"
    if env("REDIS_URL", default="")
    else "quiz.generation.runner.generation_start_in_process",
)
# Starting a model-written round spends the model key (quiz/generation/limits.py): rounds being written at once and
# started in the last hour, per client network (an IPv6 /64) and per browser session; and started site-wide
# in the last 24 hours. 0 turns a limit off.
QUIZ_GENERATION_RUNNING_PER_IP = env.int("QUIZ_GENERATION_RUNNING_PER_IP", default=2)
QUIZ_GENERATION_PER_HOUR_PER_IP = env.int("QUIZ_GENERATION_PER_HOUR_PER_IP", default=20)
QUIZ_GENERATION_RUNNING_PER_SESSION = env.int("QUIZ_GENERATION_RUNNING_PER_SESSION", default=1)
QUIZ_GENERATION_PER_HOUR_PER_SESSION = env.int("QUIZ_GENERATION_PER_HOUR_PER_SESSION", default=10)
QUIZ_GENERATION_PER_DAY = env.int("QUIZ_GENERATION_PER_DAY", default=500)
