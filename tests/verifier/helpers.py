import math
import time
from contextlib import contextmanager

from verifier.gate import GateItem


def item(n: int = 1, *, explanation: str = "Because it is.", text: str | None = None) -> GateItem:
    return GateItem(
        key=f"q{n}",
        text=text or f"Question number {n}: which is right?",
        options=("Right", "Wrong", "Other"),
        correct_index=0,
        explanation=explanation,
    )


def items(count: int, *, explanation: str = "Because it is.") -> list[GateItem]:
    return [item(n, explanation=explanation) for n in range(1, count + 1)]


def budget_seconds(*, calls: int, concurrency: int, per_call: float) -> float:
    return math.ceil(calls / concurrency) * per_call


@contextmanager
def stopwatch():
    times: dict[str, float] = {}
    started = time.monotonic()
    try:
        yield times
    finally:
        times["wall"] = time.monotonic() - started
