from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods

from core.owner_keys import session_owner_key
from quiz import importing
from quiz.exceptions import QuizError, RoundNotFound
from quiz.forms import MAX_EDITOR_QUESTIONS, ImportForm, RoundTitleForm, question_formset
from quiz.host_rounds import host_round_get, host_round_questions, host_round_save, host_round_summaries
from quiz.models import Round
from quiz.services import round_create_for_host


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
    return render(request, "quiz/round_list.html", {"rounds": rounds, "new_form": RoundTitleForm()})


@require_http_methods(["GET", "POST"])
def round_new(request: HttpRequest) -> HttpResponse:
    return _round_editor(request, round_=None)


@require_http_methods(["GET", "POST"])
def round_edit(request: HttpRequest, round_id: int) -> HttpResponse:
    return _round_editor(request, round_=_own_round(request, round_id))


def _round_editor(request: HttpRequest, *, round_: Round | None) -> HttpResponse:
    questions = host_round_questions(round_=round_) if round_ else []
    too_long = len(questions) > MAX_EDITOR_QUESTIONS
    if request.method == "POST" and not too_long:
        title_form = RoundTitleForm(request.POST)
        formset = question_formset(data=request.POST)
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
                messages.success(request, f"Saved “{saved.title}” with {len(formset.questions())} questions.")
                return redirect("quiz:round_list")
    else:
        title = round_.title if round_ else request.GET.get("title", "")
        title_form = RoundTitleForm(initial={"title": title[:200]})
        formset = question_formset(questions=questions)
    context = {
        "round": round_,
        "title_form": title_form,
        "formset": formset,
        "too_long": too_long,
        "question_count": len(questions),
        "max_questions": MAX_EDITOR_QUESTIONS,
        "csv_columns": importing.CSV_COLUMNS,
    }
    return render(request, "quiz/round_editor.html", context)


@require_http_methods(["GET", "POST"])
def round_import(request: HttpRequest) -> HttpResponse:
    result = None
    saved = None
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            parse = importing.parse_json if data["format"] == "json" else importing.parse_csv
            result = parse(data["content"])
            if result.questions:
                title = data["title"] or result.title or data["source_name"] or "Imported questions"
                saved = round_create_for_host(
                    title=title, questions=result.questions, owner_key=_owner_key(request, create=True)
                )
    else:
        form = ImportForm()
    return render(
        request,
        "quiz/round_import.html",
        {"form": form, "result": result, "saved": saved, "csv_columns": importing.CSV_COLUMNS},
    )


def _download(content: str, *, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _filename(round_: Round, extension: str) -> str:
    return f"{slugify(round_.title)[:60] or 'round'}-{round_.pk}.{extension}"


@require_GET
def round_export_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _own_round(request, round_id)
    # The BOM makes spreadsheet programs read the file as UTF-8; the importer skips it.
    content = "\ufeff" + importing.export_csv(host_round_questions(round_=round_))
    return _download(content, filename=_filename(round_, "csv"), content_type="text/csv; charset=utf-8")


@require_GET
def round_export_json(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _own_round(request, round_id)
    content = importing.export_json(title=round_.title, questions=host_round_questions(round_=round_))
    return _download(content, filename=_filename(round_, "json"), content_type="application/json; charset=utf-8")
