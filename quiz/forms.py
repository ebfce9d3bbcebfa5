from dataclasses import replace
from pathlib import PurePath
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from quiz.exceptions import InvalidQuestion
from quiz.importers import max_upload_bytes
from quiz.kinds import DEFAULT, kind_choices, kind_named, kind_of, kinds_with
from quiz.pictures import images
from quiz.validation import (
    MAX_EXPLANATION,
    MAX_OPTION,
    MAX_OPTIONS,
    MAX_SECONDS,
    MAX_SOURCE,
    MAX_TEXT,
    MIN_SECONDS,
    OPTION_LETTERS,
    QuestionData,
    clean_question,
)

MAX_EDITOR_QUESTIONS = 30
BLANK_BLOCKS = 3
OPTION_FIELDS = tuple(f"option_{n}" for n in range(MAX_OPTIONS))


class RoundTitleForm(forms.Form):
    title = forms.CharField(max_length=200, label=_("Round title"))


def answer_cell(answer_field: str, data: dict[str, Any]) -> str:
    """The chosen kind's answer, from the editor's field for it, as the CSV's `correct` cell (quiz/kinds reads it
    from there): the seam between the editor's fields and a kind's cells."""
    if answer_field == "correct":
        return OPTION_LETTERS[int(data["correct"])] if data.get("correct") else ""
    if answer_field == "correct_many":
        return " ".join(OPTION_LETTERS[int(i)] for i in sorted(data.get("correct_many") or [], key=int))
    return {
        "truth": data.get("truth", ""),
        "answers": data.get("answers", ""),
        "value": data.get("number_answer", ""),
        "up_to": data.get("max_answers", ""),
    }.get(answer_field, "")


