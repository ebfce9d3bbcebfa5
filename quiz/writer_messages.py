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

from verifier.breaker import UNAVAILABLE, UNAVAILABLE_REASONS
from verifier.gate import ROUND_BUDGET

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


def _invalid(facts: RoundFacts) -> list[str]:
    count = len(facts.invalid_reasons)
    if not count:
        return []
    reasons = [reason for reason, _ in Counter(facts.invalid_reasons).most_common(MAX_REASONS)]
    why = "; ".join(reasons) + ("; …" if len(set(facts.invalid_reasons)) > MAX_REASONS else "")
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
    if reason == UNAVAILABLE:
        return gettext("the checker failed too often in a row and is paused")
    if reason == ROUND_BUDGET:
        return gettext("the checker did not answer within its time budget")
    if reason in UNAVAILABLE_REASONS or reason == "transport_error":
        return gettext("the checker could not be reached")
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


def _join(sentences: list[str]) -> str:
    return " ".join(sentence for sentence in sentences if sentence)[:MAX_MESSAGE]


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
        return _join([*unchecked_note(facts), text % values])
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
        return _join([*unchecked_note(facts), text % values])
    text = ngettext(
        "This round has %(played)d usable question of the %(count)d you asked for.",
        "This round has %(played)d usable questions of the %(count)d you asked for.",
        facts.played,
    )
    return _join([*unchecked_note(facts), *causes, text % values])


def ungated_message(facts: RoundFacts, *, checked: int) -> str:
    """The checker dropped every question written: the round is played anyway, marked for review."""
    text = ngettext(
        "The checker rejected the %(count)d question the model wrote, so this round is played unchecked: it is "
        "marked unverified and queued for review.",
        "The checker rejected all %(count)d questions the model wrote, so this round is played unchecked: it is "
        "marked unverified and queued for review.",
        checked,
    )
    causes = _too_slow(facts) + _budget(facts) + _invalid(facts) + _duplicates(facts)
    return _join([*model_changed_note(facts), *causes, text % {"count": checked}])


def failed_message(facts: RoundFacts) -> str:
    """Nothing playable: the error that ended the job, or what went wrong on the way."""
    if facts.error:
        return _join([facts.error])
    causes = _too_slow(facts) + _budget(facts) + _invalid(facts) + _duplicates(facts)
    if not causes:
        return gettext("The model did not write any usable question.")
    return _join([*causes, gettext("No usable question was written. Try again.")])
