"""The process's Prometheus metrics (prometheus-client) and the one-line calls every layer counts with.

Several processes serve one site (uvicorn workers, Celery workers), and a scrape reaches only one of them. With
PROMETHEUS_MULTIPROC_DIR set, every process on the machine writes its figures to files there and `/metrics`
sums them (prometheus-client's multiprocess mode); the sockets gauge keeps one series per live process (label
`pid`). Without it (`make run`: one process) the figures are this process's own. The directory must be empty
when the processes start (`make serve` empties it) and is read before prometheus-client is imported, so it is an
environment variable, not a Django setting.

Figures that live in the database or the cache (rooms open, the checker's breaker) are not counted here: the
scrape reads them (config/probes.py), so every process reports the same truth.
"""

import bisect
import os
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from core import processes

# Seconds: a fan-out or an acknowledgement on a quiet server takes milliseconds; a loaded one, up to seconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ROUND_BUCKETS = (1, 2.5, 5, 10, 20, 30, 60, 120, 180, 300, 600)

SOCKETS = Gauge("quizgate_sockets_open", "Open game WebSockets, per server process.", multiprocess_mode="liveall")
FANOUT = Histogram(
    "quizgate_fanout_seconds",
    "From a room's state being sent to its frame leaving for one socket.",
    buckets=LATENCY_BUCKETS,
)
ANSWER_ACK = Histogram(
    "quizgate_answer_ack_seconds",
    "From a player's answer arriving to its acknowledgement being sent.",
    buckets=LATENCY_BUCKETS,
)
ANSWERS = Counter("quizgate_answers_stored", "Players' answers stored.")
# A server process's garbage collector stops its loop while it runs (core/collector.py): most pauses are under a
# millisecond; a full collection of a process holding thousands of sockets took up to a second before it was tuned.
GC_PAUSE = Histogram(
    "quizgate_gc_pause_seconds",
    "A server process's garbage collections, by generation (2: the whole heap), and how long each stopped it.",
    ["generation"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
GATE_CALLS = Counter(
    "quizgate_gate_calls",
    "Calls to the checker by backend and how each ended: ok (an answer, even a bad one), the reason it got none "
    "(timeout, http_status, ...), abandoned (the round was cancelled), or breaker_open (not sent).",
    ["backend", "result"],
)
GATE_QUESTIONS = Counter(
    "quizgate_gate_questions", "Questions through the gate, by backend and outcome.", ["backend", "outcome"]
)
GATE_FAIL_OPEN = Counter(
    "quizgate_gate_fail_open", "Questions passed unverified because the check failed, by reason.", ["backend", "reason"]
)
WRITER_TOKENS = Counter(
    "quizgate_writer_tokens", "Tokens the writer's model server reported, input and output.", ["kind"]
)
MODEL_TOKENS = Counter(
    "quizgate_model_tokens",
    "Tokens spent by model and role (writer, checker, second_opinion, blind) and kind (input, output); counts a "
    "server did not report are estimated.",
    ["model", "role", "kind"],
)
MODEL_COST = Counter(
    "quizgate_model_cost_dollars",
    "Dollars spent by model and role at MODEL_PRICES; a model with no price is not counted here (its tokens are).",
    ["model", "role"],
)
WRITER_ROUNDS = Histogram(
    "quizgate_writer_round_seconds",
    "Seconds one round took to write (and check), by how it ended.",
    ["outcome"],
    buckets=ROUND_BUCKETS,
)


def socket_opened() -> None:
    SOCKETS.inc()


def socket_closed() -> None:
    SOCKETS.dec()


def fanout_observed(seconds: float) -> None:
    FANOUT.observe(max(0.0, seconds))


def fanout_observed_many(seconds: list[float]) -> None:
    """One broadcast's sockets at once: each counted in its bucket as `observe` does, each bucket written once.
    Written per socket (each a shared-memory write in multiprocess mode), the metric was a sixth of a fan-out's
    CPU per socket (bench/ws_load.py against the in-memory peer)."""
    if not seconds:
        return
    FANOUT._raise_if_not_observable()  # noqa: SLF001 - Histogram.observe's own steps, once per bucket
    amounts = [max(0.0, value) for value in seconds]
    counts = [0] * len(FANOUT._upper_bounds)  # noqa: SLF001
    for amount in amounts:
        counts[bisect.bisect_left(FANOUT._upper_bounds, amount)] += 1  # noqa: SLF001 - the first bound >= it
    FANOUT._sum.inc(sum(amounts))  # noqa: SLF001
    for bucket, count in zip(FANOUT._buckets, counts, strict=True):  # noqa: SLF001
        if count:
            bucket.inc(count)


def answer_acked(seconds: float) -> None:
    ANSWER_ACK.observe(max(0.0, seconds))


def gc_paused(*, generation: int, seconds: float) -> None:
    GC_PAUSE.labels(generation=str(generation)).observe(max(0.0, seconds))


def answers_stored(count: int) -> None:
    if count:
        ANSWERS.inc(count)


def gate_call_ended(*, backend: str, result: str) -> None:
    GATE_CALLS.labels(backend=backend or "unknown", result=result).inc()


def gate_decided(*, backend: str, outcome: str, reason: str) -> None:
    GATE_QUESTIONS.labels(backend=backend, outcome=outcome).inc()
    if outcome == "unverified":
        GATE_FAIL_OPEN.labels(backend=backend, reason=reason or "unknown").inc()


def writer_tokens(*, input_tokens: int | None, output_tokens: int | None) -> None:
    if input_tokens:
        WRITER_TOKENS.labels(kind="input").inc(input_tokens)
    if output_tokens:
        WRITER_TOKENS.labels(kind="output").inc(output_tokens)


def model_usage(*, model: str, role: str, usage: object, amount: Decimal | None) -> None:
    """One use of a model (a core.cost.Usage): its tokens, and its amount when the model has a price."""
    model = model or "unknown"
    for kind in ("input", "output"):
        tokens = getattr(usage, f"{kind}_tokens", 0)
        if tokens > 0:
            MODEL_TOKENS.labels(model=model, role=role, kind=kind).inc(tokens)
    if amount is not None and amount > 0:
        MODEL_COST.labels(model=model, role=role).inc(float(amount))


def writer_round(*, outcome: str, seconds: float) -> None:
    WRITER_ROUNDS.labels(outcome=outcome).observe(max(0.0, seconds))


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def process_exited(pid: int | None = None) -> None:
    """A server process stops: its live gauges (sockets) leave the sum. Counters stay, as they should."""
    if multiprocess_dir():
        mark_process_dead(pid or os.getpid())


def _forget_dead_processes(directory: str) -> None:
    """A worker killed outright (SIGKILL, out of memory) never ran its shutdown: its live gauges would count its
    closed sockets for ever. The directory is this machine's, so a pid that is not running here, or is a zombie its
    supervisor has not reaped yet (core/processes.py), is gone."""
    for path in Path(directory).glob("gauge_live*_*.db"):
        pid = path.stem.rsplit("_", 1)[1]
        if pid.isdigit() and processes.gone(int(pid)):
            mark_process_dead(int(pid), directory)


def exposition(extra: Iterable[object] = ()) -> bytes:
    """The text a scrape gets: every process's figures (or this one's) and the `extra` collectors read now."""
    if multiprocess_dir():
        _forget_dead_processes(multiprocess_dir())
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    text = generate_latest(registry)
    collectors = list(extra)
    if collectors:
        now = CollectorRegistry()
        for collector in collectors:
            now.register(collector)
        text += generate_latest(now)
    return text
