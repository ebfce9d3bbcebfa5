"""How many questions to ask for: the over-ask (ask ceil(k × N) with the gate on), fixed at 1.5 or set from the
drop rates of recent rounds (pure arithmetic here; the history is read in quiz/generation/drop_rates.py).

A round stays whole when what survives the gate still fills it: k × N × (1 - drop rate) ≥ N, i.e. k ≥ 1 / (1 - d).
The over-ask that would have kept 95 % of recent rounds whole is the 95th percentile of that need, bounded to
1.2x–2.5x (a checker that drops most of what a writer writes is not fixed by asking for more).
"""

import math
from collections.abc import Sequence

DEFAULT = 1.5
LOWEST = 1.2
HIGHEST = 2.5
KEEP_WHOLE = 0.95
# A round with every question dropped needs more than any over-ask: it counts as needing the highest.
STEP = 0.05


def needed(drop_rate: float) -> float:
    """The over-ask a round with this drop rate needed to stay whole (inf when it dropped everything)."""
    rate = min(1.0, max(0.0, float(drop_rate)))
    return math.inf if rate >= 1.0 else 1.0 / (1.0 - rate)


def bounded(value: float) -> float:
    return min(HIGHEST, max(LOWEST, value))


def suggested(drop_rates: Sequence[float], *, keep: float = KEEP_WHOLE) -> float | None:
    """The over-ask that would have kept `keep` of these rounds whole, rounded up to STEP and bounded to
    LOWEST–HIGHEST; None without any round."""
    rates = [rate for rate in drop_rates if isinstance(rate, int | float) and math.isfinite(rate)]
    if not rates:
        return None
    needs = sorted(needed(rate) for rate in rates)
    rank = max(0, math.ceil(keep * len(needs)) - 1)
    need = needs[rank]
    if not math.isfinite(need):
        return HIGHEST
    # Rounded up (never below the need), with a hair of slack for float error: 1/(1-0.2) is 1.2500000000000002.
    return bounded(math.ceil(round(need / STEP, 6)) * STEP)


def kept_whole(drop_rates: Sequence[float], over_ask: float) -> float | None:
    """The share of these rounds an over-ask would have kept whole; None without any round."""
    if not drop_rates:
        return None
    return sum(1 for rate in drop_rates if needed(rate) <= over_ask + 1e-9) / len(drop_rates)
