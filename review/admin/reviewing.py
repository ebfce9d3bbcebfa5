"""The pages a reviewer labels and fixes a queued question on (the queue's admin, review/admin/queue.py, routes
to them): a label with an optional note, for one question or a bulk action's selection, and the fix of a
question, which keeps the original (labelled defective) and approves a new one in its rounds."""

from typing import Any

from django.contrib import messages
from django.contrib.admin import helpers
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from quiz.exceptions import InvalidQuestion
from review.admin import evidence
from review.forms import FixForm, LabelForm
from review.models import ReviewLabel
from review.services import question_fix, reviews_label


def label_action(model_admin: Any, request: HttpRequest, queryset, label: str) -> HttpResponse | None:
    """A bulk action: first a page for the note, then (with `apply`) the labels."""
    model_admin.check_review(request)
    if "apply" in request.POST:
        form = LabelForm(request.POST)
        if form.is_valid():
            reviews = reviews_label(
                questions=list(queryset), label=label, reviewer=request.user, note=form.cleaned_data["note"]
            )
            model_admin.message_user(request, f"Labelled {len(reviews)} question(s) {label}.", messages.SUCCESS)
            return None
    return _label_page(
        model_admin,
        request,
        questions=list(queryset),
        label=label,
        form=LabelForm(),
        hidden={"action": f"label_{label}", "apply": "1"},
        form_url="",
    )


def label_view(model_admin: Any, request: HttpRequest, object_id) -> HttpResponse:
    model_admin.check_review(request)
    question = get_object_or_404(model_admin.get_queryset(request), pk=object_id)
    label = request.POST.get("label") or request.GET.get("label")
    if label not in ReviewLabel.values:
        return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
    form = LabelForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        reviews_label(questions=[question], label=label, reviewer=request.user, note=form.cleaned_data["note"])
        model_admin.message_user(request, f"Labelled question {question.pk} {label}.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
    return _label_page(
        model_admin,
        request,
        questions=[question],
        label=label,
        form=form,
        hidden={"label": label},
        form_url=request.path,
    )


def _label_page(
    model_admin: Any, request: HttpRequest, *, questions, label, form, hidden, form_url
) -> TemplateResponse:
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
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


def fix_view(model_admin: Any, request: HttpRequest, object_id) -> HttpResponse:
    model_admin.check_review(request)
    question = get_object_or_404(model_admin.get_queryset(request), pk=object_id)
    # "Start from the suggested fix": the judge's words pre-fill the form; the reviewer still approves.
    suggestion = evidence.judge_suggestion(question=question) if request.GET.get("start") == "suggested" else None
    initial = FixForm.initial_from_suggestion(question, suggestion) if suggestion else FixForm.initial_for(question)
    form = FixForm(request.POST or None, request.FILES or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            fixed = question_fix(
                question=question,
                raw=form.raw_question(),
                reviewer=request.user,
                note=form.cleaned_data["note"],
                use_in_rounds=form.cleaned_data["use_in_rounds"],
                image=form.question.image if form.question else None,
            )
        except InvalidQuestion as error:
            form.add_error(None, str(error))
        else:
            model_admin.message_user(
                request,
                f"Question {question.pk} kept as it was (labelled defective); approved fix is question "
                f"{fixed.fixed.pk}, used in {fixed.rounds_updated} round(s).",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(reverse("admin:review_reviewitem_change", args=[question.pk]))
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Fix and approve question {question.pk}",
        "question": question,
        "form": form,
        "round_count": question.entries.count(),
        "suggestion": suggestion,
    }
    return TemplateResponse(request, "admin/review/reviewitem/fix.html", context)
