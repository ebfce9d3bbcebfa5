"""What quiz tells the apps above it, without importing them (they connect in their AppConfig.ready)."""

from django.dispatch import Signal

# A generated round was saved. Arguments: round_id, and dropped_ids, the questions the gate dropped from it
# (kept, with their verdicts, for review). Sent only when the gate dropped some.
round_generated = Signal()
