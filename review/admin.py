"""The reviewer's home: the review queue, the labels and flags, the thresholds and the sweep.

The game's half of the queue (how players answered, voiding for a room) is added by lobby/admin.py through
review/admin_hooks.py: review never imports the lobby.
"""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from core.request_body import FORM_ALLOWANCE, request_body_cap
from quiz.exceptions import InvalidQuestion
from review import evidence
from review.admin_filters import (
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
from review.chart import sweep_chart
from review.forms import FixForm, LabelForm, ThresholdStoreForm
from review.labelled_set import labelled_set_csv_export, labelled_set_csv_import
from review.models import CheckerEvalRun, Flag, Review, ReviewItem, ReviewLabel
from review.selectors import labelled_scores, review_queue
from review.services import question_fix, reviews_label
from review.sweep import sweep
from verifier import causes, conf
from verifier.breaker import configured_breaker_state, shared_breakers
from verifier.models import Threshold
from verifier.selectors import slow_checker
from verifier.services import threshold_set

NONE = evidence.NONE


# A graded labels CSV uploaded on the sweep page (a few thousand questions fit well under it).
LABELS_MAX_BYTES = 2 * 1024 * 1024


def warn_if_slow(modeladmin: admin.ModelAdmin, request: HttpRequest) -> None:
    """A warning with the figures when most of the configured checker's latest checks ran out of time."""
    slow = slow_checker()
    if slow is None:
        return
    modeladmin.message_user(
        request,
        f"The checker is too slow: {slow.timed_out} of the last {slow.of} checks by {slow.backend} {slow.model_id} "
        f"ran out of time (VERIFIER_TIMEOUT is {slow.timeout:g} s), so those questions were played unverified. "
        "Raise VERIFIER_TIMEOUT (a CPU-only checker may need 30 s or more), lower VERIFIER_CONCURRENCY, or use a "
        "faster checker; `manage.py checker_eval` shows its seconds per question.",
        messages.WARNING,
    )


def _evidence(block: str, context: dict) -> SafeString:
    # The template escapes every value it prints.
    return mark_safe(render_to_string(f"admin/review/reviewitem/evidence/{block}.html", context))


# -- the review queue ---------------------------------------------------------------------------------------------


@admin.action(description="Label correct (with an optional note)", permissions=["review"])
def label_correct(modeladmin: "ReviewItemAdmin", request: HttpRequest, queryset):
    return modeladmin.label_action(request, queryset, ReviewLabel.CORRECT)


@admin.action(description="Label defective (with an optional note)", permissions=["review"])
def label_defective(modeladmin: "ReviewItemAdmin", request: HttpRequest, queryset):
    return modeladmin.label_action(request, queryset, ReviewLabel.DEFECTIVE)


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

    def label_action(self, request, queryset, label: str) -> HttpResponse | None:
        """A bulk action: first a page for the note, then (with `apply`) the labels."""
        self.check_review(request)
        if "apply" in request.POST:
            form = LabelForm(request.POST)
            if form.is_valid():
                reviews = reviews_label(
                    questions=list(queryset), label=label, reviewer=request.user, note=form.cleaned_data["note"]
                )
                self.message_user(request, f"Labelled {len(reviews)} question(s) {label}.", messages.SUCCESS)
                return None
        return self._label_page(
            request,
            questions=list(queryset),
            label=label,
            form=LabelForm(),
            hidden={"action": f"label_{label}", "apply": "1"},
            form_url="",
        )

    def label_view(self, request, object_id):
        self.check_review(request)
        question = get_object_or_404(self.get_queryset(request), pk=object_id)
        label = request.POST.get("label") or request.GET.get("label")
        if label not in ReviewLabel.values:
            return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
        form = LabelForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            reviews_label(questions=[question], label=label, reviewer=request.user, note=form.cleaned_data["note"])
            self.message_user(request, f"Labelled question {question.pk} {label}.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
        return self._label_page(
            request, questions=[question], label=label, form=form, hidden={"label": label}, form_url=request.path
        )

    def _label_page(self, request, *, questions, label, form, hidden, form_url) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Label {len(questions)} question(s) {label}",
            "questions": questions,
            "label": label,
            "form": form,
            "hidden": hidden,
            "form_url": form_url,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "bulk": not form_url,
        }
        return TemplateResponse(request, "admin/review/reviewitem/label.html", context)

    def fix_view(self, request, object_id):
        self.check_review(request)
        question = get_object_or_404(self.get_queryset(request), pk=object_id)
        # "Start from the suggested fix": the judge's words pre-fill the form; the reviewer still approves.
        suggestion = evidence.judge_suggestion(question=question) if request.GET.get("start") == "suggested" else None
        initial = FixForm.initial_from_suggestion(question, suggestion) if suggestion else FixForm.initial_for(question)
        form = FixForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                fixed = question_fix(
                    question=question,
                    raw=form.raw_question(),
                    reviewer=request.user,
                    note=form.cleaned_data["note"],
                    use_in_rounds=form.cleaned_data["use_in_rounds"],
                )
            except InvalidQuestion as error:
                form.add_error(None, str(error))
            else:
                self.message_user(
                    request,
                    f"Question {question.pk} kept as it was (labelled defective); approved fix is question "
                    f"{fixed.fixed.pk}, used in {fixed.rounds_updated} round(s).",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Fix and approve question {question.pk}",
            "question": question,
            "form": form,
            "round_count": question.entries.count(),
            "suggestion": suggestion,
        }
        return TemplateResponse(request, "admin/review/reviewitem/fix.html", context)


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


@admin.register(Threshold)
class ThresholdAdmin(admin.ModelAdmin):
    list_display = ["backend", "model_id", "value", "note", "updated_by", "updated_at"]
    list_filter = ["backend"]
    fields = ["backend", "model_id", "value", "note", "updated_by", "updated_at"]
    readonly_fields = ["updated_by", "updated_at"]

    def save_model(self, request, obj, form, change) -> None:
        stored = threshold_set(
            backend=obj.backend,
            model_id=obj.model_id,
            value=obj.value,
            user=request.user,
            note=obj.note,
            threshold_id=obj.pk if change else None,
        )
        # The admin's redirect and its log entry name the row the service stored.
        obj.pk, obj.updated_by, obj.updated_at = stored.pk, stored.updated_by, stored.updated_at

    def get_urls(self):
        return [
            path("sweep/", self.admin_site.admin_view(self.sweep_view), name="verifier_threshold_sweep"),
            path("breaker/", self.admin_site.admin_view(self.breaker_view), name="verifier_threshold_breaker"),
            path(
                "sweep/labels.csv", self.admin_site.admin_view(self.labels_csv_view), name="verifier_threshold_labels"
            ),
            path(
                "sweep/labels/import/",
                self.admin_site.admin_view(self.labels_import_view),
                name="verifier_threshold_labels_import",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        warn_if_slow(self, request)
        extra = {
            **(extra_context or {}),
            "sweep_url": reverse("admin:verifier_threshold_sweep"),
            "breaker_url": reverse("admin:verifier_threshold_breaker"),
        }
        return super().changelist_view(request, extra_context=extra)

    def labels_csv_view(self, request):
        """Every labelled, scored question as CSV, to grade in a spreadsheet and import back."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        response = HttpResponse("\ufeff" + labelled_set_csv_export(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="quizgate-labels.csv"'
        return response

    @request_body_cap(lambda: LABELS_MAX_BYTES + FORM_ALLOWANCE)
    def labels_import_view(self, request):
        """A graded CSV in: the good lines become labelled questions, each bad one is named with its line."""
        can_import = self.has_change_permission(request) and request.user.has_perm("review.add_review")
        if request.method != "POST" or not can_import:
            raise PermissionDenied
        upload = request.FILES.get("labels")
        sweep_url = reverse("admin:verifier_threshold_sweep")
        if upload is None:
            self.message_user(request, "Choose a CSV file of labels to import.", messages.ERROR)
            return HttpResponseRedirect(sweep_url)
        if upload.size > LABELS_MAX_BYTES:
            self.message_user(
                request, f"The file is larger than {LABELS_MAX_BYTES // 1024 // 1024} MB; nothing was imported.",
                messages.ERROR,
            )  # fmt: skip
            return HttpResponseRedirect(sweep_url)
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            self.message_user(request, "The file is not UTF-8 text; nothing was imported.", messages.ERROR)
            return HttpResponseRedirect(sweep_url)
        result = labelled_set_csv_import(text=text, note=f"imported from {upload.name}"[:500])
        level = messages.WARNING if result.errors else messages.SUCCESS
        self.message_user(
            request,
            f"Imported {result.created} labelled question(s), skipped {result.skipped} already there, "
            f"refused {len(result.errors)} line(s).",
            level,
        )
        for error in result.errors[:50]:
            self.message_user(request, f"Refused {error}", messages.ERROR)
        return HttpResponseRedirect(sweep_url)

    def breaker_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        warn_if_slow(self, request)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Checker circuit breaker",
            "breaker": configured_breaker_state(),
            "shared": shared_breakers(),
        }
        return TemplateResponse(request, "admin/verifier/breaker.html", context)

    def sweep_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        can_store = self.has_change_permission(request) and self.has_add_permission(request)
        if request.method == "POST":
            if not can_store:
                raise PermissionDenied
            form = ThresholdStoreForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                threshold = threshold_set(
                    backend=data["backend"],
                    model_id=data["model_id"],
                    value=data["value"],
                    user=request.user,
                    note=data["note"] or "set from the sweep",
                )
                self.message_user(request, f"Stored threshold {threshold}.", messages.SUCCESS)
            else:
                self.message_user(request, f"Not stored: {form.errors.as_text()}", messages.ERROR)
            return HttpResponseRedirect(request.path)
        stored = {(t.backend, t.model_id): t.value for t in Threshold.objects.all()}
        results = sweep(labelled_scores(), min_labels=conf.sweep_min_labels())
        sections = [
            {
                "result": result,
                "stored": stored.get((result.backend, result.model_id)),
                "chart": sweep_chart(result, stored_threshold=stored.get((result.backend, result.model_id))),
                "suggested": result.widest_safe.threshold if result.widest_safe else None,
                "rows": [
                    {
                        "row": row,
                        "threshold": f"{row.threshold:g}",
                        "precision": evidence.rate(row.precision),
                        "shown": evidence.rate(row.shown_share),
                        "error_shown": evidence.rate(row.error_rate_shown),
                        "catch": evidence.rate(row.catch_rate),
                        "false_drop": evidence.rate(row.false_drop_rate),
                        "safe": result.widest_safe is not None and row.threshold == result.widest_safe.threshold,
                    }
                    for row in result.rows
                ],
            }
            for result in results
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Threshold sweep",
            "sections": sections,
            "can_store": can_store,
            "can_import": can_store and request.user.has_perm("review.add_review"),
        }
        return TemplateResponse(request, "admin/verifier/sweep.html", context)


# -- checker_eval's runs -------------------------------------------------------------------------------------------


@admin.register(CheckerEvalRun)
class CheckerEvalRunAdmin(admin.ModelAdmin):
    """Each `manage.py checker_eval` run, read only; `last/` opens the latest one."""

    list_display = ["created_at", "backend", "model_id", "questions", "auroc_text", "verdict"]
    list_filter = ["backend"]
    fields = ["created_at", "backend", "model_id", "source", "questions", "figures"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="AUROC of the score")
    def auroc_text(self, obj) -> str:
        return NONE if obj.auroc is None else f"{obj.auroc:.3f}"

    @admin.display(description="Figures")
    def figures(self, obj) -> SafeString:
        # The template escapes every value it prints.
        return mark_safe(
            render_to_string("admin/review/checkerevalrun/figures.html", {"run": obj, "report": obj.report})
        )

    def get_urls(self):
        return [
            path("last/", self.admin_site.admin_view(self.last_view), name="review_checkerevalrun_last"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        warn_if_slow(self, request)
        return super().changelist_view(request, extra_context=extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if request.method == "GET":
            warn_if_slow(self, request)
        return super().change_view(request, object_id, form_url=form_url, extra_context=extra_context)

    def last_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        last = CheckerEvalRun.objects.order_by("-created_at", "-id").first()
        if last is None:
            self.message_user(
                request, "No checker evaluation yet: run `python manage.py checker_eval`.", messages.WARNING
            )
            return HttpResponseRedirect(reverse("admin:review_checkerevalrun_changelist"))
        return HttpResponseRedirect(reverse("admin:review_checkerevalrun_change", args=[last.pk]))
