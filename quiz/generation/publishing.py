"""What a writing job publishes: questions appended to its round while the rest is still being written, the
round finished when the writer is done (what the gate dropped kept for review), and what a cancelled job had
published taken back. Each is one transaction; `quiz.generation.jobs` runs the job and calls these."""

from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from quiz.generation.round_cost import outcome_cost
from quiz.generation.write_outcome import Candidate, Mark, check_counts, mark_of, round_status
from quiz.generation.writer import WriteOutcome
from quiz.jobs.events import generation_changed
from quiz.jobs.job_state import round_writing_end
from quiz.models import (
    CheckStatus,
    GenerationJob,
    GenerationStatus,
    JobKind,
    Provenance,
    Question,
    Round,
    RoundQuestion,
)
from quiz.selectors import generation_snapshot
from quiz.services import question_create, round_create
from quiz.signals import round_generated
from verifier.conf import model_prices
from verifier.services import verdict_record


def _add_questions(
    *,
    job: GenerationJob,
    round_: Round,
    candidates: list[Candidate],
    marks: dict[str, Mark],
    gated: bool,
    published: dict[str, int],
) -> list[Candidate]:
    """Append `candidates` to the round in order, never past the count asked for; returns those added."""
    position = round_.entries.count()
    added = candidates[: max(0, job.count - position)]
    for candidate in added:
        question = _question_store(job=job, candidate=candidate, gated=gated)
        RoundQuestion.objects.create(round=round_, question=question, position=position)
        position += 1
        published[candidate.key] = question.pk
        job.question_marks = {**(job.question_marks or {}), str(question.pk): marks[candidate.key]}
    if gated and added:
        round_.check_counts = _counts_add(round_.check_counts, check_counts(added))
    return added


def _question_store(*, job: GenerationJob, candidate: Candidate, gated: bool) -> Question:
    question = question_create(
        data=candidate.data,
        provenance=Provenance.MODEL,
        model_id=job.model_id,
        served_model_id=candidate.served_model,
    )
    if gated and candidate.decision is not None:
        verdict_record(question_id=question.pk, decision=candidate.decision)
    return question


def _counts_add(counts: dict, more: dict) -> dict:
    return {key: counts.get(key, 0) + more.get(key, 0) for key in {*counts, *more}}


def _round_for(job: GenerationJob) -> Round:
    """The job's round: created, still being written, with its first question to publish."""
    if job.round_id is not None:
        return Round.objects.select_for_update().get(pk=job.round_id)
    round_ = round_create(
        title=_round_title(job),
        questions=[],
        provenance=Provenance.MODEL,
        check_status=CheckStatus.UNCHECKED,
        owner_key=job.owner_key,
        language=job.language,
    )
    round_.writing, round_.expected_count = True, job.count
    round_.save(update_fields=["writing", "expected_count"])
    job.round = round_
    return round_


def job_publish(*, job_id: int, candidates: list[Candidate], gated: bool, published: dict[str, int]) -> None:
    """Questions ready to play while the rest is still being written: appended to the round (created at the first),
    which a game may already be playing; `published` learns what was stored once it is committed. Nothing once the
    job is no longer running (cancelled)."""
    stored: dict[str, int] = {}
    with transaction.atomic():
        _job_publish_stored(job_id=job_id, candidates=candidates, gated=gated, published=stored)
    published.update(stored)


def _job_publish_stored(*, job_id: int, candidates: list[Candidate], gated: bool, published: dict[str, int]) -> None:
    job = GenerationJob.objects.select_for_update().get(pk=job_id)
    if job.status != GenerationStatus.RUNNING:
        return
    round_ = _round_for(job)
    marks = {c.key: mark_of(c.decision) for c in candidates}
    if not _add_questions(job=job, round_=round_, candidates=candidates, marks=marks, gated=gated, published=published):
        return
    round_.check_status = round_status(list(job.question_marks.values()), gated=gated)
    round_.save(update_fields=["check_status", "check_counts"])
    job.revision += 1
    job.save(update_fields=["round", "question_marks", "revision", "updated_at"])
    generation_changed(job_id=job_id, snapshot=generation_snapshot(job))


