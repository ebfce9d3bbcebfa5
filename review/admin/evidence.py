"""What a question's page in the review queue shows: each evidence block's rows, read from the database as plain
values for its template (templates/admin/review/reviewitem/evidence/)."""

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext

from quiz.models import Question
from quiz.validation import OPTION_LETTERS
from review.models import Flag, FlagKind, PremiseCheck, PremiseMember, Review
from review.selectors import question_flags, question_premise_groups
from verifier import causes
from verifier.models import Verdict

NONE = "—"


def asked_for(served: str | None, requested: str | None) -> str:
    """A note when the server served another model than the one asked for."""
    if requested and served != requested:
        return f" (asked for {requested}: mismatch)"
    return ""


def model_changed_note(served: str | None, requested: str | None) -> str:
    """The reviewer's sentence when the checker's server served another model than the pinned one, or ""."""
    if not requested or not served or served == requested:
        return ""
    return gettext("the checker's model changed (pinned %(pinned)s, served %(served)s)") % {
        "pinned": requested,
        "served": served,
    }


def rate(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.0f}%"


def _letter_index(value: object) -> int | None:
    if isinstance(value, str) and len(value) == 1 and value in OPTION_LETTERS:
        return OPTION_LETTERS.index(value)
    return None


def asked_of(details: dict, question: Question) -> tuple[list[str], int, str]:
    """(options, the marked one, what was asked) of the ask that decided a verdict: a question is checked as the
    single-choice asks its kind makes of it (quiz/checking/kind_checks.py; a `multi` question's are Yes/No, one per
    option), recorded in the verdict's `details`. A verdict without them: the question's own options, "" asked."""
    asks, index = details.get("asks"), details.get("decided_by")
    if isinstance(asks, list) and isinstance(index, int) and 0 <= index < len(asks) and isinstance(asks[index], dict):
        ask = asks[index]
        options, marked = ask.get("options"), ask.get("correct_index")
        if isinstance(options, list) and isinstance(marked, int):
            return [str(option) for option in options], marked, str(ask.get("claim") or "")
    return list(question.options), question.correct_index, ""


def blind_summary(details: dict, options: list) -> str:
    """One line for a verdict's blind answer: P(marked), and the option the checker chose if it disagreed."""
    if isinstance(details.get("blind_missing"), dict):
        return f"missing ({details['blind_missing'].get('reason', 'unknown')})"
    blind = details.get("blind")
    if not isinstance(blind, dict):
        return NONE
    if blind.get("order_dependent"):
        picked = ", ".join(str(entry.get("picked_shown", "?")) for entry in blind.get("orders") or ())
        return f"not scored: the answer followed the order shown ({picked})"
    summary = f"P(marked {blind.get('marked', '?')}) {rate(blind.get('marked_probability'))}"
    chose = details.get("checker_chose")
    index = _letter_index(chose)
    if index is not None:
        text = options[index] if index < len(options) else details.get("checker_chose_text", "")
        summary += f"; the checker chose {chose}. {text} ({rate(details.get('checker_chose_probability'))})"
    return summary


def _member_blind(member: PremiseMember) -> str:
    if member.status in (PremiseCheck.UNVERIFIED, PremiseCheck.UNCHECKED):
        return member.reason or NONE
    if member.marked_probability is None:
        return NONE
    options = member.question.options
    marked = OPTION_LETTERS[member.question.correct_index]
    summary = f"P(marked {marked}) {rate(member.marked_probability)}"
    index = _letter_index(member.checker_chose)
    if index is not None:
        text = options[index] if index < len(options) else ""
        chosen = member.blind_probabilities.get(member.checker_chose)
        summary += f"; the checker chose {member.checker_chose}. {text} ({rate(chosen)})"
    return summary


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def question_evidence(*, question: Question) -> dict[str, Any]:
    return {
        "text": question.text,
        # As its kind has it: the options with the right ones marked, or the answer in words.
        "options": [
            {"letter": OPTION_LETTERS[index], "text": option, "marked": marked}
            for index, (option, marked) in enumerate(question.shown_options)
        ],
        "answer": "" if question.shown_options else question.answer_words,
        "explanation": question.explanation or NONE,
        "source": question.source or NONE,
    }


def provenance_evidence(*, question: Question) -> dict[str, Any]:
    rounds = [entry.round.title for entry in question.entries.select_related("round")]
    return {
        "provenance": question.get_provenance_display(),
        "model_id": question.model_id or NONE,
        "served_model_id": question.served_model_id if question.model_mismatch else "",
        "pack": question.pack.title if question.pack else NONE,
        "created": _when(question.created_at),
        "rounds": ", ".join(rounds) or NONE,
        "fixed_from": Review.objects.filter(fixed_as=question).values_list("question_id", flat=True).first(),
    }


def verdicts_evidence(*, question: Question) -> dict[str, Any]:
    verdicts = Verdict.objects.filter(question=question).order_by("created_at", "id")
    return {
        "rows": [
            {
                "when": _when(v.created_at),
                "backend": v.backend,
                "model": v.model_id + asked_for(v.model_id, v.requested_model_id),
                "outcome": f"{v.outcome}: {causes.cause_words(outcome=v.outcome, reason=v.reason)}",
                "score": NONE if v.score is None else f"{v.score:.3f}",
                "threshold": f"{v.threshold:.2f}{'' if v.calibrated else ' (uncalibrated)'}",
                "probabilities": ", ".join(f"{check} {p:.3f}" for check, p in sorted(v.probabilities.items())) or NONE,
                "blind": _verdict_blind(v, question),
                "reason": " ".join(part for part in (v.reason, v.message) if part) or NONE,
                "model_changed": model_changed_note(v.model_id, v.requested_model_id),
            }
            for v in verdicts
        ]
    }


