"""What a round's check found, in the words of whoever reads it: a host's "check my questions" and the writer keep
the counts (Round.check_counts), and the label is built from them in the reader's language when a page or an export
is made, never stored as text in one language.

The causes (verifier/causes.py) are said the same way everywhere: rejected by the checker (it answered, and said
no), not checked, checker too slow (timeouts), checker unreachable (connection errors), checker paused (the
breaker), checker's model changed, or an answer that could not be used."""

from collections import Counter
from collections.abc import Iterable

from django.utils.translation import gettext, ngettext

from verifier import causes

# A question's mark as the writer's job page keeps it (GenerationJob.question_marks): the cause, except that
# an unusable answer is "unverified" and no check is "unchecked", as they were called before causes were told apart.
UNVERIFIED_MARK, UNCHECKED_MARK = "unverified", "unchecked"


def mark_of_cause(cause: str) -> str:
    if cause == causes.UNUSABLE:
        return UNVERIFIED_MARK
    if cause == causes.NOT_CHECKED:
        return UNCHECKED_MARK
    return cause


def mark_label(mark: str) -> str:
    """A question's badge: what the checker did with it."""
    labels = {
        causes.PASSED: gettext("Passed the checker"),
        causes.REJECTED: gettext("Rejected by the checker"),
        causes.TOO_SLOW: gettext("Not verified: checker too slow"),
        causes.UNREACHABLE: gettext("Not verified: checker unreachable"),
        causes.PAUSED: gettext("Not verified: checker paused"),
        causes.MODEL_CHANGED: gettext("Not verified: the checker's model changed"),
        UNVERIFIED_MARK: gettext("Unverified"),
        "doubtful": gettext("Doubtful"),
    }
    return labels.get(mark, gettext("Not checked"))


def cause_sentence(cause: str) -> str:
    """Why the checker gave no verdict, as the end of a sentence ("… because %s")."""
    sentences = {
        causes.TOO_SLOW: gettext("the checker was too slow: it did not answer within its time budget"),
        causes.UNREACHABLE: gettext("the checker could not be reached"),
        causes.PAUSED: gettext("the checker failed too often in a row and is paused"),
        causes.MODEL_CHANGED: gettext("the checker's server now serves another model than the one configured"),
        causes.NOT_CHECKED: gettext("no checker was asked"),
    }
    return sentences.get(cause, gettext("the checker's answer could not be used"))


def counts_of(outcomes: Iterable[tuple[str, str]]) -> dict:
    """Round.check_counts from (outcome, reason) pairs of a round's questions: total, rejected, unverified (and
    how many of them per cause: too_slow, unreachable, paused, model_changed), unchecked."""
    found = Counter(causes.cause_of(outcome=outcome, reason=reason) for outcome, reason in outcomes)
    total = sum(found.values())
    if not total:
        return {}
    counts = {
        "total": total,
        "rejected": found[causes.REJECTED],
        "unverified": sum(found[cause] for cause in causes.UNVERIFIED_CAUSES),
        "unchecked": found[causes.NOT_CHECKED],
    }
    counts.update({cause: found[cause] for cause in causes.UNVERIFIED_CAUSES if cause != causes.UNUSABLE})
    return counts


def _unverified_parts(counts: dict, unverified: int) -> list[str]:
    # Literal strings, one per cause, so a translator's makemessages finds each.
    said = {
        causes.TOO_SLOW: lambda n: ngettext(
            "%(count)d not verified: checker too slow", "%(count)d not verified: checker too slow", n
        ),
        causes.UNREACHABLE: lambda n: ngettext(
            "%(count)d not verified: checker unreachable", "%(count)d not verified: checker unreachable", n
        ),
        causes.PAUSED: lambda n: ngettext(
            "%(count)d not verified: checker paused", "%(count)d not verified: checker paused", n
        ),
        causes.MODEL_CHANGED: lambda n: ngettext(
            "%(count)d not verified: the checker's model changed",
            "%(count)d not verified: the checker's model changed",
            n,
        ),
    }
    parts = []
    told = 0
    for cause, words in said.items():
        count = int(counts.get(cause) or 0)
        if count:
            told += count
            parts.append(words(count) % {"count": count})
    rest = unverified - told
    if rest > 0:
        parts.append(ngettext("%(count)d unverified", "%(count)d unverified", rest) % {"count": rest})
    return parts


def check_note(counts: dict) -> str:
    """e.g. "checked: 2 doubtful kept by the host, 1 not verified: checker too slow", "checked: all 5 passed", or
    "checked: all 10 rejected by the checker"; "" when there are no counts (the round was never checked that way)."""
    total = int(counts.get("total") or 0)
    if not total:
        return ""
    doubtful, rejected, unverified, unchecked = (
        int(counts.get(key) or 0) for key in ("doubtful", "rejected", "unverified", "unchecked")
    )
    if rejected == total:
        return ngettext(
            "checked: the %(count)d question was rejected by the checker",
            "checked: all %(count)d questions were rejected by the checker",
            total,
        ) % {"count": total}
    parts = []
    if doubtful:
        parts.append(
            ngettext("%(count)d doubtful kept by the host", "%(count)d doubtful kept by the host", doubtful)
            % {"count": doubtful}
        )
    if rejected:
        parts.append(
            ngettext("%(count)d rejected by the checker", "%(count)d rejected by the checker", rejected)
            % {"count": rejected}
        )
    if unverified:
        parts.extend(_unverified_parts(counts, unverified))
    if unchecked:
        parts.append(ngettext("%(count)d not checked", "%(count)d not checked", unchecked) % {"count": unchecked})
    if not parts:
        parts.append(ngettext("the %(count)d passed", "all %(count)d passed", total) % {"count": total})
    return gettext("checked: %(details)s") % {"details": ", ".join(parts)}


def slow_checker_warning(slow) -> str:
    """The generate page's warning when most of the checker's latest checks ran out of time
    (verifier.selectors.slow_checker), with the figures and the setting to change."""
    if slow is None:
        return ""
    return gettext(
        "The checker has been too slow: %(timed_out)d of its last %(of)d checks ran out of time (VERIFIER_TIMEOUT "
        "is %(timeout)s s), so those questions were played unverified. Whoever runs this server can raise "
        "VERIFIER_TIMEOUT, lower VERIFIER_CONCURRENCY, or use a faster checker."
    ) % {"timed_out": slow.timed_out, "of": slow.of, "timeout": f"{slow.timeout:g}"}
