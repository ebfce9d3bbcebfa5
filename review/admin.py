"""The reviewer's home: the review queue, the labels and flags, the thresholds and the sweep.

The game's half of the queue (how players answered, voiding for a room) is added by lobby/admin.py through
review/admin_hooks.py: review never imports the lobby.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from quiz.exceptions import InvalidQuestion
from quiz.models import Question
from quiz.validation import MAX_EXPLANATION, MAX_OPTION, MAX_OPTIONS, MAX_SOURCE, MAX_TEXT, OPTION_LETTERS
from review.admin_hooks import review_panels
from review.chart import sweep_chart
from review.models import Flag, FlagKind, PremiseCheck, PremiseGroup, Review, ReviewItem, ReviewLabel
from review.selectors import labelled_scores, question_flags, question_premise_groups, review_queue
from review.services import question_fix, reviews_label
from review.sweep import sweep
from verifier import conf
from verifier.breaker import configured_breaker_state, shared_breakers
from verifier.models import Threshold, Verdict, VerdictOutcome
from verifier.services import threshold_set

NONE = "—"


def _asked_for(served: str | None, requested: str | None) -> str:
    """A note when the server served another model than the one asked for."""
    if requested and served != requested:
        return f" (asked for {requested}: mismatch)"
    return ""


def _rate(value: float | None) -> str:
    return NONE if value is None else f"{value * 100:.0f}%"


def _letter_index(value: object) -> int | None:
    if isinstance(value, str) and len(value) == 1 and value in OPTION_LETTERS:
        return OPTION_LETTERS.index(value)
    return None


def _blind_summary(details: dict, options: list) -> str:
    """One line for a verdict's blind answer: P(marked), and the option the checker chose if it disagreed."""
    if isinstance(details.get("blind_missing"), dict):
        return f"missing ({details['blind_missing'].get('reason', 'unknown')})"
    blind = details.get("blind")
    if not isinstance(blind, dict):
        return NONE
    summary = f"P(marked {blind.get('marked', '?')}) {_rate(blind.get('marked_probability'))}"
    chose = details.get("checker_chose")
    index = _letter_index(chose)
    if index is not None:
        text = options[index] if index < len(options) else details.get("checker_chose_text", "")
        summary += f"; the checker chose {chose}. {text} ({_rate(details.get('checker_chose_probability'))})"
    return summary


def _member_blind(member) -> str:
    if member.status in (PremiseCheck.UNVERIFIED, PremiseCheck.UNCHECKED):
        return member.reason or NONE
    if member.marked_probability is None:
        return NONE
    options = member.question.options
    marked = OPTION_LETTERS[member.question.correct_index]
    summary = f"P(marked {marked}) {_rate(member.marked_probability)}"
    index = _letter_index(member.checker_chose)
    if index is not None:
        text = options[index] if index < len(options) else ""
        chosen = member.blind_probabilities.get(member.checker_chose)
        summary += f"; the checker chose {member.checker_chose}. {text} ({_rate(chosen)})"
    return summary


# -- filters ------------------------------------------------------------------------------------------------------


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


# -- forms --------------------------------------------------------------------------------------------------------


class LabelForm(forms.Form):
    note = forms.CharField(
        max_length=500, required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), label="Note (optional)"
    )


