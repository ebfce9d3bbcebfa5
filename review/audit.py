"""The reviewer's part of a question's audit trail (quiz/audit.py asks for it; quiz never imports review):
the latest label counts, earlier ones are kept as history, and a fix names the corrected copy."""

from typing import Any

from quiz.audit import audit_extension_register
from review.models import Review


def review_audits(question_ids: list[int]) -> dict[int, dict[str, Any]]:
    """question id -> {"review": latest label or None, "review_history": every label, oldest first}."""
    found: dict[int, list[dict[str, Any]]] = {question_id: [] for question_id in question_ids}
    reviews = (
        Review.objects.filter(question_id__in=question_ids)
        .select_related("reviewer", "fixed_as")
        .order_by("created_at", "id")
    )
    for review in reviews:
        found[review.question_id].append(
            {
                "label": review.label,
                "note": review.note,
                "reviewer": review.reviewer.get_username() if review.reviewer else "",
                "fixed_as_question_id": review.fixed_as_id,
                "fixed_as": review.fixed_as.text if review.fixed_as_id else "",
                "at": review.created_at.isoformat(),
            }
        )
    return {
        question_id: {"review": history[-1] if history else None, "review_history": history}
        for question_id, history in found.items()
    }


def connect() -> None:
    audit_extension_register("review", review_audits)
