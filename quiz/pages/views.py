from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.owner_keys import session_owner_key
from core.request_body import FORM_ALLOWANCE, request_body_cap
from quiz import importers, importing
from quiz.audit import round_audit
from quiz.checking.rounds import round_check_job_create
from quiz.exceptions import QuizError, RoundNotFound
from quiz.forms import MAX_EDITOR_QUESTIONS, ImportForm, RoundTitleForm, question_formset
from quiz.generation.runner import generation_enqueue
from quiz.importers import kahoot
from quiz.kinds import KINDS
from quiz.models import Pack, Round
from quiz.pages.host_rounds import (
    host_round_entries,
    host_round_get,
    host_round_questions,
    host_round_save,
    host_round_summaries,
)
from quiz.selectors import pack_list
from quiz.services import round_create_for_host, round_create_from_pack
from verifier.registry import gate_enabled


def _owner_key(request: HttpRequest, *, create: bool = False) -> str:
    return session_owner_key(request.session, create=create)


def _own_round(request: HttpRequest, round_id: int) -> Round:
    try:
        return host_round_get(owner_key=_owner_key(request), round_id=round_id)
    except RoundNotFound as error:
        raise Http404(str(error)) from error


@require_GET
def round_list(request: HttpRequest) -> HttpResponse:
    rounds = host_round_summaries(owner_key=_owner_key(request))
    context = {"rounds": rounds, "new_form": RoundTitleForm(), "checker_on": gate_enabled()}
    if request.user.is_staff:
        context["packs"] = pack_list()
    return render(request, "quiz/round_list.html", context)


def _editor_cap() -> int:
    # The editor takes pictures: a few at a time, as a JSON import does.
    return settings.QUIZ_IMPORT_MAX_BYTES + FORM_ALLOWANCE


@require_http_methods(["GET", "POST"])
@request_body_cap(_editor_cap)
def round_new(request: HttpRequest) -> HttpResponse:
    return _round_editor(request, round_=None)


@require_http_methods(["GET", "POST"])
@request_body_cap(_editor_cap)
def round_edit(request: HttpRequest, round_id: int) -> HttpResponse:
    return _round_editor(request, round_=_own_round(request, round_id))


def _round_editor(request: HttpRequest, *, round_: Round | None) -> HttpResponse:
    entries = host_round_entries(round_=round_) if round_ else []
    questions = [data for data, _ in entries]
    too_long = len(questions) > MAX_EDITOR_QUESTIONS
    if request.method == "POST" and not too_long:
        title_form = RoundTitleForm(request.POST)
        formset = question_formset(data=request.POST, files=request.FILES)
        if title_form.is_valid() and formset.is_valid():
            try:
                saved = host_round_save(
                    owner_key=_owner_key(request, create=True),
                    round_id=round_.pk if round_ else None,
                    title=title_form.cleaned_data["title"],
                    questions=formset.questions(),
                )
            except RoundNotFound as error:
                raise Http404(str(error)) from error
            except QuizError as error:
                formset.non_form_errors().append(str(error))
            else:
                count = len(formset.questions())
                messages.success(
                    request,
                    ngettext(
                        "Saved “%(title)s” with %(count)d question.",
                        "Saved “%(title)s” with %(count)d questions.",
                        count,
                    )
                    % {"title": saved.title, "count": count},
                )
                return redirect("quiz:round_list")
    else:
        title = round_.title if round_ else request.GET.get("title", "")
        title_form = RoundTitleForm(initial={"title": title[:200]})
        formset = question_formset(questions=questions)
        # Each question's latest verdict under its block (an edited question is a new one: no verdict).
        for form, (_, mark) in zip(formset.forms, entries, strict=False):
            form.check_mark = mark
    context = {
        "round": round_,
        "title_form": title_form,
        "formset": formset,
        "too_long": too_long,
        "question_count": len(questions),
        "max_questions": MAX_EDITOR_QUESTIONS,
        "csv_columns": importing.CSV_COLUMNS,
        "kinds": list(KINDS.values()),
        "checker_on": gate_enabled(),
        "checked_count": sum(1 for _, mark in entries if mark is not None),
    }
    return render(request, "quiz/round_editor.html", context)


