"""Check my questions: every question of an existing round (a host's own, an import, a sample pack) sent through
the same gate as the writer's (backends, call budget, breaker, fail-open), as a generation job of kind "check",
so it runs where generation runs (quiz.generation.runner) and its page shows the same live progress.

The gate advises; the host decides. Nothing is removed from the round: each question gets a verdict (recorded
with `verifier.services.verdict_record`), the editor shows it, and the round's label says what happened.
A question edited afterwards is a new question row (quiz.pages.host_rounds), so its verdict is gone with the edit.

The async run touches the database only through small sync functions wrapped in `sync_to_async`.
"""

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from core import cost
from quiz.check_labels import cause_sentence, mark_label, mark_of_cause
from quiz.checking.kind_checks import AskedQuestion, asked_question, question_check
from quiz.exceptions import QuizError
from quiz.jobs import conf as quiz_conf
from quiz.jobs.events import generation_changed
from quiz.jobs.job_state import job_broadcast, job_fail, job_heartbeat, job_is_stale
from quiz.models import CheckStatus, GenerationJob, GenerationStatus, JobKind, Question, Round
from quiz.selectors import generation_snapshot
from quiz.validation import LANGUAGES
from verifier import causes
from verifier import conf as gate_conf
from verifier.breaker import UNAVAILABLE
from verifier.conf import model_prices
from verifier.gate import ROUND_BUDGET, Gate, GateDecision
from verifier.models import Verdict, VerdictOutcome
from verifier.registry import gate_enabled
from verifier.services import verdict_record
from verifier.usage import decision_usages

logger = logging.getLogger(__name__)

# What the host is shown per question: the gate's outcome, with "dropped" said the host's way.
PASSED, DOUBTFUL, UNVERIFIED, UNCHECKED = "passed", "doubtful", "unverified", "unchecked"
_MARK_OF_OUTCOME = {
    VerdictOutcome.PASSED: PASSED,
    VerdictOutcome.DROPPED: DOUBTFUL,
    VerdictOutcome.UNVERIFIED: UNVERIFIED,
    VerdictOutcome.UNCHECKED: UNCHECKED,
}


@dataclass(frozen=True)
class CheckMark:
    """A question's latest verdict as the host's editor shows it."""

    mark: str  # passed / doubtful / unverified / unchecked
    reason: str
    message: str
    score: float | None
    threshold: float
    probabilities: dict[str, float]
    backend: str
    model_id: str
    # The pinned model the gate asked for; it differs from `model_id` when the server served another one.
    requested_model_id: str = ""

    @property
    def model_changed(self) -> bool:
        return bool(self.requested_model_id) and bool(self.model_id) and self.model_id != self.requested_model_id

    @property
    def cause(self) -> str:
        """What the checker did (verifier/causes.py): passed, rejected, too_slow, unreachable, paused, ..."""
        return causes.cause_of(outcome=_OUTCOME_OF_MARK.get(self.mark, "unchecked"), reason=self.reason)

    @property
    def label(self) -> str:
        """The badge: "Doubtful" for what the host keeps or removes, else what the checker did."""
        if self.mark == DOUBTFUL:
            return mark_label(DOUBTFUL)
        return mark_label(mark_of_cause(self.cause))

    @property
    def why(self) -> str:
        """The host's sentence for a doubtful or unverified question."""
        if self.mark == DOUBTFUL:
            return self.message or gettext("score %(score)s is below the threshold %(threshold)s") % {
                "score": f"{self.score:.2f}",
                "threshold": f"{self.threshold:.2f}",
            }
        if self.mark in (UNVERIFIED, UNCHECKED):
            cause = self.cause
            if cause == causes.UNUSABLE:
                words = gettext("the checker's answer could not be used (%(reason)s)") % {
                    "reason": self.reason or "unknown"
                }
            else:
                words = cause_sentence(cause)
            # A question out of the round's budget: the checker's own message adds nothing the words don't say.
            if self.reason == ROUND_BUDGET or not self.message or self.message in words:
                return words
            return f"{words}: {self.message}"
        return self.message


