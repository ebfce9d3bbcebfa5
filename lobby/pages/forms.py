from datetime import UTC, datetime, timedelta

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy
from django.utils.translation import gettext_lazy as _


class RoomCreateForm(forms.Form):
    source = forms.CharField()  # "pack:<id>" or "round:<id>"
    timer_seconds = forms.IntegerField(
        label=_("Seconds per question"),
        min_value=settings.ROOM_MIN_TIMER,
        max_value=settings.ROOM_MAX_TIMER,
        initial=settings.ROOM_DEFAULT_TIMER,
    )
    no_speed_bonus = forms.BooleanField(
        required=False, label=gettext_lazy("No speed bonus: a right answer scores the same at any moment")
    )
    friendly_names = forms.BooleanField(
        required=False, label=gettext_lazy("Friendly names: each player gets a made-up name like “Brave Otter”")
    )

    reading_seconds = forms.IntegerField(
        label=_("Seconds to read each question before its options appear (0–10)"),
        min_value=0,
        max_value=settings.ROOM_MAX_READING,
        initial=0,
        required=False,
    )

    teams_mode = forms.ChoiceField(
        label=_("Teams"),
        choices=[
            ("off", _("No teams: each for themselves")),
            ("auto", _("Automatic teams")),
            ("named", _("Named teams")),
        ],
        required=False,
        initial="off",
    )
    team_count = forms.IntegerField(
        label=_("Number of teams (2–8)"), min_value=2, max_value=8, initial=2, required=False
    )
    team_names = forms.CharField(label=_("Team names, one a line (2–8)"), max_length=400, required=False)
    team_talk_seconds = forms.IntegerField(
        label=_("Seconds of team talk before the clock starts (0–30)"),
        min_value=0,
        max_value=30,
        initial=0,
        required=False,
    )

    def clean_source(self) -> tuple[str, int]:
        kind, _, raw_id = self.cleaned_data["source"].partition(":")
        if kind not in ("pack", "round") or not raw_id.isdigit():
            raise forms.ValidationError(_("Choose a pack or one of your rounds."))
        return kind, int(raw_id)


class JoinForm(forms.Form):
    code = forms.CharField(max_length=12, label=_("Game code"))


class HomeworkCreateForm(forms.Form):
    """An assignment: the round, its timer, and a deadline as the host's clock reads it. The page's script fills
    `tz_offset` with the browser's offset from UTC at that date (minutes, as JavaScript's getTimezoneOffset:
    UTC minus local); without it the time is taken as UTC."""

    source = forms.CharField()
    timer_seconds = forms.IntegerField(
        min_value=settings.ROOM_MIN_TIMER, max_value=settings.ROOM_MAX_TIMER, initial=settings.ROOM_DEFAULT_TIMER
    )
    deadline_date = forms.DateField(label=_("Deadline: date"))
    deadline_time = forms.TimeField(label=_("Deadline: time"))
    tz_offset = forms.IntegerField(min_value=-16 * 60, max_value=16 * 60, required=False)
    reveal = forms.ChoiceField(
        choices=[
            ("each", _("Show the right answer after each question")),
            ("deadline", _("Show the right answers only after the deadline")),
        ],
        initial="each",
        widget=forms.RadioSelect,
    )
    no_speed_bonus = forms.BooleanField(required=False)

    clean_source = RoomCreateForm.clean_source

    def deadline_utc(self):
        """The deadline as an aware UTC datetime."""
        local = datetime.combine(self.cleaned_data["deadline_date"], self.cleaned_data["deadline_time"])
        offset = self.cleaned_data.get("tz_offset") or 0
        return (local + timedelta(minutes=offset)).replace(tzinfo=UTC)


def _bank_language_choices() -> list[tuple[str, str]]:
    from django.utils import translation

    from quiz.validation import LANGUAGES

    return [("", _("Any language"))] + [
        (code, str(translation.get_language_info(code)["name_translated"])) for code in LANGUAGES
    ]


def _bank_kind_choices() -> list[tuple[str, str]]:
    from quiz.kinds import kind_choices

    return [("", _("Any kind"))] + [(name, str(label)) for name, label in kind_choices()]


def _bank_check_choices() -> list[tuple[str, str]]:
    from quiz.questions.bank import CHECKS, check_words

    return [("", _("However checked"))] + [(str(check), check_words(check)) for check in CHECKS]


class BankSearchForm(forms.Form):
    """The question bank's search (quiz.questions.bank.BankQuery); every field may be left empty. A value that is
    not one of the choices is an error the page shows, and the search runs without it."""

    q = forms.CharField(label=_("Words"), required=False, strip=True, max_length=10_000)
    kind = forms.ChoiceField(label=_("Kind"), required=False, choices=_bank_kind_choices)
    language = forms.ChoiceField(label=_("Language"), required=False, choices=_bank_language_choices)
    check = forms.ChoiceField(
        label=_("Checked"),
        required=False,
        choices=_bank_check_choices,
    )
    played = forms.ChoiceField(
        label=_("Played"),
        required=False,
        choices=[("", _("Played or not")), ("yes", _("Played")), ("no", _("Never played"))],
    )
    source = forms.ChoiceField(
        label=_("From"),
        required=False,
        choices=[("", _("All questions")), ("mine", _("My rounds")), ("packs", _("Sample packs"))],
    )

    def query(self):
        from quiz.questions.bank import BankQuery

        data = getattr(self, "cleaned_data", {})
        # A field that failed validation is absent from cleaned_data: the search runs without it.
        return BankQuery(**{field: data.get(name) or "" for field, name in _QUERY_FIELDS.items()})


_QUERY_FIELDS = {
    "words": "q",
    "kind": "kind",
    "language": "language",
    "check": "check",
    "played": "played",
    "source": "source",
}


class BankRoundForm(forms.Form):
    """The picked questions' ids (the `question` checkboxes) and the new round's title. Which ids may be picked is
    the bank's to say (quiz.questions.bank.bank_round_create): here only that they are ids."""

    title = forms.CharField(label=_("Title of the new round"), max_length=200, required=False)

    def clean(self):
        cleaned = super().clean()
        picked = self.data.getlist("question") if hasattr(self.data, "getlist") else []
        if any(not value.isdigit() or len(value) > 18 for value in picked):
            raise forms.ValidationError(_("The picked questions could not be read: search again and pick them."))
        cleaned["question"] = [int(value) for value in picked]
        return cleaned