def _verdict_blind(verdict: Verdict, question: Question) -> str:
    details = verdict.details if isinstance(verdict.details, dict) else {}
    options, _marked, asked = asked_of(details, question)
    summary = blind_summary(details, options)
    return f"{asked} {summary}" if asked and summary != NONE else summary


def blind_evidence(*, question: Question) -> dict[str, Any]:
    """The latest verdict's blind answer, said plainly: which option the checker chose without the answer (of
    the ask that decided the verdict: a true/false question's True or False, a `multi` question's Yes or No)."""
    verdict = Verdict.objects.filter(question=question).exclude(details={}).order_by("-created_at", "-id").first()
    details = verdict.details if verdict is not None and isinstance(verdict.details, dict) else {}
    options, marked, asked = asked_of(details, question)
    chose = details.get("checker_chose")
    index = _letter_index(chose)
    if index is not None:
        return {
            "chose": chose,
            "chose_text": options[index] if index < len(options) else details.get("checker_chose_text", ""),
            "chose_probability": rate(details.get("checker_chose_probability")),
            "marked": OPTION_LETTERS[marked] if 0 <= marked < len(OPTION_LETTERS) else "?",
            "marked_text": options[marked] if 0 <= marked < len(options) else "",
            "marked_probability": rate((details.get("blind") or {}).get("marked_probability")),
            "asked": asked,
        }
    if "blind_missing" in details:
        missing = details["blind_missing"] if isinstance(details["blind_missing"], dict) else {}
        return {"missing": missing.get("reason", "unknown")}
    if isinstance(details.get("blind"), dict):
        return {"summary": blind_summary(details, options)}
    return {}


def judge_suggestion(*, question: Question) -> dict[str, Any] | None:
    """The judge's words from the latest verdict that has them (the `judge` backend's report): the claims it
    found false or unsupported, its one-sentence fix, and the option it would mark (a letter of this question).
    None when no verdict carries any."""
    for verdict in Verdict.objects.filter(question=question, details__has_key="judge").order_by("-created_at", "-id"):
        report = verdict.details.get("judge") if isinstance(verdict.details, dict) else None
        if not isinstance(report, dict):
            continue
        claims = [str(claim) for claim in report.get("unsupported_claims") or [] if isinstance(claim, str) and claim]
        fix = report.get("suggested_fix") if isinstance(report.get("suggested_fix"), str) else ""
        index = _letter_index(report.get("suggested_option"))
        option = index if index is not None and index < len(question.options) else None
        if not claims and not fix and option is None:
            continue
        return {
            "claims": claims,
            "fix": fix,
            "option": option,
            "model": verdict.model_id,
            "when": _when(verdict.created_at),
        }
    return None


def judge_evidence(*, question: Question) -> dict[str, Any]:
    suggestion = judge_suggestion(question=question)
    if suggestion is None:
        return {}
    option = suggestion["option"]
    marked = option is not None and option != question.correct_index and 0 <= option < len(question.options)
    return {
        **suggestion,
        "option_text": f"{OPTION_LETTERS[option]}. {question.options[option]}" if marked else "",
        "fix_url": f"{reverse('admin:review_reviewitem_fix', args=[question.pk])}?start=suggested",
    }


def premise_evidence(*, question: Question) -> dict[str, Any]:
    change = "admin:review_reviewitem_change"
    return {
        "changelist": reverse("admin:review_reviewitem_changelist"),
        "groups": [
            {
                "pk": group.pk,
                "origin_id": group.origin_id,
                "origin_url": reverse(change, args=[group.origin_id]),
                "trigger": group.get_trigger_display().lower(),
                "is_origin": group.origin_id == question.pk,
                "round": group.round.title if group.round else NONE,
                "members": [
                    {
                        "this": member.question_id == question.pk,
                        "url": reverse(change, args=[member.question_id]),
                        "question_id": member.question_id,
                        "text": member.question.text,
                        "shared": ", ".join(member.shared) or NONE,
                        "status": member.get_status_display(),
                        "blind": _member_blind(member),
                    }
                    for member in group.members.all()
                ],
            }
            for group in question_premise_groups(question=question)
        ],
    }


def reports_evidence(*, question: Question) -> dict[str, Any]:
    return {
        "rows": [
            {
                "when": _when(flag.created_at),
                "room": flag.room_code,
                "player": flag.detail.get("player", ""),
                "words": flag.detail.get("text") or "(no words)",
            }
            for flag in question_flags(question=question, kind=FlagKind.REPORTED)
        ]
    }


def crowd_evidence(*, question: Question) -> dict[str, Any]:
    def chose(flag: Flag) -> str:
        option = flag.detail.get("option")
        if isinstance(option, int) and 0 <= option < len(question.options):
            return f"{OPTION_LETTERS[option]}. {question.options[option]}"
        return NONE

    return {
        "rows": [
            {
                "when": _when(flag.created_at),
                "room": flag.room_code,
                "answers": flag.detail.get("answers", ""),
                "chose": chose(flag),
                "share": rate(flag.detail.get("share")),
            }
            for flag in question_flags(question=question, kind=FlagKind.CROWD)
        ]
    }


def reviews_evidence(*, question: Question) -> dict[str, Any]:
    reviews = Review.objects.filter(question=question).select_related("reviewer", "fixed_as")
    return {
        "rows": [
            {
                "when": _when(r.created_at),
                "label": r.label,
                "by": r.reviewer.get_username() if r.reviewer else "(import)",
                "note": r.note or NONE,
                "fixed_as": f"question {r.fixed_as_id}" if r.fixed_as_id else NONE,
            }
            for r in reviews
        ]
    }
