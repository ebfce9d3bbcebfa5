"""The premise groups' blind re-check: every member asked the blind question through the gate (I/O)."""

import asyncio
import logging

from asgiref.sync import async_to_sync
from django.utils import timezone

from quiz.checking.kind_checks import asked_question
from review.models import PremiseCheck, PremiseGroup, PremiseMember
from verifier import policy
from verifier.backends import GateFailure
from verifier.gate import BlindCheck, Gate, GateItem

logger = logging.getLogger("review")


def _member_result(member: PremiseMember, check: BlindCheck, threshold: float) -> None:
    member.checked_at = timezone.now()
    member.threshold = threshold
    if check.reading is None:
        failure = check.failure or GateFailure("not_asked", "")
        member.status = PremiseCheck.UNCHECKED if failure.reason == "blind_off" else PremiseCheck.UNVERIFIED
        member.reason, member.message = failure.reason[:40], failure.message[:300]
        member.blind_probabilities, member.marked_probability, member.checker_chose = {}, None, ""
        return
    reading = check.reading
    member.blind_probabilities = {letter: round(p, 6) for letter, p in reading.probabilities.items()}
    member.marked_probability = round(reading.marked_probability, 6)
    member.checker_chose = reading.pick if reading.disagrees else ""
    member.reason = member.message = ""
    if reading.disagrees:
        member.status = PremiseCheck.DISAGREES
    elif not policy.passes(score=reading.marked_probability, threshold=threshold):
        member.status = PremiseCheck.DOUBTFUL
    else:
        member.status = PremiseCheck.AGREES


def _worst(checks: list[BlindCheck]) -> BlindCheck:
    """The ask that says least for the question: one the blind reader disagrees with, else the lowest reading,
    else a failure; no ask at all (a poll) is not asked."""
    if not checks:
        return BlindCheck(failure=GateFailure("blind_off", "the checker does not check this kind of question"))
    read = [check for check in checks if check.reading is not None]
    if len(read) < len(checks):
        return next(check for check in checks if check.reading is None)
    disagreeing = [check for check in read if check.reading.disagrees]
    if disagreeing:
        return disagreeing[0]
    return min(read, key=lambda check: check.reading.marked_probability)


async def _blind_checks(gate: Gate, items: list[GateItem]) -> list[BlindCheck]:
    async with gate:
        return list(await asyncio.gather(*(gate.blind_check(item) for item in items)))


def premise_groups_recheck(*, group_ids: list[int]) -> list[PremiseGroup]:
    """Re-check every member of these groups with the blind question (I/O: run it from a Celery task).

    Fails open like the gate: a failed call leaves that member `unverified` with the reason; nothing raises for
    a backend's fault.
    """
    groups = list(PremiseGroup.objects.filter(pk__in=group_ids).order_by("pk"))
    members = list(PremiseMember.objects.filter(group__in=groups).select_related("question").order_by("group_id", "id"))
    if not members:
        return groups
    gate = Gate.from_settings()
    unique = {member.question_id: member.question for member in members}
    # Each question as its kind puts it to the checker (quiz/kinds: a multi question is one ask per option);
    # a member's result is its worst ask's, and a kind the checker does not check stays unchecked.
    asked = {qid: asked_question(question, key=f"premise-q{qid}") for qid, question in unique.items()}
    items = [item for question in asked.values() for item in question.items]
    results = iter(async_to_sync(_blind_checks)(gate, items))
    checks = {qid: _worst([next(results) for _ in question.items]) for qid, question in asked.items()}
    for member in members:
        _member_result(member, checks[member.question_id], gate.threshold)
        member.save(
            update_fields=[
                "status",
                "blind_probabilities",
                "marked_probability",
                "checker_chose",
                "threshold",
                "reason",
                "message",
                "checked_at",
            ]
        )
    PremiseGroup.objects.filter(pk__in=[group.pk for group in groups]).update(checked_at=timezone.now())
    logger.info(
        "premise re-check: groups=%s members=%d %s",
        ",".join(str(group.pk) for group in groups),
        len(members),
        " ".join(
            f"{status}={sum(1 for m in members if m.status == status)}"
            for status in PremiseCheck.values
            if any(m.status == status for m in members)
        ),
    )
    return groups