class FixForm(forms.Form):
    text = forms.CharField(max_length=MAX_TEXT, widget=forms.Textarea(attrs={"rows": 2, "cols": 80}), label="Question")
    correct = forms.ChoiceField(label="Correct option", choices=[(letter, letter) for letter in OPTION_LETTERS])
    explanation = forms.CharField(
        max_length=MAX_EXPLANATION, required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 80})
    )
    source = forms.CharField(max_length=MAX_SOURCE, required=False)
    note = forms.CharField(max_length=500, required=False, label="Note (why it was wrong)")
    use_in_rounds = forms.BooleanField(
        required=False, initial=False, label="Use the fixed version in its rounds (also in rooms being played now)"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for number, letter in enumerate(OPTION_LETTERS[:MAX_OPTIONS], start=1):
            self.fields[f"option_{number}"] = forms.CharField(
                max_length=MAX_OPTION, required=False, label=f"Option {letter}"
            )
        order = ["text", *[f"option_{n}" for n in range(1, MAX_OPTIONS + 1)], "correct", "explanation", "source"]
        self.order_fields([*order, "note", "use_in_rounds"])

    @classmethod
    def initial_for(cls, question: Question) -> dict:
        initial = {
            "text": question.text,
            "correct": OPTION_LETTERS[question.correct_index],
            "explanation": question.explanation,
            "source": question.source,
            "use_in_rounds": False,
        }
        for number, option in enumerate(question.options, start=1):
            initial[f"option_{number}"] = option
        return initial

    def raw_question(self) -> dict:
        """The question as `clean_question` reads it; blank option slots are left out."""
        data = self.cleaned_data
        slots = [(OPTION_LETTERS[n - 1], data.get(f"option_{n}", "").strip()) for n in range(1, MAX_OPTIONS + 1)]
        filled = [(letter, text) for letter, text in slots if text]
        marked = [index for index, (letter, _) in enumerate(filled) if letter == data["correct"]]
        if not marked:
            raise InvalidQuestion(f"option {data['correct']}, marked correct, is empty")
        return {
            "text": data["text"],
            "options": [text for _, text in filled],
            "correct_index": marked[0],
            "explanation": data.get("explanation", ""),
            "source": data.get("source", ""),
        }


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
        return obj.latest_outcome or NONE

    @admin.display(description="score / threshold", ordering="latest_score")
    def score(self, obj) -> str:
        if obj.latest_score is None:
            return NONE
        return f"{obj.latest_score:.2f} / {obj.latest_threshold:.2f}"

    @admin.display(description="checked by")
    def checker(self, obj) -> str:
        found = f"{obj.latest_backend or ''} {obj.latest_model_id or ''}".strip() or NONE
        return found + _asked_for(obj.latest_model_id, obj.latest_requested_model_id)

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

    # -- the evidence on the question's page ----------------------------------------------------------------------

    @admin.display(description="question")
    def question_block(self, obj) -> SafeString:
        options = format_html_join(
            "",
            '<li class="{}">{}. {}{}</li>',
            (
                (
                    "marked" if index == obj.correct_index else "",
                    OPTION_LETTERS[index],
                    option,
                    " ✓ (marked correct)" if index == obj.correct_index else "",
                )
                for index, option in enumerate(obj.options)
            ),
        )
        return format_html(
            '<p class="review-text"><strong>{}</strong></p><ul class="review-options">{}</ul>'
            "<p><em>Explanation:</em> {}</p><p><em>Source:</em> {}</p>",
            obj.text,
            options,
            obj.explanation or NONE,
            obj.source or NONE,
        )

    @admin.display(description="provenance")
    def provenance_block(self, obj) -> SafeString:
        rounds = format_html_join(", ", "{}", ((entry.round.title,) for entry in obj.entries.select_related("round")))
        fixed_from = Review.objects.filter(fixed_as=obj).values_list("question_id", flat=True).first()
        return format_html(
            "<p>{} · model id: {}{} · pack: {} · created {}</p><p>In rounds: {}</p>{}",
            obj.get_provenance_display(),
            obj.model_id or NONE,
            f" (the server says {obj.served_model_id} wrote it: not the pinned model)" if obj.model_mismatch else "",
            obj.pack.title if obj.pack else NONE,
            obj.created_at.strftime("%Y-%m-%d %H:%M"),
            rounds or NONE,
            format_html("<p>Fixed copy of question {}.</p>", fixed_from) if fixed_from else "",
        )

    @admin.display(description="verdicts")
    def verdicts_block(self, obj) -> SafeString:
        verdicts = Verdict.objects.filter(question=obj).order_by("created_at", "id")
        if not verdicts:
            return format_html("{}", "No verdict: the gate did not see this question.")
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    v.created_at.strftime("%Y-%m-%d %H:%M"),
                    v.backend,
                    v.model_id + _asked_for(v.model_id, v.requested_model_id),
                    v.outcome,
                    NONE if v.score is None else f"{v.score:.3f}",
                    f"{v.threshold:.2f}{'' if v.calibrated else ' (uncalibrated)'}",
                    ", ".join(f"{check} {p:.3f}" for check, p in sorted(v.probabilities.items())) or NONE,
                    _blind_summary(v.details if isinstance(v.details, dict) else {}, obj.options),
                    " ".join(part for part in (v.reason, v.message) if part) or NONE,
                )
                for v in verdicts
            ),
        )
        return format_html(
            '<table class="review-table"><thead><tr><th>when</th><th>checker</th><th>outcome</th><th>score</th>'
            "<th>threshold</th><th>probabilities</th><th>blind answer</th><th>reason</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="the blind checker")
    def blind_block(self, obj) -> SafeString:
        """The latest verdict's blind answer, said plainly: which option the checker chose without the answer."""
        verdict = Verdict.objects.filter(question=obj).exclude(details={}).order_by("-created_at", "-id").first()
        details = verdict.details if verdict is not None and isinstance(verdict.details, dict) else {}
        chose = details.get("checker_chose")
        index = _letter_index(chose)
        if index is not None:
            text = obj.options[index] if index < len(obj.options) else details.get("checker_chose_text", "")
            marked = OPTION_LETTERS[obj.correct_index]
            return format_html(
                '<p class="checker-chose"><strong>The checker chose {}. {}</strong> ({}) when asked without the '
                "marked answer; the quiz marks {}. {} ({}).</p>",
                chose,
                text,
                _rate(details.get("checker_chose_probability")),
                marked,
                obj.options[obj.correct_index],
                _rate((details.get("blind") or {}).get("marked_probability")),
            )
        if "blind_missing" in details:
            missing = details["blind_missing"] if isinstance(details["blind_missing"], dict) else {}
            return format_html(
                '<p class="blind-missing">The blind check is missing ({}): the score is the lower of the other '
                "checks only.</p>",
                missing.get("reason", "unknown"),
            )
        if isinstance(details.get("blind"), dict):
            return format_html("<p>{}</p>", _blind_summary(details, obj.options))
        return format_html("{}", NONE)

    @admin.display(description="premise groups")
    def premise_block(self, obj) -> SafeString:
        groups = question_premise_groups(question=obj)
        if not groups:
            return format_html("{}", NONE)
        changelist = reverse("admin:review_reviewitem_changelist")
        blocks = []
        for group in groups:
            rows = format_html_join(
                "",
                '<tr class="{}"><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>',
                (
                    (
                        "premise-this" if member.question_id == obj.pk else "",
                        reverse("admin:review_reviewitem_change", args=[member.question_id]),
                        member.question_id,
                        member.question.text,
                        ", ".join(member.shared) or NONE,
                        member.get_status_display(),
                        _member_blind(member),
                    )
                    for member in group.members.all()
                ),
            )
            blocks.append(
                format_html(
                    '<div class="premise-group"><p><strong>Premise group #{}</strong>: question <a href="{}">{}</a> '
                    '({}) {} · round: {} · <a href="{}?premise_group={}">see the group in the queue</a></p>'
                    '<table class="review-table"><thead><tr><th>question</th><th>text</th><th>shares</th>'
                    "<th>blind re-check</th><th>blind answer</th></tr></thead><tbody>{}</tbody></table></div>",
                    group.pk,
                    reverse("admin:review_reviewitem_change", args=[group.origin_id]),
                    group.origin_id,
                    group.get_trigger_display().lower(),
                    "(this question)" if group.origin_id == obj.pk else "",
                    group.round.title if group.round else NONE,
                    changelist,
                    group.pk,
                    rows,
                )
            )
        return format_html_join("", "{}", ((block,) for block in blocks))

    @admin.display(description="players' reports")
    def reports_block(self, obj) -> SafeString:
        flags = question_flags(question=obj, kind=FlagKind.REPORTED)
        if not flags:
            return format_html("{}", NONE)
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    f.created_at.strftime("%Y-%m-%d %H:%M"),
                    f.room_code,
                    f.detail.get("player", ""),
                    f.detail.get("text") or "(no words)",
                )
                for f in flags
            ),
        )
        return format_html(
            '<table class="review-table review-reports"><thead><tr><th>when</th><th>room</th><th>player</th>'
            "<th>words</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="the crowd")
    def crowd_block(self, obj) -> SafeString:
        flags = question_flags(question=obj, kind=FlagKind.CROWD)
        if not flags:
            return format_html("{}", NONE)

        def chose(flag: Flag) -> str:
            option = flag.detail.get("option")
            if isinstance(option, int) and 0 <= option < len(obj.options):
                return f"{OPTION_LETTERS[option]}. {obj.options[option]}"
            return NONE

        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    f.created_at.strftime("%Y-%m-%d %H:%M"),
                    f.room_code,
                    f.detail.get("answers", ""),
                    chose(f),
                    _rate(f.detail.get("share")),
                )
                for f in flags
            ),
        )
        return format_html(
            '<table class="review-table"><thead><tr><th>when</th><th>room</th><th>answers</th><th>most chose</th>'
            "<th>share</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="how players answered")
    def answers_block(self, obj) -> SafeString:
        blocks = [panel.answers(self, obj) for panel in review_panels() if panel.answers is not None]
        if not blocks:
            return format_html("{}", NONE)
        return format_html_join("", "{}", ((block,) for block in blocks))

    @admin.display(description="labels (latest first)")
    def reviews_block(self, obj) -> SafeString:
        reviews = Review.objects.filter(question=obj).select_related("reviewer", "fixed_as")
        if not reviews:
            return format_html("{}", "Not labelled yet.")
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    r.created_at.strftime("%Y-%m-%d %H:%M"),
                    r.label,
                    r.reviewer.get_username() if r.reviewer else "(import)",
                    r.note or NONE,
                    f"question {r.fixed_as_id}" if r.fixed_as_id else NONE,
                )
                for r in reviews
            ),
        )
        return format_html(
            '<table class="review-table review-labels"><thead><tr><th>when</th><th>label</th><th>by</th>'
            "<th>note</th><th>fixed as</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

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
        form = FixForm(request.POST or None, initial=FixForm.initial_for(question))
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


class ThresholdStoreForm(forms.Form):
    backend = forms.CharField(max_length=20)
    model_id = forms.CharField(max_length=200)
    value = forms.FloatField(min_value=0.0, max_value=1.0)
    note = forms.CharField(max_length=300, required=False)


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
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra = {
            **(extra_context or {}),
            "sweep_url": reverse("admin:verifier_threshold_sweep"),
            "breaker_url": reverse("admin:verifier_threshold_breaker"),
        }
        return super().changelist_view(request, extra_context=extra)

    def breaker_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
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
                        "precision": _rate(row.precision),
                        "shown": _rate(row.shown_share),
                        "error_shown": _rate(row.error_rate_shown),
                        "catch": _rate(row.catch_rate),
                        "false_drop": _rate(row.false_drop_rate),
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
        }
        return TemplateResponse(request, "admin/verifier/sweep.html", context)
