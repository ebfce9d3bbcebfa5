"""What the host is told when a model-written round finishes: what happened, in the host's words, from the facts
the writer gathered (`RoundFacts`). Plain functions, no I/O; every string goes through gettext/ngettext so a
translation can follow.

One sentence per thing that happened, in the order it mattered: the model too slow (an attempt cut at its
deadline, and how much of it was written), the round's time budget used up, items the model wrote that were
invalid (and why), repeats of earlier questions, what the checker dropped, and which questions are played
unchecked because the checker could not check them (paused, unreachable, out of time, an answer it could not use);
and when the checker's server said another model answered than the pinned one, that the stricter bar applied.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.utils.translation import gettext, gettext_lazy, ngettext

from quiz.check_labels import cause_sentence
from verifier import causes as checker_causes
from verifier.breaker import UNAVAILABLE

# The host's page shows at most this much (GenerationJob.message).
MAX_MESSAGE = 500
# Distinct reasons quoted for invalid items; the page's "not used" list has every one.
MAX_REASONS = 2

CHECKER_UNAVAILABLE_MESSAGE = gettext_lazy("The checker is unavailable: this round is unchecked.")


@dataclass
class AttemptFacts:
    number: int
    asked: int
    # Items read from this attempt's reply, valid or not.
    written: int = 0
    timed_out: bool = False
    # The seconds it was given, and whether that was the rest of the job's budget rather than its own deadline.
    seconds: float = 0.0
    by_budget: bool = False


@dataclass
class RoundFacts:
    count: int
    played: int = 0
    attempts: list[AttemptFacts] = field(default_factory=list)
    job_budget: float = 0.0
    # The budget left too little for an attempt the round still needed.
    budget_stopped: bool = False
    invalid_reasons: list[str] = field(default_factory=list)
    duplicates: int = 0
    dropped: int = 0
    # A model or server error that ended the job (already in the host's words).
    error: str = ""
    # The gate's reasons for the played questions it could not check (outcome "unverified").
    unchecked_reasons: list[str] = field(default_factory=list)
    # (pinned, served) when the checker's server said another model than the pinned one answered.
    model_changed: tuple[str, str] | None = None


def seconds_text(value: float) -> str:
    """Seconds as a host reads them: whole from 10 on, else to a tenth ("2.9", "1", "60")."""
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.1f}".removesuffix(".0")


def _too_slow(facts: RoundFacts) -> list[str]:
    slow = [attempt for attempt in facts.attempts if attempt.timed_out]
    if not slow:
        return []
    written = sum(attempt.written for attempt in slow)
    asked = sum(attempt.asked for attempt in slow)
    values = {"seconds": seconds_text(slow[0].seconds), "written": written, "asked": asked}
    if len(slow) > 1:
        values["seconds"] = seconds_text(sum(attempt.seconds for attempt in slow))
        return [
            ngettext(
                "The model was too slow: %(attempts)d attempt was cut off after %(seconds)s s in all, with "
                "%(written)d of %(asked)d questions written.",
                "The model was too slow: %(attempts)d attempts were cut off after %(seconds)s s in all, with "
                "%(written)d of %(asked)d questions written.",
                len(slow),
            )
            % {**values, "attempts": len(slow)}
        ]
    if len(facts.attempts) > 1:
        text = ngettext(
            "The model was too slow: attempt %(attempt)d was cut off after %(seconds)s s, with %(written)d of "
            "%(asked)d question written.",
            "The model was too slow: attempt %(attempt)d was cut off after %(seconds)s s, with %(written)d of "
            "%(asked)d questions written.",
            asked,
        )
        return [text % {**values, "attempt": slow[0].number}]
    text = ngettext(
        "The model was too slow: it was cut off after %(seconds)s s, with %(written)d of %(asked)d question written.",
        "The model was too slow: it was cut off after %(seconds)s s, with %(written)d of %(asked)d questions written.",
        asked,
    )
    return [text % values]


def _budget(facts: RoundFacts) -> list[str]:
    if not facts.budget_stopped:
        return []
    attempts = len(facts.attempts)
    text = ngettext(
        "The round's time limit of %(seconds)s s was used up after %(attempts)d attempt.",
        "The round's time limit of %(seconds)s s was used up after %(attempts)d attempts.",
        attempts,
    )
    return [text % {"seconds": seconds_text(facts.job_budget), "attempts": attempts}]


def _reasons(facts: RoundFacts) -> str:
    """The most common reasons items were invalid, "; …" when there were more."""
    reasons = [reason for reason, _ in Counter(facts.invalid_reasons).most_common(MAX_REASONS)]
    return "; ".join(reasons) + ("; …" if len(set(facts.invalid_reasons)) > MAX_REASONS else "")


def _invalid(facts: RoundFacts) -> list[str]:
    count = len(facts.invalid_reasons)
    if not count:
        return []
    why = _reasons(facts)
    text = ngettext(
        "%(count)d question the model wrote was invalid (%(why)s).",
        "%(count)d questions the model wrote were invalid (%(why)s).",
        count,
    )
    return [text % {"count": count, "why": why}]


def _duplicates(facts: RoundFacts) -> list[str]:
    if not facts.duplicates:
        return []
    text = ngettext(
        "%(count)d question repeated an earlier one and was dropped.",
        "%(count)d questions repeated earlier ones and were dropped.",
        facts.duplicates,
    )
    return [text % {"count": facts.duplicates}]


def _why_unchecked(reason: str) -> str:
    cause = checker_causes.cause_of(outcome="unverified", reason=reason)
    if cause != checker_causes.UNUSABLE:
        return cause_sentence(cause)
    if reason == "http_status":
        return gettext("the checker's server answered with an error")
    if reason in ("no_api_key", "not_configured"):
        return gettext("the checker is not configured")
    if reason == "no_logprobs":
        return gettext("the checker's model gives no token probabilities to score with")
    if reason in ("no_yes_no", "not_yes_no"):
        return gettext("the checker's model did not answer yes or no")
    return gettext("the checker's answer could not be used (%(reason)s)") % {"reason": reason or "unknown"}


def model_changed_note(facts: RoundFacts) -> list[str]:
    if facts.model_changed is None:
        return []
    pinned, served = facts.model_changed
    return [
        gettext(
            "The checker's model changed (pinned %(pinned)s, served %(served)s): the stricter of the two models' "
            "thresholds was applied."
        )
        % {"pinned": pinned, "served": served}
    ]


def unchecked_note(facts: RoundFacts) -> list[str]:
    """Which played questions the checker could not check, and why."""
    reasons = facts.unchecked_reasons
    if not reasons:
        return []
    if facts.played and reasons.count(UNAVAILABLE) == facts.played:
        return [str(CHECKER_UNAVAILABLE_MESSAGE)]
    notes = []
    for reason, count in Counter(_why_unchecked(reason) for reason in reasons).most_common():
        if count == facts.played:
            notes.append(gettext("This round is played unchecked because %(why)s.") % {"why": reason})
            continue
        text = ngettext(
            "%(count)d question is played unchecked because %(why)s.",
            "%(count)d questions are played unchecked because %(why)s.",
            count,
        )
        notes.append(text % {"count": count, "why": reason})
    return notes


def _join(sentences: list[str], *, keep_last: bool = False) -> str:
    """The sentences as one message of at most MAX_MESSAGE characters; with `keep_last`, the last sentence (how
    many questions the round holds) is kept whole and the ones before it are cut to make room."""
    sentences = [sentence for sentence in sentences if sentence]
    if not keep_last or len(sentences) < 2:
        return " ".join(sentences)[:MAX_MESSAGE]
    last = sentences[-1]
    room = MAX_MESSAGE - len(last) - 1
    before = " ".join(sentences[:-1])
    if len(before) > room:
        before = before[: max(0, room - 1)].rstrip() + "…"
    return f"{before} {last}".strip()[:MAX_MESSAGE]


def full_message(facts: RoundFacts) -> str:
    sentences = unchecked_note(facts) + model_changed_note(facts)
    if facts.dropped:
        text = ngettext(
            "The checker removed %(count)d of the questions written; the rest are kept.",
            "The checker removed %(count)d of the questions written; the rest are kept.",
            facts.dropped,
        )
        sentences.append(text % {"count": facts.dropped})
    return _join(sentences + _duplicates(facts))


def short_message(facts: RoundFacts) -> str:
    """A round with fewer questions than asked for: every cause, then what is left."""
    causes = model_changed_note(facts) + _too_slow(facts) + _budget(facts) + _invalid(facts) + _duplicates(facts)
    if facts.error:
        causes.append(facts.error)
    values = {"played": facts.played, "count": facts.count, "dropped": facts.dropped}
    if facts.dropped and not causes:
        text = ngettext(
            "The checker removed %(dropped)d question, so this round has %(played)d of the %(count)d you asked for.",
            "The checker removed %(dropped)d questions, so this round has %(played)d of the %(count)d you asked for.",
            facts.dropped,
        )
        return _join([*unchecked_note(facts), text % values], keep_last=True)
    if facts.dropped:
        text = ngettext(
            "The checker removed %(dropped)d question.", "The checker removed %(dropped)d questions.", facts.dropped
        )
        causes.append(text % values)
    if not causes:
        text = ngettext(
            "The model wrote only %(played)d usable question of the %(count)d you asked for.",
            "The model wrote only %(played)d usable questions of the %(count)d you asked for.",
            facts.played,
        )
        return _join([*unchecked_note(facts), text % values], keep_last=True)
    text = ngettext(
        "This round has %(played)d usable question of the %(count)d you asked for.",
        "This round has %(played)d usable questions of the %(count)d you asked for.",
        facts.played,
    )
    return _join([*unchecked_note(facts), *causes, text % values], keep_last=True)


def ungated_message(facts: RoundFacts, *, checked: int) -> str:
    """The checker answered and rejected every question written: the round is played anyway, marked for review.
    A round shorter than asked says how many it holds."""
    text = ngettext(
        "The checker rejected the %(count)d question the model wrote; the round is played as written: the question "
        "is marked rejected by the checker and queued for review.",
        "The checker rejected all %(count)d questions the model wrote; the round is played as written: each "
        "question is marked rejected by the checker and queued for review.",
        checked,
    )
    found = _too_slow(facts) + _budget(facts) + _invalid(facts) + _duplicates(facts)
    sentences = [*model_changed_note(facts), *found, text % {"count": checked}]
    if facts.played < facts.count:
        sentences.append(_holds(facts))
    return _join(sentences, keep_last=facts.played < facts.count)


def _holds(facts: RoundFacts) -> str:
    return ngettext(
        "This round has %(played)d usable question of the %(count)d you asked for.",
        "This round has %(played)d usable questions of the %(count)d you asked for.",
        facts.played,
    ) % {"played": facts.played, "count": facts.count}


def _none_usable(facts: RoundFacts) -> list[str]:
    """Every item the model wrote was invalid: how many, and the first reasons."""
    count = len(facts.invalid_reasons)
    values = {"count": count, "why": _reasons(facts), "attempts": len(facts.attempts)}
    if len(facts.attempts) > 1:
        text = ngettext(
            "The model's %(attempts)d replies had %(count)d question, none usable: %(why)s.",
            "The model's %(attempts)d replies had %(count)d questions, none usable: %(why)s.",
            count,
        )
    else:
        text = ngettext(
            "The model's reply had %(count)d question, none usable: %(why)s.",
            "The model's reply had %(count)d questions, none usable: %(why)s.",
            count,
        )
    return [text % values]


def failed_message(facts: RoundFacts) -> str:
    """Nothing playable: the error that ended the job, or what went wrong on the way."""
    if facts.error:
        return _join([facts.error])
    if facts.invalid_reasons and not facts.duplicates:
        return _join([*_too_slow(facts), *_budget(facts), *_none_usable(facts), gettext("Try again.")])
    causes = _too_slow(facts) + _budget(facts) + _invalid(facts) + _duplicates(facts)
    if not causes:
        return gettext("The model did not write any usable question.")
    return _join([*causes, gettext("No usable question was written. Try again.")])
