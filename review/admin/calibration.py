"""The calibration admin: the stored thresholds and the pages beside them (the threshold sweep with its chart,
the labels CSV export and import, the checker's circuit breaker) and the runs of `manage.py checker_eval`."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.safestring import SafeString, mark_safe

from core.request_body import FORM_ALLOWANCE, request_body_cap
from quiz.generation.drop_rates import drop_rates_context
from review.admin import evidence
from review.forms import ThresholdStoreForm
from review.labelled_set import labelled_set_csv_export, labelled_set_csv_import
from review.models import CheckerEvalRun
from review.selectors import labelled_scores
from review.spend import review_spend
from review.thresholds.chart import sweep_chart
from review.thresholds.sweep import sweep
from verifier import conf
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
            **drop_rates_context(),
            "spend": review_spend(),
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
