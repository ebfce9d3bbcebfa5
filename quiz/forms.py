from pathlib import PurePath
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from quiz.exceptions import InvalidQuestion
from quiz.importing import MAX_TEXT_BYTES
from quiz.validation import (
    MAX_EXPLANATION,
    MAX_OPTION,
    MAX_OPTIONS,
    MAX_SOURCE,
    MAX_TEXT,
    OPTION_LETTERS,
    QuestionData,
    clean_question,
)

MAX_EDITOR_QUESTIONS = 30
BLANK_BLOCKS = 3
OPTION_FIELDS = tuple(f"option_{n}" for n in range(MAX_OPTIONS))


class RoundTitleForm(forms.Form):
    title = forms.CharField(max_length=200, label=_("Round title"))


class QuestionBlockForm(forms.Form):
    """One question of the editor. Every field is optional here: a blank block is ignored, and a filled one
    is judged by `clean_question` alone, so the editor gives the same answers as the importers."""

    text = forms.CharField(
        required=False,
        strip=False,
        label=_("Question"),
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": MAX_TEXT}),
    )
    correct = forms.ChoiceField(
        required=False,
        choices=[(str(index), letter) for index, letter in enumerate(OPTION_LETTERS[:MAX_OPTIONS])],
        widget=forms.RadioSelect,
        label=_("Correct option"),
    )
    explanation = forms.CharField(
        required=False,
        strip=False,
        label=_("Explanation (optional)"),
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": MAX_EXPLANATION}),
    )
    source = forms.CharField(
        required=False,
        strip=False,
        label=_("Source (optional)"),
        widget=forms.TextInput(attrs={"maxlength": MAX_SOURCE}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for index, name in enumerate(OPTION_FIELDS):
            self.fields[name] = forms.CharField(
                required=False,
                strip=False,
                label=_("Option %(letter)s") % {"letter": OPTION_LETTERS[index]},
                widget=forms.TextInput(attrs={"maxlength": MAX_OPTION}),
            )
        self.question: QuestionData | None = None

    @staticmethod
    def initial_from(question: QuestionData) -> dict[str, Any]:
        initial: dict[str, Any] = {
            "text": question.text,
            "correct": str(question.correct_index),
            "explanation": question.explanation,
            "source": question.source,
        }
        for name, option in zip(OPTION_FIELDS, question.options, strict=False):
            initial[name] = option
        return initial

    def option_rows(self) -> list[dict[str, Any]]:
        radios = list(self["correct"])
        return [
            {"letter": OPTION_LETTERS[index], "field": self[name], "radio": radios[index], "extra": index >= 4}
            for index, name in enumerate(OPTION_FIELDS)
        ]

    def has_extra_options(self) -> bool:
        return any(str(self[name].value() or "").strip() for name in OPTION_FIELDS[4:])

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        texts = [data.get("text", ""), *(data.get(name, "") for name in OPTION_FIELDS)]
        texts += [data.get("explanation", ""), data.get("source", "")]
        if not any(value.strip() for value in texts):
            self.question = None  # a blank block
            return data
        options = [data.get(name, "") for name in OPTION_FIELDS]
        while options and not options[-1].strip():
            options.pop()
        raw: dict[str, Any] = {
            "text": data.get("text", ""),
            "options": options,
            "explanation": data.get("explanation", ""),
            "source": data.get("source", ""),
        }
        if data.get("correct"):
            raw["correct_index"] = int(data["correct"])
        try:
            self.question = clean_question(raw)
        except InvalidQuestion as error:
            raise ValidationError(str(error), code="invalid_question") from error
        return data


class BaseQuestionFormSet(forms.BaseFormSet):
    def clean(self) -> None:
        if any(self.errors):
            return
        count = len(self.questions())
        if count == 0:
            raise ValidationError(_("Write at least one question."), code="no_questions")
        if count > MAX_EDITOR_QUESTIONS:
            raise ValidationError(
                _("The editor takes up to %(max)s questions, not %(count)s.")
                % {"max": MAX_EDITOR_QUESTIONS, "count": count},
                code="too_many",
            )

    def questions(self) -> list[QuestionData]:
        return [form.question for form in self.forms if getattr(form, "question", None) is not None]


QuestionFormSet = forms.formset_factory(
    QuestionBlockForm,
    formset=BaseQuestionFormSet,
    extra=BLANK_BLOCKS,
    max_num=MAX_EDITOR_QUESTIONS,
    # Blank blocks do not count, so accept a few more blocks than questions; clean() counts the questions.
    absolute_max=MAX_EDITOR_QUESTIONS + BLANK_BLOCKS,
)


def question_formset(*, data: Any = None, questions: list[QuestionData] | None = None) -> BaseQuestionFormSet:
    if data is not None:
        return QuestionFormSet(data, prefix="q")
    initial = [QuestionBlockForm.initial_from(question) for question in questions or []]
    return QuestionFormSet(initial=initial, prefix="q")


class ImportForm(forms.Form):
    title = forms.CharField(
        max_length=200,
        required=False,
        label=_("Round title"),
        help_text=_("Optional: a JSON file's own title or the file name is used otherwise."),
    )
    file = forms.FileField(required=False, label=_("File (.csv or .json)"))
    text = forms.CharField(
        required=False,
        label=_("Or paste CSV or JSON"),
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        pasted = data.get("text") or ""
        if upload and pasted.strip():
            raise ValidationError(_("Choose a file or paste text, not both."), code="both")
        if upload:
            if upload.size > MAX_TEXT_BYTES:
                raise ValidationError(
                    _("The file is larger than %(size)s KB.") % {"size": MAX_TEXT_BYTES // 1024}, code="too_large"
                )
            try:
                content = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise ValidationError(_("The file is not UTF-8 text."), code="encoding") from error
            name = PurePath(upload.name or "").name
            suffix = PurePath(name).suffix.lower()
            data["format"] = suffix[1:] if suffix in (".csv", ".json") else _sniff_format(content)
            data["source_name"] = PurePath(name).stem
        elif pasted.strip():
            content = pasted
            data["format"] = _sniff_format(content)
            data["source_name"] = ""
        else:
            raise ValidationError(_("Choose a file or paste some text."), code="empty")
        data["content"] = content
        return data


def _sniff_format(content: str) -> str:
    return "json" if content.lstrip("\ufeff \t\r\n")[:1] in ("[", "{") else "csv"
