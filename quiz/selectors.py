import threading
import time
from dataclasses import dataclass, field
from typing import Any

from quiz.check_labels import check_note
from quiz.kinds import DEFAULT
from quiz.models import CheckStatus, GenerationJob, Pack, Question, Round, RoundQuestion
from quiz.pictures.images import image_url


def round_question_list(*, round_id: int) -> list[Question]:
    return [entry.question for entry in Round.objects.get(pk=round_id).entries.select_related("question")]


@dataclass(frozen=True)
class Readiness:
    """How much of a round a game can play: `ready` questions, more may come while `writing` (the writer and the
    gate are still at it), `expected` of them were asked for (None: not a round written that way)."""

    ready: int
    writing: bool
    expected: int | None


def round_readiness(*, round_id: int) -> Readiness:
    writing, expected = Round.objects.filter(pk=round_id).values_list("writing", "expected_count").get()
    return Readiness(ready=RoundQuestion.objects.filter(round_id=round_id).count(), writing=writing, expected=expected)


def round_question_at(*, round_id: int, position: int) -> Question:
    return Question.objects.get(entries__round_id=round_id, entries__position=position)


@dataclass(frozen=True)
class QuestionFacts:
    """What the live game shows and judges of one question of a round."""

    question_id: int
    text: str
    options: tuple[str, ...]
    correct_index: int
    explanation: str
    source: str
    # Its picture, as the screens show it: {"url", "alt"}; None without one.
    image: dict | None = None
    kind: str = DEFAULT
    key: dict = field(default_factory=dict)
    # Its own time in seconds (an imported Kahoot! or Quizizz time, the editor's); None: the room's timer.
    seconds: int | None = None

    @property
    def option_count(self) -> int:
        return len(self.options)


FACTS_TTL = 10.0
_facts: dict[tuple[int, int], tuple[float, QuestionFacts]] = {}
_facts_lock = threading.Lock()


def round_question_facts(*, round_id: int, position: int) -> QuestionFacts:
    """One question of a round as the game uses it, kept for a few seconds: a room's 20 answers and every
    broadcast of its snapshot need it. A miss reads the whole round in one query (a snapshot counts the round's
    questions by their kinds, "Question 3 of 10" without its slides), so a round costs one query, not one a
    question."""
    key, now = (round_id, position), time.monotonic()
    with _facts_lock:
        cached = _facts.get(key)
    if cached and now - cached[0] < FACTS_TTL:
        return cached[1]
    loaded = {
        entry.position: _facts_of(entry.question)
        for entry in RoundQuestion.objects.filter(round_id=round_id).select_related("question")
    }
    if position not in loaded:
        raise Question.DoesNotExist(f"Round {round_id} has no question at position {position}.")
    with _facts_lock:
        if len(_facts) >= 500:  # every round ever played would stay otherwise: drop the expired ones
            for stale in [k for k, (at, _) in _facts.items() if now - at >= FACTS_TTL]:
                del _facts[stale]
        for at_position, facts in loaded.items():
            _facts[(round_id, at_position)] = (now, facts)
    return loaded[position]


def _facts_of(question: Question) -> QuestionFacts:
    return QuestionFacts(
        question_id=question.pk,
        text=question.text,
        options=tuple(question.options),
        correct_index=question.correct_index,
        explanation=question.explanation,
        source=question.source,
        image={"url": image_url(question.image_name), "alt": question.image_alt} if question.image_name else None,
        kind=question.kind,
        key=dict(question.key or {}),
        seconds=question.seconds,
    )


def round_question_facts_cached() -> int:
    """How many questions this process keeps (bounded: expired ones go once there are 500)."""
    with _facts_lock:
        return len(_facts)


def round_question_facts_forget_all() -> None:
    """This process forgets every question it kept (a test database that rolls back reuses round ids)."""
    with _facts_lock:
        _facts.clear()


def round_question_facts_forget(*, round_id: int) -> None:
    """A round's questions were replaced: this process stops using what it kept (others within the TTL)."""
    with _facts_lock:
        for key in [key for key in _facts if key[0] == round_id]:
            del _facts[key]


def pack_list(*, language_first: str | None = None) -> list[Pack]:
    """The sample packs by title; with `language_first`, the packs in that language come first (a German page
    offers the German pack before the English ones)."""
    packs = list(Pack.objects.all())
    if language_first:
        packs.sort(key=lambda pack: pack.language != language_first)  # stable: by title within each group
    return packs


def host_round_list(*, owner_key: str) -> list[Round]:
    if not owner_key:
        return []
    return list(Round.objects.filter(owner_key=owner_key))


def generation_snapshot(job: GenerationJob) -> dict[str, Any]:
    """The small state a host's page shows; sent on connect and after every change."""
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "finished": job.finished,
        "revision": job.revision,
        "count": job.count,
        "asked": job.asked,
        "written": job.written,
        "checked": job.checked,
        "dropped": job.dropped,
        "invalid": job.invalid,
        "duplicates": job.duplicates,
        "attempt": job.attempt,
        "takeovers": job.takeovers,
        "gated": job.gated,
        "message": job.message,
        "round_id": job.round_id,
        "play_url": f"/?round={job.round_id}" if job.round_id else "",
        # Questions ready to play (passed the gate, in order) while the rest is still being written.
        "ready": RoundQuestion.objects.filter(round_id=job.round_id).count() if job.round_id else 0,
    }


def generation_round_questions(*, job: GenerationJob) -> list[tuple[Question, str]]:
    """The round's questions with how each was checked, as shown to the host."""
    if job.round_id is None:
        return []
    marks = job.question_marks or {}
    entries = Round.objects.get(pk=job.round_id).entries.select_related("question")
    return [(entry.question, marks.get(str(entry.question_id), "unchecked")) for entry in entries]


def round_check_label(*, status: str, counts: dict) -> str:
    """What the host's screens say about how a round was checked (Round.check_label), in the active language."""
    return check_note(counts) or str(CheckStatus(status).label if status in CheckStatus.values else status)
