"""Pages for model-written rounds: the request form, then live progress and the finished round."""

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.client_ip import client_ip_from_request, client_network
from core.owner_keys import session_owner_key
from core.request_body import FORM_ALLOWANCE, request_body_cap
from quiz.check_labels import mark_label, slow_checker_warning
from quiz.checking.rounds import round_check_job_create, round_check_marks
from quiz.exceptions import GenerationNotFound, QuizError
from quiz.generation.drop_rates import drop_rates_context
from quiz.generation.jobs import generation_cancel, generation_job_create, generation_job_get, generation_retry
from quiz.generation.limits import GenerationLimited
from quiz.generation.prompts import DIFFICULTIES, LANGUAGES, MAX_COUNT, MAX_TOPIC, MIN_COUNT
from quiz.generation.runner import generation_enqueue
from quiz.generation.uploads import generation_source_from_upload
from quiz.jobs import conf
from quiz.jobs.tokens import generation_token
from quiz.kinds import DEFAULT, kind_choices
from quiz.models import GenerationJob, JobKind
from quiz.selectors import generation_round_questions, generation_snapshot
from verifier.selectors import slow_checker


def _owner_key(request: HttpRequest, *, create: bool = False) -> str:
    # The same key the host's own rounds use, so a generated round shows up there and on the home page.
    return session_owner_key(request.session, create=create)


def _client_network(request: HttpRequest) -> str:
    return client_network(client_ip_from_request(request))


def _refused(response: HttpResponse, error: GenerationLimited) -> HttpResponse:
    response.status_code = 429
    response["Retry-After"] = str(error.retry_after)
    return response


def _page_language() -> str:
    active = (translation.get_language() or "").split("-")[0]
    return active if active in LANGUAGES else "en"


def _language_choices() -> list[tuple[str, str]]:
    """The languages a round can be written in, each named in the page's language (Django's own names)."""
    return [(code, str(translation.get_language_info(code)["name_translated"])) for code in LANGUAGES]


# The difficulties, in the page's language (the model is told the key, in English).
DIFFICULTY_LABELS = {"easy": gettext_lazy("Easy"), "medium": gettext_lazy("Medium"), "hard": gettext_lazy("Hard")}


