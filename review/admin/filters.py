"""The review queue's list filters."""

from django.contrib import admin
from django.db.models import Q

from review.models import Flag, PremiseGroup, ReviewLabel
from verifier.models import Verdict, VerdictOutcome


class OutcomeFilter(admin.SimpleListFilter):
    title = "gate outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return VerdictOutcome.choices

    def queryset(self, request, queryset):
        if self.value() in VerdictOutcome.values:
            return queryset.filter(pk__in=Verdict.objects.filter(outcome=self.value()).values("question_id"))
        return queryset


class CheckerFilter(admin.SimpleListFilter):
    title = "backend + model id"
    parameter_name = "checker"

    def lookups(self, request, model_admin):
        pairs = Verdict.objects.order_by("backend", "model_id").values_list("backend", "model_id").distinct()
        return [(f"{backend}|{model_id}", f"{backend} {model_id}".strip()) for backend, model_id in pairs]

    def queryset(self, request, queryset):
        if not self.value() or "|" not in self.value():
            return queryset
        backend, model_id = self.value().split("|", 1)
        verdicts = Verdict.objects.filter(backend=backend, model_id=model_id)
        return queryset.filter(pk__in=verdicts.values("question_id"))


class YesNoFilter(admin.SimpleListFilter):
    field = ""

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(**{self.field: self.value() == "yes"})
        return queryset


class ReportedFilter(YesNoFilter):
    title = "reported by a player"
    parameter_name = "reported"
    field = "is_reported"


class CrowdFilter(YesNoFilter):
    title = "the crowd disagrees"
    parameter_name = "crowd"
    field = "is_crowd_flagged"


class CheckerChoseFilter(YesNoFilter):
    title = "the blind checker chose another option"
    parameter_name = "checker_chose"
    field = "checker_disagrees"


class PremiseGroupFilter(admin.SimpleListFilter):
    """One premise group: its origin and every member, shown together."""

    title = "premise group"
    parameter_name = "premise_group"

    def lookups(self, request, model_admin):
        groups = PremiseGroup.objects.order_by("-id").values_list("id", "origin_id")[:30]
        return [(str(pk), f"#{pk} (from question {origin})") for pk, origin in groups]

    def queryset(self, request, queryset):
        value = self.value()
        if not value or not value.isdigit():
            return queryset
        group = PremiseGroup.objects.filter(pk=int(value)).first()
        if group is None:
            return queryset.none()
        return queryset.filter(Q(pk=group.origin_id) | Q(premise_memberships__group=group)).distinct()


class LabelFilter(admin.SimpleListFilter):
    title = "label"
    parameter_name = "label"

    def lookups(self, request, model_admin):
        return [("none", "Not labelled"), ("any", "Labelled"), *ReviewLabel.choices]

    def queryset(self, request, queryset):
        if self.value() == "none":
            return queryset.filter(label__isnull=True)
        if self.value() == "any":
            return queryset.filter(label__isnull=False)
        if self.value() in ReviewLabel.values:
            return queryset.filter(label=self.value())
        return queryset


class FlagRoomFilter(admin.SimpleListFilter):
    """Rooms a question was flagged in (the lobby's admin widens this to every room that played it)."""

    title = "room"
    parameter_name = "room"

    def lookups(self, request, model_admin):
        codes = Flag.objects.exclude(room_code="").order_by("room_code").values_list("room_code", flat=True)
        return [(code, code) for code in codes.distinct()[:50]]

    def room_q(self, code: str) -> Q:
        return Q(pk__in=Flag.objects.filter(room_code=code).values("question_id"))

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(self.room_q(self.value()))
        return queryset
