from celery import shared_task

from verifier.services import premise_groups_recheck


@shared_task(name="verifier.premise_recheck")
def premise_recheck(group_ids: list[int]) -> None:
    premise_groups_recheck(group_ids=group_ids)