class GenerateForm(forms.Form):
    topic = forms.CharField(
        label=gettext_lazy("Topic"),
        max_length=MAX_TOPIC,
        required=False,
        help_text=gettext_lazy("What the round is about, e.g. “Birds of Europe”."),
    )
    count = forms.IntegerField(label=gettext_lazy("Questions"), min_value=MIN_COUNT, max_value=MAX_COUNT, initial=10)
    difficulty = forms.ChoiceField(
        label=gettext_lazy("Difficulty"),
        choices=[(key, DIFFICULTY_LABELS.get(key, key)) for key in DIFFICULTIES],
        initial="medium",
    )
    # The page's language unless the host picks another.
    language = forms.ChoiceField(
        label=gettext_lazy("Language of the questions"), choices=_language_choices, initial=_page_language
    )
    # Every kind the registry has, each by its label in the page's language; the writer mixes those ticked.
    kinds = forms.MultipleChoiceField(
        label=gettext_lazy("Question kinds"),
        choices=kind_choices,
        initial=[DEFAULT],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    # Sent with the checkboxes, which send nothing when none is ticked: a post with it and no kind is refused,
    # one without it (from a script, or a page from before kinds) writes the default kind.
    kinds_shown = forms.CharField(required=False, initial="1", widget=forms.HiddenInput)
    source_text = forms.CharField(
        label=gettext_lazy("Source text (optional)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=gettext_lazy("Paste a text to ask questions only about it (up to 50,000 characters)."),
    )
    source_file = forms.FileField(
        label=gettext_lazy("…or upload one (optional)"),
        required=False,
        help_text=gettext_lazy("A .txt, .md or .pdf file"),
    )

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("kinds") and "kinds" not in self.errors:
            if data.get("kinds_shown"):
                self.add_error("kinds", _("Tick at least one kind of question."))
            else:
                data["kinds"] = [DEFAULT]
        upload = data.get("source_file")
        if upload:
            if upload.size > conf.upload_max_bytes():
                self.add_error("source_file", _("That file is too large."))
                return data
            try:
                data["source_text"] = generation_source_from_upload(name=upload.name, data=upload.read())
            except QuizError as error:
                self.add_error("source_file", str(error))
                return data
        limit = conf.source_max_chars()
        if len(data.get("source_text") or "") > limit:
            self.add_error(
                None,
                _("The source text is longer than %(limit)s characters; shorten it.") % {"limit": f"{limit:,}"},
            )
        if not (data.get("topic") or "").strip() and not (data.get("source_text") or "").strip():
            self.add_error("topic", _("Give a topic, or a source text to ground the round in."))
        return data


def _generate_body_cap() -> int:
    # The file, or the pasted text URL-encoded (up to 12 bytes for a 4-byte character), whichever is larger.
    return max(conf.upload_max_bytes(), 12 * conf.source_max_chars()) + FORM_ALLOWANCE


@require_http_methods(["GET", "POST"])
@request_body_cap(_generate_body_cap)
def generate_new(request: HttpRequest) -> HttpResponse:
    # Writing needs a model server and a pinned model id: there is no default id to file a round under.
    server_set = conf.writer_configured()
    model_missing = server_set and not conf.writer_model()
    configured = server_set and not model_missing
    form = GenerateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and configured and form.is_valid():
        data = form.cleaned_data
        upload = data.get("source_file")
        try:
            job = generation_job_create(
                owner_key=_owner_key(request, create=True),
                count=data["count"],
                topic=data.get("topic") or "",
                difficulty=data["difficulty"],
                language=data["language"],
                source_text=data.get("source_text") or "",
                source_name=upload.name if upload else "",
                client_network=_client_network(request),
                kinds=data["kinds"],
            )
        except GenerationLimited as error:
            form.add_error(None, str(error))
            return _refused(render(request, "quiz/generate.html", {"form": form, "configured": configured}), error)
        except QuizError as error:
            form.add_error(None, str(error))
        else:
            generation_enqueue(job_id=job.pk)
            return redirect("quiz:generate_detail", job_id=job.pk)
    context = {
        "form": form,
        "configured": configured,
        "model_missing": model_missing,
        "slow_checker": slow_checker_warning(slow_checker()),
        **drop_rates_context(),
    }
    return render(request, "quiz/generate.html", context)


def _own_job(request: HttpRequest, job_id: int) -> GenerationJob:
    try:
        return generation_job_get(job_id=job_id, owner_key=_owner_key(request))
    except GenerationNotFound as error:
        raise Http404(str(error)) from error


@require_GET
def generate_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _own_job(request, job_id)
    questions = generation_round_questions(job=job)
    context = {
        "job": job,
        "snapshot": generation_snapshot(job),
        "token": generation_token(job_id=job.pk),
        # Each question with its badge: what the checker did with it, in the host's words.
        "questions": [(question, mark, mark_label(mark)) for question, mark in questions],
        # How many questions the round holds (fewer than asked when the writer came up short).
        "held": len(questions),
        "slow_checker": slow_checker_warning(slow_checker()) if job.gated else "",
        # In the page's language: "Mittel · Deutsch", not "Medium · de".
        "difficulty_label": DIFFICULTY_LABELS.get(job.difficulty, job.difficulty),
        "language_name": dict(_language_choices()).get(job.language, job.language),
    }
    if job.kind == JobKind.CHECK:
        context["checked"] = _checked_questions(job)
    return render(request, "quiz/generate_job.html", context)


def _checked_questions(job: GenerationJob) -> list:
    """A finished check's questions, each with its latest verdict (None: not checked)."""
    if not job.finished or job.round is None:
        return []
    entries = list(job.round.entries.select_related("question"))
    return list(zip([entry.question for entry in entries], round_check_marks(round_=job.round), strict=True))


@require_GET
def generate_status(request: HttpRequest, job_id: int) -> JsonResponse:
    # For pages whose WebSocket cannot connect (a proxy without WebSocket support): they poll this.
    return JsonResponse({"type": "progress", "job": generation_snapshot(_own_job(request, job_id))})


@require_POST
def generate_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    try:
        generation_cancel(job_id=job_id, owner_key=_owner_key(request))
    except GenerationNotFound as error:
        raise Http404(str(error)) from error
    return redirect("quiz:generate_detail", job_id=job_id)


@require_POST
def generate_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    try:
        job = generation_job_get(job_id=job_id, owner_key=_owner_key(request))
        if job.kind == JobKind.CHECK and job.round is not None:
            fresh = round_check_job_create(round_=job.round, owner_key=_owner_key(request))
        else:
            fresh = generation_retry(
                job_id=job_id, owner_key=_owner_key(request), client_network=_client_network(request)
            )
    except GenerationNotFound as error:
        raise Http404(str(error)) from error
    except QuizError as error:
        job = _own_job(request, job_id)
        context = {
            "job": job,
            "snapshot": generation_snapshot(job),
            "token": generation_token(job_id=job.pk),
            "questions": [],
            "retry_error": str(error),
        }
        response = render(request, "quiz/generate_job.html", context, status=400)
        return _refused(response, error) if isinstance(error, GenerationLimited) else response
    generation_enqueue(job_id=fresh.pk)
    return redirect("quiz:generate_detail", job_id=fresh.pk)
