from django.contrib import admin

from verifier.models import Threshold, Verdict


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["created_at", "question", "outcome", "score", "threshold", "reason", "backend", "model_id"]
    list_filter = ["outcome", "backend", "model_id", "calibrated"]
    search_fields = ["question__text", "reason", "message"]
    list_select_related = ["question"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Verdict._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # Verdicts are the evidence the sweep is computed from.
        return False


@admin.register(Threshold)
class ThresholdAdmin(admin.ModelAdmin):
    list_display = ["backend", "model_id", "value", "note", "updated_by", "updated_at"]
    list_filter = ["backend"]
    fields = ["backend", "model_id", "value", "note", "updated_by", "updated_at"]
    readonly_fields = ["updated_by", "updated_at"]

    def save_model(self, request, obj, form, change) -> None:
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)
