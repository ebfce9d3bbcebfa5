"""The review pages' forms. A fix is edited with quiz's own question form, so it is judged like every question."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from quiz.forms import OPTION_FIELDS, QuestionBlockForm
from quiz.kinds import DEFAULT, KINDS, kind_named, kind_of
from quiz.models import Question
from quiz.validation import OPTION_LETTERS


class LabelForm(forms.Form):
    note = forms.CharField(
        max_length=500, required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), label="Note (optional)"
    )


class FixForm(QuestionBlockForm):
    """The question editor's block, plus why the original was wrong and whether its rounds take the fix."""

    note = forms.CharField(max_length=500, required=False, label="Note (why it was wrong)")
    use_in_rounds = forms.BooleanField(
        required=False, initial=False, label="Use the fixed version in its rounds (also in rooms being played now)"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = (self.data.get(self.add_prefix("kind")) if self.is_bound else self.initial.get("kind")) or DEFAULT
        # One option marked right is a single-choice question's; another kind says its answer in its own field.
        self.fields["correct"].required = kind_named(kind if kind in KINDS else DEFAULT).answer_field == "correct"
        self.order_fields(["kind", "text", *OPTION_FIELDS, "correct", "explanation", "source", "note", "use_in_rounds"])

    @staticmethod
    def initial_for(question: Question) -> dict[str, Any]:
        return {**QuestionBlockForm.initial_from(question.as_data()), "use_in_rounds": False}

    @staticmethod
    def initial_from_suggestion(question: Question, suggestion: dict[str, Any]) -> dict[str, Any]:
        """The question as it is, with the judge's suggestion filled in: the option it would mark marked, and its
        fix as the note. The reviewer edits the rest and still approves it."""
        initial = FixForm.initial_for(question)
        option = suggestion.get("option")
        if isinstance(option, int) and 0 <= option < len(question.options):
            initial["correct"] = str(option)
        if suggestion.get("fix"):
            initial["note"] = f"Judge: {suggestion['fix']}"[:500]
        return initial

    def clean(self) -> dict[str, Any]:
        correct = self.data.get(self.add_prefix("correct"), "")
        if correct.isdigit() and int(correct) < len(OPTION_FIELDS):
            marked = OPTION_FIELDS[int(correct)]
            if not str(self.data.get(self.add_prefix(marked), "")).strip():
                raise ValidationError(f"option {OPTION_LETTERS[int(correct)]}, marked correct, is empty")
        data = super().clean()
        if self.question is None and not self.errors:
            raise ValidationError("the question is empty")
        return data

    def raw_question(self) -> dict[str, Any]:
        """The question as `clean_question` reads it (already judged by it in `clean`)."""
        assert self.question is not None
        kind = kind_of(self.question)
        return {
            "kind": kind.name,
            "text": self.question.text,
            **kind.as_json(self.question),
            "explanation": self.question.explanation,
            "source": self.question.source,
        }


class ThresholdStoreForm(forms.Form):
    backend = forms.CharField(max_length=20)
    model_id = forms.CharField(max_length=200)
    value = forms.FloatField(min_value=0.0, max_value=1.0)
    note = forms.CharField(max_length=300, required=False)