class QuestionBlockForm(forms.Form):
    """One question of the editor. Every field is optional here: a blank block is ignored, and a filled one
    is judged by `clean_question` alone, so the editor gives the same answers as the importers."""

    kind = forms.ChoiceField(choices=kind_choices, initial=DEFAULT, label=_("Kind of question"), required=False)
    text = forms.CharField(
        required=False,
        strip=False,
        label=_("Question"),
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": MAX_TEXT}),
    )
    # The answer, in the field its kind uses (quiz/kinds: `answer_field`); the others are ignored.
    correct_many = forms.MultipleChoiceField(
        required=False,
        choices=[(str(index), letter) for index, letter in enumerate(OPTION_LETTERS[:MAX_OPTIONS])],
        widget=forms.CheckboxSelectMultiple,
        label=_("The right options (one or more)"),
    )
    truth = forms.ChoiceField(
        required=False,
        choices=[("true", _("True")), ("false", _("False"))],
        widget=forms.RadioSelect,
        label=_("The statement is"),
    )
    answers = forms.CharField(
        required=False,
        strip=False,
        label=_("Accepted answers, separated by |"),
        help_text=_(
            "Case, accents and punctuation do not matter; one typo is forgiven in a word of 6 letters or more."
        ),
        widget=forms.TextInput(attrs={"maxlength": 1100}),
    )
    max_answers = forms.ChoiceField(
        required=False,
        choices=[(str(n), str(n)) for n in range(1, 6)],
        initial="3",
        label=_("Answers each player may send"),
    )
    number_answer = forms.CharField(
        required=False, label=_("The right number"), widget=forms.TextInput(attrs={"inputmode": "decimal"})
    )
    tolerance = forms.CharField(
        required=False, label=_("Counts as right within ±"), widget=forms.TextInput(attrs={"inputmode": "decimal"})
    )
    minimum = forms.CharField(
        required=False, label=_("Lowest a player can give"), widget=forms.TextInput(attrs={"inputmode": "decimal"})
    )
    maximum = forms.CharField(
        required=False, label=_("Highest a player can give"), widget=forms.TextInput(attrs={"inputmode": "decimal"})
    )
    unit = forms.CharField(required=False, label=_("Unit (optional)"), widget=forms.TextInput(attrs={"maxlength": 20}))
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
    # Text, not a number field: "abc" gets clean_question's message like every other field of the block.
    seconds = forms.CharField(
        required=False,
        label=_("Its own time in seconds (optional)"),
        help_text=format_lazy(_("{low} to {high}; empty: the room's timer."), low=MIN_SECONDS, high=MAX_SECONDS),
        widget=forms.TextInput(attrs={"inputmode": "numeric", "maxlength": 3}),
    )

    image = forms.FileField(
        required=False,
        label=_("Picture (optional)"),
        help_text=_("PNG, JPEG, WebP or GIF, up to 5 MB. The checker does not see it."),
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp,image/gif"}),
    )
    image_alt = forms.CharField(
        required=False,
        strip=False,
        label=_("What the picture shows (alt text)"),
        widget=forms.TextInput(attrs={"maxlength": images.MAX_ALT}),
    )
    # The picture the question already has (its stored name), kept unless removed or replaced.
    image_name = forms.CharField(required=False, widget=forms.HiddenInput)
    image_remove = forms.BooleanField(required=False, label=_("Remove the picture"))

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
        self.uploaded_image = ""

    # Which kinds each of the editor's field groups is for (the page shows a group for the chosen kind).
    KIND_GROUPS = {
        "options": kinds_with(uses_options=True),
        "items": kinds_with(uses_options=True, tallied=False),  # its options are items to put in order
        "correct": kinds_with(answer_field="correct"),
        "correct_many": kinds_with(answer_field="correct_many"),
        "truth": kinds_with(answer_field="truth"),
        "answers": kinds_with(answer_field="answers"),
        "value": kinds_with(answer_field="value"),
        "up_to": kinds_with(answer_field="up_to"),
    }

    @staticmethod
    def initial_from(question: QuestionData) -> dict[str, Any]:
        kind = kind_of(question)
        cells = kind.csv_cells(question)
        initial: dict[str, Any] = {
            "kind": kind.name,
            "text": question.text,
            "explanation": question.explanation,
            "source": question.source,
            "seconds": "" if question.seconds is None else str(question.seconds),
            "image_name": question.image.name if question.image else "",
            "image_alt": question.image.alt if question.image else "",
        }
        for name, option in zip(OPTION_FIELDS, cells["options"], strict=False):
            initial[name] = option
        correct = str(cells["correct"])
        letters = [OPTION_LETTERS.index(c) for c in correct if c in OPTION_LETTERS]
        answer = {
            "correct": ("correct", str(letters[0]) if letters else ""),
            "correct_many": ("correct_many", [str(i) for i in letters]),
            "truth": ("truth", correct),
            "answers": ("answers", correct),
            "value": ("number_answer", correct),
            "up_to": ("max_answers", correct),
        }.get(kind.answer_field)
        if answer:
            initial[answer[0]] = answer[1]
        for field, cell in (("tolerance", "tolerance"), ("minimum", "min"), ("maximum", "max"), ("unit", "unit")):
            if cell in cells:
                initial[field] = str(cells[cell])
        return initial

    def number_fields(self) -> list[Any]:
        return [self[name] for name in ("number_answer", "tolerance", "minimum", "maximum", "unit")]

    def kind_groups(self) -> dict[str, str]:
        return {group: " ".join(kinds) for group, kinds in self.KIND_GROUPS.items()}

    def option_rows(self) -> list[dict[str, Any]]:
        radios = list(self["correct"])
        return [
            {"letter": OPTION_LETTERS[index], "field": self[name], "radio": radios[index], "extra": index >= 4}
            for index, name in enumerate(OPTION_FIELDS)
        ]

    def has_extra_options(self) -> bool:
        return any(str(self[name].value() or "").strip() for name in OPTION_FIELDS[4:])

    def current_image_name(self) -> str:
        """The stored picture this block shows and sends back: the one uploaded with it (kept even when another
        block's error sends the form back), else the one it had."""
        if getattr(self, "question", None) is not None and self.question.image is not None:
            return self.question.image.name
        if getattr(self, "uploaded_image", ""):
            return self.uploaded_image
        name = str(self["image_name"].value() or "")
        return name if images.NAME_PATTERN.match(name) else ""

    def current_image_url(self) -> str:
        return images.image_url(self.current_image_name())

    def _clean_image(self, data: dict[str, Any]) -> images.QuestionImage | None:
        if data.get("image_remove"):
            return None
        upload = data.get("image")
        if upload:
            if upload.size > images.max_bytes():
                raise InvalidQuestion(
                    _("the picture is larger than %(size)s MB") % {"size": f"{images.max_bytes() / 1048576:g}"}
                )
            image = images.image_from_bytes(upload.read(), alt="")
            # Kept at once, so that the form sent back for another block's error still has it.
            self.uploaded_image = images.image_store(image)
            return images.QuestionImage(name=image.name, alt=images.clean_alt(data.get("image_alt")))
        name = data.get("image_name") or ""
        if name and images.NAME_PATTERN.match(name) and images.image_storage().exists(name):
            return images.QuestionImage(name=name, alt=images.clean_alt(data.get("image_alt")))
        return None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        texts = [data.get("text", ""), *(data.get(name, "") for name in OPTION_FIELDS)]
        texts += [data.get("explanation", ""), data.get("source", ""), data.get("image_alt", "")]
        texts += [data.get(name, "") for name in ("answers", "number_answer")]
        if not any(value.strip() for value in texts) and not data.get("image"):
            self.question = None  # a blank block
            return data
        if "kind" in self.errors:
            # A kind the page does not offer (a forged or outdated form): said, never played as another kind.
            raise ValidationError(
                _("Unknown kind of question: %(kind)s. Pick one from the list.")
                % {"kind": str(self.data.get(self.add_prefix("kind"), ""))[:40]},
                code="unknown_kind",
            )
        options = [data.get(name, "") for name in OPTION_FIELDS]
        while options and not options[-1].strip():
            options.pop()
        kind = kind_named(data.get("kind") or DEFAULT)
        cells = {
            "options": options,
            "correct": answer_cell(kind.answer_field, data),
            "tolerance": data.get("tolerance", ""),
            "min": data.get("minimum", ""),
            "max": data.get("maximum", ""),
            "unit": data.get("unit", ""),
        }
        raw: dict[str, Any] = {
            "kind": kind.name,
            "text": data.get("text", ""),
            **kind.from_csv(cells),
            "explanation": data.get("explanation", ""),
            "source": data.get("source", ""),
            "seconds": data.get("seconds", "").strip(),
        }
        try:
            image = self._clean_image(data)
            self.question = replace(clean_question(raw), image=image)
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


