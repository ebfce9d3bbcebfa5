"""Settings, read from the environment (and an optional .env next to manage.py).

The embedded default (no DATABASE_URL, no REDIS_URL) is SQLite, Channels' in-memory layer and
Celery tasks run in-process; setting DATABASE_URL / REDIS_URL switches to PostgreSQL and Redis.
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import environ
from celery.schedules import crontab

from core.lan import is_loopback_host, lan_address

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if env.bool("DJANGO_READ_DOT_ENV_FILE", default=True) and (BASE_DIR / ".env").exists():
    env.read_env(str(BASE_DIR / ".env"))

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
# A file holding the key instead (`make run` generates .local-secret, which git ignores).
SECRET_KEY_FILE = env("DJANGO_SECRET_KEY_FILE", default="")
if not SECRET_KEY and SECRET_KEY_FILE:
    SECRET_KEY = Path(SECRET_KEY_FILE).read_text(encoding="utf-8").strip()
if not SECRET_KEY:
    if not DEBUG:
        raise environ.ImproperlyConfigured(
            "DJANGO_SECRET_KEY is required when DJANGO_DEBUG is off (or DJANGO_SECRET_KEY_FILE naming a file "
            "that holds it; set DJANGO_DEBUG=1 for development)."
        )
    SECRET_KEY = "insecure-development-key-only-for-debug"
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# A game on the local network (`make run`): phones on the same Wi-Fi join at this machine's LAN address, which
# is detected (core/lan.py) unless QUIZ_LAN_ADDRESS names it; plain http, so cookies are not marked secure.
QUIZ_LOCAL_NETWORK = env.bool("QUIZ_LOCAL_NETWORK", default=False)
# The address the server binds, when its starter says (`make run` passes RUN_HOST): bound to loopback only, no
# phone can reach the LAN address, so the join link and QR code do not name it.
QUIZ_BIND_HOST = env("QUIZ_BIND_HOST", default="")
QUIZ_LAN_ADDRESS = (
    ""
    if QUIZ_BIND_HOST and is_loopback_host(QUIZ_BIND_HOST)
    else env("QUIZ_LAN_ADDRESS", default="") or ((QUIZ_LOCAL_NETWORK and lan_address()) or "")
)
# Where players reach the game when that is not where the host opened it (a tunnel, a proxy), e.g.
# https://quiz.example.org; the join link and QR code use it, and its host is allowed.
QUIZ_PUBLIC_URL = env("QUIZ_PUBLIC_URL", default="")
# Words a class may not put on a projector (core/wordfilter.py): on by default; extra words, comma-separated.
QUIZ_WORD_FILTER = env.bool("QUIZ_WORD_FILTER", default=True)
QUIZ_WORD_FILTER_EXTRA = [word.strip() for word in env("QUIZ_WORD_FILTER_EXTRA", default="").split(",") if word.strip()]
if QUIZ_LAN_ADDRESS:
    ALLOWED_HOSTS.append(QUIZ_LAN_ADDRESS)
if QUIZ_PUBLIC_URL:
    _public = urlsplit(QUIZ_PUBLIC_URL)
    ALLOWED_HOSTS.append(_public.hostname)
    CSRF_TRUSTED_ORIGINS.append(f"{_public.scheme}://{_public.netloc}")

INSTALLED_APPS = [
    "daphne",
    # Django's admin on accounts.admin_site.AdminSite: the lockout message, and TOTP when ADMIN_REQUIRE_TOTP is on.
    "config.apps.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "csp",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "quiz",
    "verifier",
    "review",
    "lobby",
    "accounts",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics (config/probes.py), answered before the https redirect, the host check and the
    # session: a load balancer probes the process's own address over plain http.
    "config.probes.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.csp.QuizgateCSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the choice made with the language switch (a cookie), else the browser's.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): signed in with a one-time code (the admin asks for one when ADMIN_REQUIRE_TOTP).
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so it runs before any view or the CSRF check reads the body: a body over its route's cap gets the 413
    # page (config/body_cap.py).
    "config.body_cap.RequestTooLargeMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE: a transaction takes the write lock when it starts, so "count, then insert" and
    # compare-and-set transitions serialize instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )
    DATABASES["default"]["TEST"] = {"NAME": env("SQLITE_TEST_NAME", default=str(BASE_DIR / "test-db.sqlite3"))}
else:
    # Keep each worker thread's connection: opening one per game action dominated the answer path in
    # bench/ws_load.py. Health checks replace a connection PostgreSQL dropped (e.g. after a restart).
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
CHANNEL_LAYER = env("CHANNEL_LAYER", default="pubsub")  # "pubsub" or "core": see docs/operators/production.md
# The channel layer may be sharded over several Redis servers (channels_redis hashes each channel and group to one
# of them); everything else in Redis (cache, per-IP limits, socket leases, the processes' beats and registry, the
# breakers, Celery) stays on REDIS_URL. See deploy/README.md.
CHANNEL_LAYER_REDIS_URLS = env.list("CHANNEL_LAYER_REDIS_URLS", default=[REDIS_URL] if REDIS_URL else [])
if REDIS_URL and CHANNEL_LAYER == "core":
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py caps an asyncio pool at 100 connections; a burst of joins needs more.
                "hosts": [
                    {"address": url, "max_connections": env.int("REDIS_MAX_CONNECTIONS", default=1000)}
                    for url in CHANNEL_LAYER_REDIS_URLS
                ],
                # A room is at most 20 players + a host; a channel never needs more than a few queued events.
                "capacity": 200,
                "expiry": 30,
                "prefix": env("CHANNEL_LAYER_PREFIX", default="quizgate"),
            },
        }
    }
elif REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": CHANNEL_LAYER_REDIS_URLS, "prefix": env("CHANNEL_LAYER_PREFIX", default="quizgate")},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache holds rate-limit counters, so with several processes it must be shared: Redis.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "quizgate",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis as broker when REDIS_URL is set, otherwise tasks run in-process.
CELERY_BROKER_URL = REDIS_URL or "memory://"
# Without a broker nothing would take a queued task, so it runs at once (the test settings turn this off).
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# A worker killed mid-generation: its task goes back to the queue and another worker takes the job over.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Longer than any generation (QUIZ_WRITER_TIMEOUT per attempt); an unacknowledged task older than this
    # is put back in the queue by the next sweep.
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
    "unacked_restore_throttle": 1,
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
# Retention (lobby/services/retention.py): a game's players, their nicknames and answers, and its reports are deleted
# with the room this many days after its last activity, and browser sessions this long after their last use; `manage.py
# purge_old_data` does it, run daily by Celery beat (and by `make run` at each start).
RETENTION_DAYS = env.int("RETENTION_DAYS", default=30)
# One beat per site (deploy/host.sh --beat on one host). RETENTION_PURGE_EVERY_SECONDS, when set, runs the purge
# that often instead of daily at 03:17 (a test, or a site that wants it more often).
RETENTION_PURGE_EVERY_SECONDS = env.float("RETENTION_PURGE_EVERY_SECONDS", default=0)
CELERY_BEAT_SCHEDULE = {
    "purge-old-data": {
        "task": "lobby.tasks.purge_old_data",
        "schedule": RETENTION_PURGE_EVERY_SECONDS or crontab(hour=3, minute=17),
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Wrong passwords (django-axes, accounts/lockout.py): AUTH_LOCKOUT_FAILURES wrong passwords for one account from
# one address lock that account, from that address only, for AUTH_LOCKOUT_MINUTES, at the hosts' sign-in and the
# admin's alike (the right password is refused too until then). Other accounts behind the same address (a school's
# one NAT address) and the same account from elsewhere sign in as before. The count is kept in the database, so
# every server process sees it and a restart does not clear it. An operator unlocks with
# `manage.py axes_reset_username NAME` (docs/operators/abuse-limits.md); the admin lists the attempts under "Axes".
AUTH_LOCKOUT_FAILURES = env.int("AUTH_LOCKOUT_FAILURES", default=5)
AUTH_LOCKOUT_MINUTES = env.int("AUTH_LOCKOUT_MINUTES", default=15)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked account before the password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = AUTH_LOCKOUT_FAILURES
AXES_COOLOFF_TIME = timedelta(minutes=AUTH_LOCKOUT_MINUTES)
# The address the rate limits use (TRUST_X_FORWARDED_FOR), an IPv6 client's /64 as one address.
AXES_CLIENT_IP_CALLABLE = "accounts.lockout.client_address"
# A right password starts the count again; a try while locked does not make the wait longer (the page says how
# long it is, and it counts down).
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Masked in the attempts' stored form data and in the log lines (the password always is).
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "otp_token", "csrfmiddlewaretoken"]
# Wrong passwords are kept only until their cool-off ends; a row per successful sign-in (account, address,
# browser), kept until deleted, is written only when AUTH_ACCESS_LOG asks for it.
AXES_DISABLE_ACCESS_LOG = not env.bool("AUTH_ACCESS_LOG", default=False)
# The sign-in and admin login pages say "locked" and the wait themselves (accounts/lockout.py), in the page's
# language; axes' middleware, which would replace the page with a bare message, is left out.
SILENCED_SYSTEM_CHECKS = ["axes.W002"]
# The admin asks staff for a one-time code (TOTP, django-otp) besides the password. A staff account enrols an
# authenticator app with `manage.py totp_enrol NAME` first. Off by default, so a fresh `make run` signs in as before.
ADMIN_REQUIRE_TOTP = env.bool("ADMIN_REQUIRE_TOTP", default=False)
OTP_TOTP_ISSUER = env("OTP_TOTP_ISSUER", default="Quizgate")

# Hosts may sign in (accounts/) to keep their rounds and games; players never do.
LOGIN_URL = "accounts:sign_in"
LOGIN_REDIRECT_URL = "lobby:past_games"
LOGOUT_REDIRECT_URL = "lobby:home"

# Languages of the pages, the players' phones and the writer's default. The catalogues are locale/<code>/LC_MESSAGES
# (djangojs too, for static/js); `manage.py compile_translations` builds the .mo files (make run and make test do).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# /favicon.ico and any other file that must sit at the site's root.
WHITENOISE_ROOT = BASE_DIR / "static" / "root"

# TLS everywhere, except on a local network game, which is plain http on the LAN.
_TLS = not DEBUG and not QUIZ_LOCAL_NETWORK
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=_TLS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=_TLS)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000 if _TLS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _TLS
SECURE_HSTS_PRELOAD = _TLS
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Django's default, said out loud: a link to another site does not carry a room's URL with it.
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy (django-csp; config/csp.py lets only the admin add inline <style>). The pages need
# no inline script or style: scripts and styles come from /static/, the QR code is an inline <svg> element
# (no image request), and the WebSockets go to this same origin, which 'self' covers for ws:/wss:.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# The game (lobby/): config/settings_game.py.
from config.settings_game import *  # noqa: E402,F403

# The largest request body of a route that declares no cap of its own (core/request_body.py; the source upload,
# the question import and the labelled-set import declare theirs). Checked from Content-Length before the body is
# read and counted while it streams (config/body_cap.py); over it, the 413 page, and the connection is closed.
# It replaces Django's DATA_UPLOAD_MAX_MEMORY_SIZE, which would read the whole body and log a traceback.
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=2_621_440)
DATA_UPLOAD_MAX_MEMORY_SIZE = None
# The writer (quiz/generation/): config/settings_writer.py.
# The gate (verifier/) and the review's crowd signal and sweep: config/settings_checker.py.
from config.settings_checker import *  # noqa: E402,F403
from config.settings_writer import *  # noqa: E402,F403

# What an operator sees: /livez for a load balancer, /healthz and /readyz (each readiness check cut at READYZ_TIMEOUT
# seconds), /metrics for Prometheus only with `Authorization: Bearer <METRICS_TOKEN>` (empty: the endpoint is off).
# Several processes: PROMETHEUS_MULTIPROC_DIR (an environment variable, read by prometheus-client; core/metrics.py).
READYZ_TIMEOUT = env.float("READYZ_TIMEOUT", default=2.0)
# /readyz's details (parts, addresses, the checker's model and breaker) for these addresses' own requests (the
# balancer's), besides a request bearing METRICS_TOKEN; everyone else gets the status alone.
READYZ_DETAILS_FROM = env.list("READYZ_DETAILS_FROM", default=[])
# prometheus-client reads PROMETHEUS_MULTIPROC_DIR when it is imported, after these settings: an empty value would
# put its files in the working directory, and a directory that is not there would fail the process's first metric.
if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
    if os.environ["PROMETHEUS_MULTIPROC_DIR"]:
        os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)
    else:
        del os.environ["PROMETHEUS_MULTIPROC_DIR"]
METRICS_TOKEN = env("METRICS_TOKEN", default="")
# "json": one JSON object a line (time, level, logger, message and any extras; core/json_logs.py); "plain" else.
LOG_FORMAT = env("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise environ.ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.json_logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.channels.server": {"level": "WARNING"},
        # One INFO line per HTTP call would bury the gate's one line per round.
        "httpx": {"level": "WARNING"},
        "openai": {"level": "WARNING"},
        # django-axes: a WARNING per wrong password and per lockout (names and addresses masked); not its INFO.
        "axes": {"level": "WARNING"},
    },
}