_OUTCOME_OF_MARK = {mark: str(outcome) for outcome, mark in _MARK_OF_OUTCOME.items()}


def _mark_of(verdict: Verdict) -> CheckMark:
    return CheckMark(
        mark=_MARK_OF_OUTCOME.get(verdict.outcome, UNCHECKED),
        reason=verdict.reason,
        message=verdict.message,
        score=verdict.score,
        threshold=verdict.threshold,
        probabilities=dict(verdict.probabilities or {}),
        backend=verdict.backend,
        model_id=verdict.model_id,
        requested_model_id=verdict.requested_model_id,
    )


def question_check_marks(*, question_ids: list[int]) -> dict[int, CheckMark]:
    """question id -> its latest verdict; a question never checked is absent."""
    latest: dict[int, Verdict] = {}
    for verdict in Verdict.objects.filter(question_id__in=question_ids).order_by("created_at", "id"):
        latest[verdict.question_id] = verdict
    return {question_id: _mark_of(verdict) for question_id, verdict in latest.items()}


def question_check_history(*, question_id: int) -> list[tuple[datetime, CheckMark]]:
    """Every verdict the gate gave the question, newest first, each with when it was given."""
    verdicts = Verdict.objects.filter(question_id=question_id).order_by("-created_at", "-id")
    return [(verdict.created_at, _mark_of(verdict)) for verdict in verdicts]


def round_check_marks(*, round_: Round) -> list[CheckMark | None]:
    """Per position of the round, its question's latest verdict (None: never checked)."""
    ids = list(round_.entries.values_list("question_id", flat=True))
    marks = question_check_marks(question_ids=ids)
    return [marks.get(question_id) for question_id in ids]


def round_check_summary(marks: list[CheckMark | None]) -> tuple[str, dict]:
    """(check status, counts) of a round from its questions' latest verdicts, e.g. (DOUBTFUL_KEPT, {"total": 5,
    "doubtful": 2, ...}), which quiz.check_labels.check_note puts into words ("checked: 2 doubtful kept by the
    host") in the reader's language. Never checked: (UNCHECKED, {})."""
    counts = Counter(mark.mark if mark is not None else UNCHECKED for mark in marks)
    total = len(marks)
    if not total or counts[UNCHECKED] == total:
        return CheckStatus.UNCHECKED, {}
    summary = {
        "total": total,
        "doubtful": counts[DOUBTFUL],
        "unverified": counts[UNVERIFIED],
        "unchecked": counts[UNCHECKED],
    }
    # Why the unverified ones are: the checker too slow, unreachable, paused, its model changed.
    by_cause = Counter(mark.cause for mark in marks if mark is not None and mark.mark == UNVERIFIED)
    summary.update(
        {cause: by_cause[cause] for cause in causes.UNVERIFIED_CAUSES if cause != causes.UNUSABLE and by_cause[cause]}
    )
    if counts[DOUBTFUL]:
        status = CheckStatus.DOUBTFUL_KEPT
    elif counts[UNVERIFIED] == total:
        status = CheckStatus.UNVERIFIED
    elif counts[UNVERIFIED] or counts[UNCHECKED]:
        status = CheckStatus.PARTLY_UNVERIFIED
    else:
        status = CheckStatus.CHECKED
    return status, summary


def round_check_refresh(*, round_: Round) -> Round:
    """Set the round's status and label from its questions' verdicts (after a check, or an edit of a checked
    round: the host removed the doubtful ones, or changed one and so cleared its verdict)."""
    status, counts = round_check_summary(round_check_marks(round_=round_))
    round_.check_status, round_.check_counts = status, counts
    round_.save(update_fields=["check_status", "check_counts"])
    return round_


