"""The gate's own records in the admin: the verdicts, read-only (the thresholds and the sweep are review's)."""

from django.contrib import admin

from verifier.models import Verdict

NONE = "—"


def _asked_for(served: str | None, requested: str | None) -> str:
    """A note when the server served another model than the one asked for."""
    if requested and served != requested:
        return f" (asked for {requested}: mismatch)"
    return ""


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["created_at", "question", "outcome", "score", "threshold", "reason", "backend", "served_model"]
    list_filter = ["outcome", "backend", "model_id", "requested_model_id", "calibrated"]
    search_fields = ["question__text", "reason", "message"]
    list_select_related = ["question"]
    date_hierarchy = "created_at"
    readonly_fields = ["model_check", *(field.name for field in Verdict._meta.fields)]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # Verdicts are the evidence the sweep is computed from.
        return False

    @admin.display(description="served model", ordering="model_id")
    def served_model(self, obj) -> str:
        return (obj.model_id or NONE) + _asked_for(obj.model_id, obj.requested_model_id)

    @admin.display(description="model check")
    def model_check(self, obj) -> str:
        if not obj.requested_model_id:
            return NONE
        if obj.model_mismatch:
            return (
                f"Mismatch: asked for {obj.requested_model_id}, the server served {obj.model_id}; the threshold "
                f"applied is the stricter of the ones stored for {obj.requested_model_id} and {obj.model_id} "
                "(a served id never lowers the pinned one's)."
            )
        return f"Served the pinned model {obj.model_id}."