@transaction.atomic
def job_finish(*, job_id: int, outcome: WriteOutcome, gated: bool, published: dict[str, int] | None = None) -> None:
    published = {} if published is None else published
    job = GenerationJob.objects.select_for_update().get(pk=job_id)
    if job.status != GenerationStatus.RUNNING:
        # Cancelled meanwhile: generation_cancel dealt with what was published.
        return
    progress = outcome.progress
    job.asked, job.written, job.checked = progress.asked, progress.written, progress.checked
    job.dropped, job.invalid, job.duplicates, job.attempt, job.problems = (
        progress.dropped,
        progress.invalid,
        progress.duplicates,
        progress.attempt,
        progress.problems,
    )
    job.revision += 1
    job.finished_at = timezone.now()
    job.message = outcome.message[:500]
    job.cost = outcome_cost(outcome, model_prices())
    if not outcome.playable:
        job.status = GenerationStatus.CANCELLED if outcome.kind == "cancelled" else GenerationStatus.FAILED
        job.save()
        # What a run before this one published stays playable; the round is written no further.
        round_writing_end(round_id=job.round_id)
        generation_changed(job_id=job_id, snapshot=generation_snapshot(job))
        return

    round_ = _round_for(job)
    # What was not published while writing (a question whose check ended with the attempt), in order; the
    # all-dropped fallback only for a round with nothing in it yet.
    rest = [c for c in outcome.played if c.key not in published]
    ungated = outcome.kind == "ungated" and not round_.entries.exists()
    if outcome.kind == "ungated" and not ungated:
        rest = []
    _add_questions(job=job, round_=round_, candidates=rest, marks=outcome.marks, gated=gated, published=published)
    # With the gate on, what it dropped is kept too (with its verdict) so it waits in the review queue.
    dropped = [c for c in outcome.candidates if gated and c.decision and not c.decision.playable]
    for candidate in dropped:
        if candidate.key not in published:
            published[candidate.key] = _question_store(job=job, candidate=candidate, gated=gated).pk
    if ungated:
        round_.check_status, round_.check_counts = outcome.check_status, outcome.check_counts
    else:
        round_.check_status = round_status(list(job.question_marks.values()), gated=gated)
    round_.writing = False
    round_.cost = job.cost
    round_.save(update_fields=["check_status", "check_counts", "writing", "cost"])
    # Round-mates of what the gate dropped may rest on the same wrong premise: grouped and re-checked blind.
    dropped_ids = [published[c.key] for c in dropped]
    if gated and dropped_ids:
        round_generated.send(sender=GenerationJob, round_id=round_.pk, dropped_ids=dropped_ids)
    job.status = GenerationStatus.DONE
    job.save()
    generation_changed(job_id=job_id, snapshot=generation_snapshot(job))


def _round_title(job: GenerationJob) -> str:
    if job.topic:
        return job.topic
    return f"From {job.source_name}" if job.source_name else "From a source text"


def published_discard(*, job_id: int) -> None:
    """A cancelled job keeps nothing half-made: what it published goes, unless a game already uses it (then the
    game ends with those questions)."""
    round_id = GenerationJob.objects.filter(pk=job_id, kind=JobKind.WRITE).values_list("round_id", flat=True).first()
    # Only a round this job was writing: a check job's round is the host's own.
    if round_id is None or not Round.objects.filter(pk=round_id, writing=True).exists():
        return
    question_ids = list(RoundQuestion.objects.filter(round_id=round_id).values_list("question_id", flat=True))
    try:
        with transaction.atomic():
            Round.objects.filter(pk=round_id).delete()
            for question in Question.objects.filter(pk__in=question_ids):
                question.verdicts.all().delete()
                question.delete()
    except ProtectedError:
        round_writing_end(round_id=round_id)
