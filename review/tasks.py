from celery import shared_task

from review.premises.premise_recheck import premise_groups_recheck


# The task keeps the name it had under the verifier app, so a re-check queued before the move still runs.
@shared_task(name="verifier.premise_recheck")
def premise_recheck(group_ids: list[int]) -> None:
    premise_groups_recheck(group_ids=group_ids)