def round_check_job_create(*, round_: Round, owner_key: str) -> GenerationJob:
    """A queued check of every question of the round; the caller starts it
    (`quiz.generation.runner.generation_enqueue`). A check of this round already queued or running is returned
    instead of a second one."""
    if not owner_key:
        raise QuizError("This browser session has no key; reload the page.")
    if not gate_enabled():
        raise QuizError("No checker is configured (VERIFIER_BACKEND is off), so the questions cannot be checked.")
    if problem := _pin_problem():
        raise QuizError(problem)
    with transaction.atomic():
        Round.objects.select_for_update().filter(pk=round_.pk).first()
        running = GenerationJob.objects.filter(
            kind=JobKind.CHECK, round=round_, status__in=(GenerationStatus.QUEUED, GenerationStatus.RUNNING)
        ).first()
        if running is not None and not (running.status == GenerationStatus.RUNNING and job_is_stale(running)):
            return running
        # One check at a time per browser session: the checker's calls are shared by every host.
        busy = GenerationJob.objects.filter(
            kind=JobKind.CHECK,
            owner_key=owner_key,
            status__in=(GenerationStatus.QUEUED, GenerationStatus.RUNNING),
            updated_at__gte=timezone.now() - timedelta(seconds=quiz_conf.stale_after_seconds()),
        )
        if busy.exists():
            raise QuizError("Another round is being checked in this browser; try again when it has finished.")
        count = round_.entries.count()
        if not count:
            raise QuizError("This round has no questions to check.")
        return GenerationJob.objects.create(
            kind=JobKind.CHECK,
            round=round_,
            owner_key=owner_key,
            topic=round_.title[:200],
            count=count,
            asked=count,
            gated=True,
            model_id=gate_conf.model_id()[:200],
        )


def _pin_problem() -> str:
    model = gate_conf.model_id()
    if not model:
        return "The checker has no pinned model id (VERIFIER_MODEL)."
    if gate_conf.is_model_alias(model) and not gate_conf.allow_model_alias():
        return f"VERIFIER_MODEL {model!r} is an alias; pin a dated model id."
    return ""


# -- running ----------------------------------------------------------------------------------------------


async def check_run_async(*, job_id: int) -> list[GateDecision] | None:
    started = await sync_to_async(_check_start)(job_id=job_id)
    if started is None:
        return None
    items, gate = started
    record = sync_to_async(_check_record)
    decisions: list[GateDecision] = []
    heartbeat = asyncio.create_task(job_heartbeat(job_id))
    try:
        async with gate:
            # Nothing more is being written: every check has one call budget (VERIFIER_TIMEOUT) from now.
            gate.seal(writing=False)

            async def one(question_id: int, asked: AskedQuestion) -> tuple[int, GateDecision]:
                # Every ask of the question at once (quiz/checking/kind_checks.py); one verdict for the question.
                return question_id, await question_check(gate, asked)

            tasks = [asyncio.create_task(one(question_id, asked)) for question_id, asked in items]
            try:
                for finished in asyncio.as_completed(tasks):
                    question_id, decision = await finished
                    decisions.append(decision)
                    if not await record(job_id=job_id, question_id=question_id, decision=decision):
                        break  # cancelled by the host
            finally:
                # Calls still in flight end before the gate closes its client.
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    except Exception:
        logger.exception("check %s failed", job_id)
        await sync_to_async(job_fail)(job_id=job_id, message="Something went wrong while checking. Try again.")
        return None
    finally:
        heartbeat.cancel()
    await sync_to_async(_check_finish)(job_id=job_id, decisions=decisions)
    return decisions