def question_formset(
    *, data: Any = None, files: Any = None, questions: list[QuestionData] | None = None
) -> BaseQuestionFormSet:
    if data is not None:
        return QuestionFormSet(data, files, prefix="q")
    initial = [QuestionBlockForm.initial_from(question) for question in questions or []]
    return QuestionFormSet(initial=initial, prefix="q")


class ImportForm(forms.Form):
    title = forms.CharField(
        max_length=200,
        required=False,
        label=_("Round title"),
        help_text=_("Optional: a JSON file's own title or the file name is used otherwise."),
    )
    file = forms.FileField(
        required=False,
        label=_("File"),
        help_text=_(
            "Kahoot! or Quizizz spreadsheet (.xlsx), Moodle XML, GIFT, Aiken, or Quizgate's CSV or JSON: "
            "the format is recognised by itself."
        ),
    )
    text = forms.CharField(
        required=False,
        label=_("Or paste GIFT, Aiken, Moodle XML, CSV or JSON"),
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        pasted = data.get("text") or ""
        if upload and pasted.strip():
            raise ValidationError(_("Choose a file or paste text, not both."), code="both")
        if upload:
            if upload.size > max_upload_bytes():
                size = _("%(size)s MB") % {"size": f"{max_upload_bytes() / 1048576:g}"}
                raise ValidationError(_("The file is larger than %(size)s.") % {"size": size}, code="too_large")
            name = PurePath(upload.name or "").name
            data["raw"] = upload.read()
            data["name"] = name
            data["source_name"] = PurePath(name).stem
        elif pasted.strip():
            data["raw"] = pasted.encode("utf-8")
            data["name"] = ""
            data["source_name"] = ""
        else:
            raise ValidationError(_("Choose a file or paste some text."), code="empty")
        return data
