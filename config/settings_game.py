"""The game's settings (lobby/): rooms, timers, sockets and their limits, processes and rebalancing.

Star-imported by config/settings.py after the .env file is read; each default is declared here once.
"""

from pathlib import Path

import environ

env = environ.Env()

# The game
ROOM_MAX_PLAYERS = env.int("ROOM_MAX_PLAYERS", default=20)
ROOM_DEFAULT_TIMER = 20
ROOM_MIN_TIMER = 10
ROOM_MAX_TIMER = 120
# A moment to read: the question alone for this many seconds before its options appear and the clock starts
# (0-10; 0, off, is the default: the timer already gives time to read, and a host turns it on for long texts).
ROOM_MAX_READING = 10
# A game opened while its round is still being written waits this long at a leaderboard for its next question
# to pass the gate, then ends with the questions it had.
ROOM_WRITING_WAIT_SECONDS = env.float("ROOM_WRITING_WAIT_SECONDS", default=60)
WS_MAX_MESSAGE_BYTES = env.int("WS_MAX_MESSAGE_BYTES", default=16 * 1024)
# The server's own frame limit (config/serve.py passes it to uvicorn as --ws-max-size): a frame over it is closed
# with 1009 before it is read. Above the app's cap, so a message a little too large still gets the app's reply.
WS_SERVER_MAX_BYTES = env.int("WS_SERVER_MAX_BYTES", default=4 * WS_MAX_MESSAGE_BYTES)
# uvicorn's supervisor restarts a worker that does not answer its ping within this many seconds, closing every
# socket the worker holds. Its default, 5 s, killed a busy worker in a room of 10,000 filling up on two loaded
# cores (bench/ws_load.py): a busy worker is not a hung one, and /livez tells the load balancer about a hung one.
SERVER_WORKER_HEALTHCHECK_SECONDS = env.int("SERVER_WORKER_HEALTHCHECK_SECONDS", default=60)
# uvicorn's WebSocket implementation (its --ws). "websockets-sansio" writes a frame to the connection with no
# awaits and no locks when its buffer has room: a question's fan-out to 1,000 sockets took 30 % less CPU on the
# send than with uvicorn's default ("websockets", the legacy implementation uvicorn deprecates), issue 47.
SERVER_WS_IMPLEMENTATION = env.str("SERVER_WS_IMPLEMENTATION", default="websockets-sansio")
# Connections waiting to be accepted (uvicorn's --backlog, 2048 by default; the kernel's net.core.somaxconn caps
# it): a room's phones arrive in a burst when the host shows the code.
SERVER_BACKLOG = env.int("SERVER_BACKLOG", default=4096)
# The garbage collector's thresholds in a server process (core/collector.py): the youngest generation is collected
# after this many new objects (Python's default is 700), the next after this many of those, the oldest after this
# many of those. With the defaults a room of 10,000 stood still 0.5-1.1 s at a time, several times a question.
_gc_thresholds = env.list("SERVER_GC_THRESHOLDS", default=["50000", "10", "100"])
try:
    SERVER_GC_THRESHOLDS = tuple(int(part) for part in _gc_thresholds)
except ValueError:
    SERVER_GC_THRESHOLDS = ()
if len(SERVER_GC_THRESHOLDS) != 3 or min(SERVER_GC_THRESHOLDS) < 1:
    raise environ.ImproperlyConfigured(
        f"SERVER_GC_THRESHOLDS must be three positive whole numbers, such as 50000,10,100: not {_gc_thresholds}"
    )
