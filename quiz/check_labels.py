"""What a round's check found, in the words of whoever reads it: a host's "check my questions" keeps the counts
(Round.check_counts), and the label is built from them in the reader's language when a page or an export is made,
never stored as text in one language."""

from django.utils.translation import gettext, ngettext


def check_note(counts: dict) -> str:
    """e.g. "checked: 2 doubtful kept by the host, 1 unverified", or "checked: all 5 passed"; "" when there are no
    counts (the round was never checked that way)."""
    total = int(counts.get("total") or 0)
    if not total:
        return ""
    doubtful, unverified, unchecked = (int(counts.get(key) or 0) for key in ("doubtful", "unverified", "unchecked"))
    parts = []
    if doubtful:
        parts.append(
            ngettext("%(count)d doubtful kept by the host", "%(count)d doubtful kept by the host", doubtful)
            % {"count": doubtful}
        )
    if unverified:
        parts.append(ngettext("%(count)d unverified", "%(count)d unverified", unverified) % {"count": unverified})
    if unchecked:
        parts.append(ngettext("%(count)d not checked", "%(count)d not checked", unchecked) % {"count": unchecked})
    if not parts:
        parts.append(ngettext("the %(count)d passed", "all %(count)d passed", total) % {"count": total})
    return gettext("checked: %(details)s") % {"details": ", ".join(parts)}
