"""The review side listens to quiz (quiz never imports review)."""

from typing import Any

from quiz.signals import round_generated
from review.models import PremiseTrigger
from review.services import premise_groups_create


def dropped_round_mates_grouped(*, round_id: int, dropped_ids: list[int], **_: Any) -> None:
    # Round-mates of what the gate dropped may rest on the same wrong premise: grouped and re-checked blind.
    premise_groups_create(origin_ids=dropped_ids, round_id=round_id, trigger=PremiseTrigger.DROPPED)


def connect() -> None:
    round_generated.connect(dropped_round_mates_grouped, dispatch_uid="review.dropped_round_mates_grouped")
