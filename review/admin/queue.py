"""The review queue's admin: the queue of doubted and flagged questions, its evidence blocks, labelling and the
fix of a question, and the labels (Review) and flags (Flag) themselves.

The game's half of the queue (how players answered, voiding for a room) is added by lobby/admin.py through
review/admin_hooks.py: review never imports the lobby.
"""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from review.admin import evidence, reviewing
from review.admin.filters import (
    CheckerChoseFilter,
    CheckerFilter,
    CrowdFilter,
    FlagRoomFilter,
    LabelFilter,
    OutcomeFilter,
    PremiseGroupFilter,
    ReportedFilter,
)
from review.admin_hooks import review_panels
from review.models import Flag, Review, ReviewItem, ReviewLabel
from review.selectors import review_queue
from verifier import causes

NONE = evidence.NONE


def _evidence(block: str, context: dict) -> SafeString:
    # The template escapes every value it prints.
    return mark_safe(render_to_string(f"admin/review/reviewitem/evidence/{block}.html", context))


# -- the review queue ---------------------------------------------------------------------------------------------


@admin.action(description="Label correct (with an optional note)", permissions=["review"])
def label_correct(modeladmin: "ReviewItemAdmin", request: HttpRequest, queryset):
    return reviewing.label_action(modeladmin, request, queryset, ReviewLabel.CORRECT)


