"""The reviewer's home, in two parts that Django's admin autodiscovery registers by importing this package:

- `queue.py`: the review queue (its columns and evidence), the labels and the flags; the label and fix pages a
  reviewer works on are `reviewing.py`;
- `calibration.py`: the thresholds with the sweep, the labels CSV import and export and the breaker page, and
  the checker evaluation runs.

The game's half of the queue (how players answered, voiding for a room) is added by lobby/admin.py through
review/admin_hooks.py: review never imports the lobby.
"""

from review.admin.calibration import LABELS_MAX_BYTES, CheckerEvalRunAdmin, ThresholdAdmin, warn_if_slow
from review.admin.queue import (
    NONE,
    FlagAdmin,
    FlagRoomFilter,
    ReviewAdmin,
    ReviewItemAdmin,
    label_correct,
    label_defective,
)

__all__ = [
    "LABELS_MAX_BYTES",
    "NONE",
    "CheckerEvalRunAdmin",
    "FlagAdmin",
    "FlagRoomFilter",
    "ReviewAdmin",
    "ReviewItemAdmin",
    "ThresholdAdmin",
    "label_correct",
    "label_defective",
    "warn_if_slow",
]