def _check_start(*, job_id: int) -> tuple[list[tuple[int, AskedQuestion]], Gate] | None:
    job = GenerationJob.objects.filter(pk=job_id, kind=JobKind.CHECK).first()
    if job is None or job.round_id is None:
        return None
    takeover = job.status == GenerationStatus.RUNNING and job_is_stale(job)
    if job.status != GenerationStatus.QUEUED and not takeover:
        return None
    if problem := _pin_problem():
        job_fail(job_id=job_id, message=problem)
        return None
    gate = Gate.from_settings()
    updated = GenerationJob.objects.filter(pk=job_id, status=job.status, updated_at=job.updated_at).update(
        status=GenerationStatus.RUNNING,
        gated=gate.enabled,
        checked=0,
        dropped=0,
        revision=F("revision") + 1,
        updated_at=timezone.now(),
    )
    if not updated:
        return None
    job_broadcast(job_id)
    questions: list[Question] = [entry.question for entry in job.round.entries.select_related("question")]
    language = LANGUAGES.get(job.round.language, "")
    items = []
    for question in questions:
        # What the checker is asked about each kind (quiz/kinds); a kind it is not asked about stays "not checked".
        asked = asked_question(question, key=f"q{question.pk}", language=language)
        if asked.asks:
            items.append((question.pk, asked))
    return items, gate


@transaction.atomic
def _check_record(*, job_id: int, question_id: int, decision: GateDecision) -> bool:
    """One question's verdict stored and counted; False when the job is no longer running (cancelled)."""
    updated = GenerationJob.objects.filter(pk=job_id, status=GenerationStatus.RUNNING).update(
        checked=F("checked") + 1,
        dropped=F("dropped") + (0 if decision.playable else 1),
        revision=F("revision") + 1,
        updated_at=timezone.now(),
    )
    if not updated:
        return False
    verdict_record(question_id=question_id, decision=decision)
    job = GenerationJob.objects.get(pk=job_id)
    generation_changed(job_id=job_id, snapshot=generation_snapshot(job))
    return True


@transaction.atomic
def _check_finish(*, job_id: int, decisions: list[GateDecision] = ()) -> None:
    job = GenerationJob.objects.select_for_update().get(pk=job_id)
    # What the checks cost (core/cost.py), kept with the job: the host's page shows it in one line.
    job.cost = cost.round_cost([usage for d in decisions for usage in decision_usages(d)], model_prices())
    if job.round is not None and job.status == GenerationStatus.CANCELLED:
        # The host stopped it: what was checked until then is on record, and the label says so.
        round_check_refresh(round_=job.round)
        job.save(update_fields=["cost"])
        return
    if job.status != GenerationStatus.RUNNING or job.round is None:
        return
    round_ = round_check_refresh(round_=job.round)
    ids = list(round_.entries.values_list("question_id", flat=True))
    marks = question_check_marks(question_ids=ids)
    job.question_marks = {str(question_id): (marks[question_id].mark if question_id in marks else UNCHECKED)
                          for question_id in ids}  # fmt: skip
    job.message = check_message(list(marks.values()), total=len(ids))[:500]
    job.status = GenerationStatus.DONE
    job.revision += 1
    job.finished_at = timezone.now()
    job.save()
    generation_changed(job_id=job_id, snapshot=generation_snapshot(job))


def check_message(marks: list[CheckMark], *, total: int) -> str:
    """What the host is told when the check is over."""
    counts = Counter(mark.mark for mark in marks)
    unavailable = sum(1 for mark in marks if mark.reason == UNAVAILABLE)
    if total and unavailable == total:
        return gettext("The checker is unavailable: these questions are unverified. The round can still be played.")
    notes = []
    if counts[DOUBTFUL]:
        notes.append(
            gettext(
                "The checker finds %(doubtful)d of the %(total)d questions doubtful: read why under each one in the "
                "editor, then keep or remove it (the round keeps it until you do)."
            )
            % {"doubtful": counts[DOUBTFUL], "total": total}
        )
    unverified = [mark for mark in marks if mark.mark == UNVERIFIED]
    for cause, count in Counter(mark.cause for mark in unverified).most_common():
        notes.append(
            ngettext(
                "%(count)d could not be verified because %(why)s; the round can still be played.",
                "%(count)d could not be verified because %(why)s; the round can still be played.",
                count,
            )
            % {"count": count, "why": cause_sentence(cause)}
        )
    if not notes:
        return gettext("All %(total)d questions passed the checker.") % {"total": total}
    return " ".join(notes)