@admin.action(description="Label defective (with an optional note)", permissions=["review"])
def label_defective(modeladmin: "ReviewItemAdmin", request: HttpRequest, queryset):
    return reviewing.label_action(modeladmin, request, queryset, ReviewLabel.DEFECTIVE)


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    list_display = ["id", "short_text", "outcome", "score", "checker", "signals", "premise", "label", "queued_at"]
    list_display_links = ["id", "short_text"]
    list_filter = [
        OutcomeFilter,
        CheckerFilter,
        ReportedFilter,
        CrowdFilter,
        CheckerChoseFilter,
        PremiseGroupFilter,
        LabelFilter,
        FlagRoomFilter,
        ("created_at", admin.DateFieldListFilter),
    ]
    search_fields = ["text", "options", "explanation"]
    date_hierarchy = "created_at"
    actions = [label_correct, label_defective]
    list_per_page = 50
    evidence = [
        "question_block",
        "provenance_block",
        "verdicts_block",
        "judge_block",
        "blind_block",
        "premise_block",
        "reports_block",
        "crowd_block",
        "answers_block",
        "reviews_block",
    ]
    fields = evidence
    readonly_fields = evidence

    def get_queryset(self, request):
        return review_queue()

    def get_list_filter(self, request):
        # A registered panel (the lobby's) may widen the room filter to every room that played the question.
        rooms = [panel.room_filter for panel in review_panels() if panel.room_filter is not None]
        if not rooms:
            return self.list_filter
        return [rooms[-1] if f is FlagRoomFilter else f for f in self.list_filter]

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    # Reviewing is labelling: the question row itself is never edited here (a fix makes a new question).
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_review_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_staff and request.user.has_perm("review.add_review")

    # -- list columns ---------------------------------------------------------------------------------------------

    @admin.display(description="question")
    def short_text(self, obj) -> str:
        return obj.text if len(obj.text) <= 90 else obj.text[:89] + "…"

    @admin.display(description="outcome", ordering="latest_outcome")
    def outcome(self, obj) -> str:
        if not obj.latest_outcome:
            return NONE
        # What the checker did, as the host is told: rejected, too slow, unreachable, paused, model changed ...
        did = causes.cause_words(outcome=obj.latest_outcome, reason=obj.latest_reason or "")
        return f"{obj.latest_outcome} ({did})"

    @admin.display(description="score / threshold", ordering="latest_score")
    def score(self, obj) -> str:
        if obj.latest_score is None:
            return NONE
        return f"{obj.latest_score:.2f} / {obj.latest_threshold:.2f}"

    @admin.display(description="checked by")
    def checker(self, obj) -> str:
        found = f"{obj.latest_backend or ''} {obj.latest_model_id or ''}".strip() or NONE
        return found + evidence.asked_for(obj.latest_model_id, obj.latest_requested_model_id)

    @admin.display(description="signals")
    def signals(self, obj) -> str:
        found = [
            name
            for name, on in [
                ("reported", obj.is_reported),
                ("crowd disagrees", obj.is_crowd_flagged),
                ("checker chose another option", obj.checker_disagrees),
                ("shares a premise", obj.is_premise_flagged),
            ]
            if on
        ]
        if changed := evidence.model_changed_note(obj.latest_model_id, obj.latest_requested_model_id):
            found.append(changed)
        return ", ".join(found) or NONE

    @admin.display(description="premise group", ordering="premise_group")
    def premise(self, obj) -> SafeString | str:
        if obj.premise_group is None:
            return NONE
        url = f"{reverse('admin:review_reviewitem_changelist')}?premise_group={obj.premise_group}"
        return format_html('<a href="{}">#{}</a>', url, obj.premise_group)

    @admin.display(description="label", ordering="label")
    def label(self, obj) -> str:
        return obj.label or "not labelled"

    @admin.display(description="queued", ordering="queued_at")
    def queued_at(self, obj):
        return obj.queued_at

    # -- the evidence on the question's page (templates/admin/review/reviewitem/evidence/) ------------------------

    @admin.display(description="question")
    def question_block(self, obj) -> SafeString:
        return _evidence("question", evidence.question_evidence(question=obj))

    @admin.display(description="provenance")
    def provenance_block(self, obj) -> SafeString:
        return _evidence("provenance", evidence.provenance_evidence(question=obj))

    @admin.display(description="verdicts")
    def verdicts_block(self, obj) -> SafeString:
        return _evidence("verdicts", evidence.verdicts_evidence(question=obj))

    @admin.display(description="the judge's words")
    def judge_block(self, obj) -> SafeString:
        return _evidence("judge", evidence.judge_evidence(question=obj))

    @admin.display(description="the blind checker")
    def blind_block(self, obj) -> SafeString:
        return _evidence("blind", evidence.blind_evidence(question=obj))

    @admin.display(description="premise groups")
    def premise_block(self, obj) -> SafeString:
        return _evidence("premise", evidence.premise_evidence(question=obj))

    @admin.display(description="players' reports")
    def reports_block(self, obj) -> SafeString:
        return _evidence("reports", evidence.reports_evidence(question=obj))

    @admin.display(description="the crowd")
    def crowd_block(self, obj) -> SafeString:
        return _evidence("crowd", evidence.crowd_evidence(question=obj))

    @admin.display(description="how players answered")
    def answers_block(self, obj) -> SafeString:
        blocks = [panel.answers(self, obj) for panel in review_panels() if panel.answers is not None]
        if not blocks:
            return format_html("{}", NONE)
        return format_html_join("", "{}", ((block,) for block in blocks))

    @admin.display(description="labels (latest first)")
    def reviews_block(self, obj) -> SafeString:
        return _evidence("reviews", evidence.reviews_evidence(question=obj))

    # -- pages and actions ----------------------------------------------------------------------------------------

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<path:object_id>/label/", wrap(self.label_view), name="review_reviewitem_label"),
            path("<path:object_id>/fix/", wrap(self.fix_view), name="review_reviewitem_fix"),
            *(pattern for panel in review_panels() if panel.urls is not None for pattern in panel.urls(self)),
            *super().get_urls(),
        ]

    def tool_links(self, request, obj) -> list[tuple[str, str]]:
        """(title, url) buttons on a question's page."""
        if not self.has_review_permission(request):
            return []
        label_url = reverse("admin:review_reviewitem_label", args=[obj.pk], current_app=self.admin_site.name)
        links = [
            ("Label correct", f"{label_url}?label=correct"),
            ("Label defective", f"{label_url}?label=defective"),
            ("Fix and approve", reverse("admin:review_reviewitem_fix", args=[obj.pk])),
        ]
        if evidence.judge_suggestion(question=obj) is not None:
            fix_url = reverse("admin:review_reviewitem_fix", args=[obj.pk])
            links.append(("Start from the suggested fix", f"{fix_url}?start=suggested"))
        for panel in review_panels():
            if panel.tool_links is not None:
                links.extend(panel.tool_links(self, request, obj))
        return links

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        extra = {**(extra_context or {}), "review_links": self.tool_links(request, obj) if obj else []}
        return super().change_view(request, object_id, form_url, extra_context=extra)

    def changelist_view(self, request, extra_context=None):
        extra = {**(extra_context or {}), "sweep_url": reverse("admin:verifier_threshold_sweep")}
        return super().changelist_view(request, extra_context=extra)

    def check_review(self, request) -> None:
        if not self.has_review_permission(request):
            raise PermissionDenied

    def label_view(self, request, object_id):
        return reviewing.label_view(self, request, object_id)

    def fix_view(self, request, object_id):
        return reviewing.fix_view(self, request, object_id)


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["created_at", "question", "label", "reviewer", "note", "fixed_as"]
    list_filter = ["label"]
    list_select_related = ["question", "reviewer"]
    readonly_fields = [field.name for field in Review._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # The label history is the sweep's ground truth.
        return False


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ["created_at", "question", "kind", "room_code", "detail"]
    list_filter = ["kind"]
    search_fields = ["room_code", "question__text"]
    readonly_fields = [field.name for field in Flag._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