def _start_check(request: HttpRequest, round_: Round) -> HttpResponse:
    try:
        job = round_check_job_create(round_=round_, owner_key=_owner_key(request, create=True))
    except QuizError as error:
        messages.error(request, str(error))
        return redirect("quiz:round_edit", round_id=round_.pk) if round_.owner_key else redirect("quiz:round_list")
    generation_enqueue(job_id=job.pk)
    return redirect("quiz:generate_detail", job_id=job.pk)


@require_POST
def round_check(request: HttpRequest, round_id: int) -> HttpResponse:
    """Check my questions: every question of the host's round through the gate, with live progress."""
    return _start_check(request, _own_round(request, round_id))


@require_POST
@staff_member_required
def pack_check(request: HttpRequest, pack_id: int) -> HttpResponse:
    """Staff re-check a sample pack the same way (a fresh round of the pack carries the check)."""
    pack = Pack.objects.filter(pk=pack_id).first()
    if pack is None:
        raise Http404("No such pack.")
    try:
        round_ = round_create_from_pack(pack=pack)
    except QuizError as error:
        messages.error(request, str(error))
        return redirect("quiz:round_list")
    return _start_check(request, round_)


@require_http_methods(["GET", "POST"])
# Pasted text is sent URL-encoded: up to three bytes a character for what the importer reads as one. A JSON file
# carries its pictures: up to QUIZ_IMPORT_MAX_BYTES.
@request_body_cap(lambda: max(3 * importing.MAX_TEXT_BYTES, importers.max_upload_bytes()) + FORM_ALLOWANCE)
def round_import(request: HttpRequest) -> HttpResponse:
    result = None
    saved = None
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            result = importers.read(data["name"], data["raw"])
            if result.questions:
                title = data["title"] or result.title or data["source_name"] or "Imported questions"
                saved = round_create_for_host(
                    title=title,
                    questions=result.questions,
                    owner_key=_owner_key(request, create=True),
                    imported_from=f"{result.format_label}: {data['name'] or 'pasted text'}",
                )
    else:
        form = ImportForm()
    return render(
        request,
        "quiz/round_import.html",
        {
            "form": form,
            "result": result,
            "saved": saved,
            "csv_columns": importing.CSV_COLUMNS,
            "kinds": list(KINDS.values()),
            "checker_on": gate_enabled(),
        },
    )


def _download(content: str | bytes, *, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _filename(round_: Round, extension: str) -> str:
    return f"{slugify(round_.title)[:60] or 'round'}-{round_.pk}.{extension}"


@require_GET
def round_export_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _own_round(request, round_id)
    audit = round_audit(round_)
    # The BOM makes spreadsheet programs read the file as UTF-8; the importer skips it.
    content = "\ufeff" + importing.export_csv(host_round_questions(round_=round_), audits=audit["questions"])
    return _download(content, filename=_filename(round_, "csv"), content_type="text/csv; charset=utf-8")


@require_GET
def round_export_json(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _own_round(request, round_id)
    audit = round_audit(round_)
    content = importing.export_json(
        title=round_.title,
        questions=host_round_questions(round_=round_),
        audits=audit["questions"],
        about=audit["round"],
    )
    return _download(content, filename=_filename(round_, "json"), content_type="application/json; charset=utf-8")


@require_GET
def round_export_as(request: HttpRequest, round_id: int, fmt: str) -> HttpResponse:
    """The round in another tool's format (quiz/importers EXPORTS): GIFT, Moodle XML or Kahoot!'s spreadsheet."""
    export = importers.EXPORTS.get(fmt)
    if export is None:
        raise Http404("No such format.")
    round_ = _own_round(request, round_id)
    content, _left_out = export.write(round_.title, host_round_questions(round_=round_))
    return _download(content, filename=_filename(round_, export.extension), content_type=export.content_type)


@require_GET
def round_export_kahoot(request: HttpRequest, round_id: int) -> HttpResponse:
    """Before the Kahoot! spreadsheet: which questions it shortens, changes or leaves out, and why."""
    round_ = _own_round(request, round_id)
    notes = kahoot.export_notes(host_round_questions(round_=round_))
    return render(request, "quiz/export_report.html", {"round": round_, "notes": notes})