GAME_CLOCK_INTERVAL = env.float("GAME_CLOCK_INTERVAL", default=0.25)
# Threads per server process for game actions (each keeps one database connection). One: every game action of a
# process is a short transaction (the answers that arrive together go in one, lobby/realtime/batching.py), and each more
# thread doing Python work takes the GIL from the event loop that fans out (bench/ws_load.py, 50 rooms of 20:
# question fan-out p95 15 ms with one thread, 87-152 ms with two, 135-349 ms with four; issue 31).
DB_THREADS = env.int("DB_THREADS", default=1)
# Threads per server process for homework's JSON requests (each keeps one database connection, as the game's do):
# each request used to open a connection of its own on the thread Django gives it, and close it again. Opening
# one (PostgreSQL starts a backend for it) was the largest cost of an answer at 2,000 players (bench/homework_load.py).
# Four: a request spends most of its time waiting on PostgreSQL (two round trips, lobby/homework/services.py), and
# with two threads half of the 8 requests in flight on two processes waited for a thread (2,000 players: 384
# requests a second with four, 299 with two). They hold the GIL only between queries, and only during homework.
HOMEWORK_DB_THREADS = env.int("HOMEWORK_DB_THREADS", default=4)
# A database outage pauses the game: messages are retried this long, and open questions get at least
# DB_OUTAGE_RESUME_SECONDS once it is back.
DB_OUTAGE_RETRY_SECONDS = env.float("DB_OUTAGE_RETRY_SECONDS", default=30)
DB_OUTAGE_RESUME_SECONDS = env.float("DB_OUTAGE_RESUME_SECONDS", default=5)
# Abuse limits (lobby/realtime/ratelimit.py): per connection, and per IP across processes (in the cache).
WS_RATE_PER_MINUTE = env.int("WS_RATE_PER_MINUTE", default=100)
WS_RATE_BURST = env.int("WS_RATE_BURST", default=20)
WS_RATE_FLOOD = env.int("WS_RATE_FLOOD", default=200)
# Pings have a budget of their own (one a second, bursts of 10), outside the one answers and joins come out of.
WS_PING_PER_MINUTE = env.int("WS_PING_PER_MINUTE", default=60)
WS_PING_BURST = env.int("WS_PING_BURST", default=10)
# A connection that has shown the host's token spends a host's budget instead of the players' one: a host steps
# through a round and sets players' times in runs (bursts of 60, 300 a minute), and is never held to a player's.
WS_HOST_RATE_PER_MINUTE = env.int("WS_HOST_RATE_PER_MINUTE", default=300)
WS_HOST_RATE_BURST = env.int("WS_HOST_RATE_BURST", default=60)
# Open WebSockets per client IP, across processes (config/socket_cap.py). A venue puts a whole room behind one
# address: the default lets in a full room, its host's pages, and reconnects whose old socket is not yet gone.
WS_MAX_PER_IP = env.int("WS_MAX_PER_IP", default=ROOM_MAX_PLAYERS + 10)
# With Redis each open socket is a lease a live process renews; a process killed outright frees its within this.
WS_SOCKET_LEASE_SECONDS = env.float("WS_SOCKET_LEASE_SECONDS", default=30)
# Each server process beats into Redis every third of this (core/processes.py); one silent this long, or killed on
# the same host (seen within one beat), is dead: a survivor releases its sockets' places and registry entry at once.
PROCESS_HEARTBEAT_SECONDS = env.float("PROCESS_HEARTBEAT_SECONDS", default=3)
# The beat is written from a thread of its own, so a loop busy for seconds is not taken for dead; a loop that has not
# turned for this long (stuck, not busy) stops beating and is found dead like a killed process. /livez, answered
# from the loop, takes it out of the load balancer before that.
PROCESS_LOOP_STUCK_SECONDS = env.float("PROCESS_LOOP_STUCK_SECONDS", default=SERVER_WORKER_HEALTHCHECK_SECONDS)
# A dead process's players get back, in their room's open question, the time it was silent plus this: the time a
# page takes to reconnect (lobby/realtime/lost.py). Nobody is refused as too late for time the loss of a worker took.
LOST_PROCESS_GRACE_SECONDS = env.float("LOST_PROCESS_GRACE_SECONDS", default=5)
# A room socket that has not joined, resumed or hosted within this many seconds is closed (lobby/realtime/idle.py).
WS_JOIN_TIMEOUT = env.float("WS_JOIN_TIMEOUT", default=15)
# Spreading sockets after a restart or over a new host (lobby/realtime/rebalance.py; only with REDIS_URL): every this
# many seconds each process registers its socket count and its server; once a server is more than REBALANCE_TOLERANCE of
# its fair share off it (and at least REBALANCE_MIN_EXCESS sockets), every server over its share asks what it holds
# over it, at most REBALANCE_BATCH a process and turn, players not in an open question first among the longest held,
# to reconnect (close code 4012). 0 seconds turns it off.
REBALANCE_INTERVAL_SECONDS = env.float("REBALANCE_INTERVAL_SECONDS", default=1.0)
REBALANCE_TOLERANCE = env.float("REBALANCE_TOLERANCE", default=0.1)
REBALANCE_MIN_EXCESS = env.int("REBALANCE_MIN_EXCESS", default=3)
REBALANCE_BATCH = env.int("REBALANCE_BATCH", default=100)
# A process this young is no target yet: the balancer takes a new server in only after its checks pass.
REBALANCE_WARMUP_SECONDS = env.float("REBALANCE_WARMUP_SECONDS", default=5.0)
# Rooms one address joins in 10 minutes (lobby/realtime/ratelimit.py): joins into a room it is already in are not
# counted, so a full room, whatever ROOM_MAX_PLAYERS is, joins from one address.
RATELIMIT_ROOMS_JOINED_PER_IP = (env.int("RATELIMIT_ROOMS_PER_10_MINUTES", default=20), 600)
RATELIMIT_CODE_GUESSES_PER_IP = (env.int("RATELIMIT_CODE_GUESSES_PER_MINUTE", default=10), 60)
# Where the per-IP counters live in the cache and Redis (two deployments sharing one Redis need their own).
RATELIMIT_KEY_PREFIX = env("RATELIMIT_KEY_PREFIX", default="ratelimit")
# Only behind a proxy that sets it: otherwise any client could pick its own address.
TRUST_X_FORWARDED_FOR = env.bool("TRUST_X_FORWARDED_FOR", default=False)

