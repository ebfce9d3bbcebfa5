"""Words the host takes off the big screen: a word of an open question's cloud or one of a typed question's common
answers, hidden live with one click. It is kept on the room (`Room.hidden_words`, folded as the cloud and the
typed answers fold it), so no later frame of any process shows it."""

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext as _

from lobby import events
from lobby.exceptions import NotNow
from lobby.models import Room
from quiz.kinds.open import MAX_WORD
from quiz.kinds.typed import MAX_TYPED, fold

# More than a cloud shows: hiding never has to stop while a cloud still has words.
MAX_HIDDEN = 200
# The longest text a hide may name: a typed answer's (an open answer's is shorter), with room for its spacing.
MAX_HIDE_TEXT = max(MAX_WORD, MAX_TYPED) * 2


def word_hide(*, room_id: int, word: object) -> None:
    """Hide `word` (as the cloud or the typed answers spell it, or folded) from the current question's reveal,
    from now on."""
    key = fold(word) if isinstance(word, str) and len(word) <= MAX_HIDE_TEXT else ""
    if not key:
        raise NotNow(_("Say which word to hide."))
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        if room.question_index < 0:
            raise NotNow(_("There is no question's word to hide yet."))
        hidden = dict(room.hidden_words or {})
        words = list(hidden.get(str(room.question_index), []))
        if key in words:
            return
        if len(words) >= MAX_HIDDEN:
            raise NotNow(_("That is as many words as can be hidden from one question."))
        hidden[str(room.question_index)] = [*words, key]
        Room.objects.filter(pk=room_id).update(hidden_words=hidden, seq=F("seq") + 1)
        events.room_changed(room_id=room_id)
