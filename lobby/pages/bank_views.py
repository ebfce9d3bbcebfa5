"""The question bank's pages (quiz.questions.bank searches; lobby.reads.question_record assembles a question's record):
here because a question's record reads the game and the review side, which quiz may not import."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from core.owner_keys import session_owner_key
from lobby.pages.forms import BankRoundForm, BankSearchForm
from lobby.reads.question_record import played_question_ids, question_record
from quiz.exceptions import QuizError
from quiz.kinds import kind_of
from quiz.questions.bank import MAX_PICKED, QuestionNotFound, bank_round_create, bank_search, check_words

PAGE_SIZE = 50


@require_GET
def bank(request: HttpRequest) -> HttpResponse:
    owner_key = session_owner_key(request.session)
    form = BankSearchForm(request.GET)
    form.is_valid()
    result = bank_search(owner_key=owner_key, query=form.query(), played_ids=played_question_ids(owner_key=owner_key))
    page = Paginator(result.questions, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        {"question": question, "kind": kind_of(question).label, "check": check_words(question.last_check)}
        for question in page.object_list
    ]
    context = {
        "rows": rows,
        "form": form,
        "result": result,
        "page": page,
        "searched": any(form.query().__dict__.values()),
        "round_form": BankRoundForm(),
        "max_picked": MAX_PICKED,
        "query_string": _query_without_page(request),
    }
    return render(request, "lobby/bank.html", context)


def _query_without_page(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


@require_GET
def bank_question(request: HttpRequest, question_id: int) -> HttpResponse:
    try:
        record = question_record(owner_key=session_owner_key(request.session), question_id=question_id)
    except QuestionNotFound as error:
        raise Http404(str(error)) from error
    return render(request, "lobby/bank_question.html", {"record": record})


@require_POST
def bank_round(request: HttpRequest) -> HttpResponse:
    form = BankRoundForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(error) for errors in form.errors.values() for error in errors))
        return redirect("bank:bank")
    try:
        round_ = bank_round_create(
            owner_key=session_owner_key(request.session, create=True),
            question_ids=form.cleaned_data["question"],
            title=form.cleaned_data["title"],
        )
    except QuizError as error:
        messages.error(request, str(error))
        return redirect("bank:bank")
    count = round_.entries.count()
    messages.success(
        request,
        ngettext(
            "Made the round “%(title)s” with %(count)d question.",
            "Made the round “%(title)s” with %(count)d questions.",
            count,
        )
        % {"title": round_.title, "count": count},
    )
    return redirect("quiz:round_edit", round_id=round_.pk)