# Questions' pictures (quiz/pictures/images.py). What a picture may be when it comes in (bytes, and pixels: a
# decompression bomb is refused before it is decoded), and its long side once re-encoded.
QUIZ_IMAGE_MAX_BYTES = env.int("QUIZ_IMAGE_MAX_BYTES", default=5 * 1024 * 1024)
QUIZ_IMAGE_MAX_PIXELS = env.int("QUIZ_IMAGE_MAX_PIXELS", default=40_000_000)
QUIZ_IMAGE_MAX_SIDE = env.int("QUIZ_IMAGE_MAX_SIDE", default=1600)
# Where the re-encoded files are kept: Django's STORAGES["question_images"]. The filesystem under MEDIA_ROOT by
# default (one machine, or a directory every machine mounts); an object store for several machines by naming its
# backend and options, e.g. QUIZ_IMAGE_STORAGE_BACKEND=storages.backends.s3.S3Storage and
# QUIZ_IMAGE_STORAGE_OPTIONS='{"bucket_name": "quizgate-pictures"}' (docs/hosts/pictures.md). The files are always
# served by the app itself (/rounds/images/<name>), so the pages' CSP keeps img-src 'self'.
MEDIA_ROOT = env.path("MEDIA_ROOT", default=str(Path(__file__).resolve().parent.parent / "media"))
MEDIA_URL = "/media/"
_IMAGE_BACKEND = env("QUIZ_IMAGE_STORAGE_BACKEND", default="django.core.files.storage.FileSystemStorage")
_IMAGE_OPTIONS = env.json("QUIZ_IMAGE_STORAGE_OPTIONS", default={})
if _IMAGE_BACKEND == "django.core.files.storage.FileSystemStorage":
    _IMAGE_OPTIONS = {"location": str(Path(MEDIA_ROOT) / "questions"), **_IMAGE_OPTIONS}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "question_images": {"BACKEND": _IMAGE_BACKEND, "OPTIONS": _IMAGE_OPTIONS},
}
# The largest JSON round a host may import as a file (its pictures are data URLs inside it; a pasted text and a CSV
# stay within 1 MB). The import page's body cap follows it.
QUIZ_IMPORT_MAX_BYTES = env.int("QUIZ_IMPORT_MAX_BYTES", default=30 * 1024 * 1024)
