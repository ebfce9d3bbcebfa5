from django.utils.translation import gettext_lazy as _


class GameError(Exception):
    """A domain error with a code for clients and a message a person can read."""

    code = "game_error"

    def __init__(self, message: str | None = None):
        # The args hold it rendered (plain text for logs and pickling); str() renders it again in the language of
        # whoever is being answered: a batch of joins raises for every joiner in one thread, in one language.
        self.message = message or self.default_message
        super().__init__(str(self.message))

    def __str__(self) -> str:
        return str(self.message)

    default_message = _("That did not work.")


class BadMessage(GameError):
    code = "bad_message"
    default_message = _("That message is not one the game understands.")


def whole_field(message: dict, field: str, missing: str) -> int:
    """The message's whole number `field` (not a boolean); BadMessage with `missing` when it has none."""
    value = message.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadMessage(missing)
    return value


class RoomNotFound(GameError):
    code = "room_not_found"
    default_message = _("There is no game with that code. Check the code on the host's screen.")


class RoomFull(GameError):
    code = "room_full"
    default_message = _("This game is full.")


class RoomLocked(GameError):
    code = "room_locked"
    default_message = _("The host has locked this game: no new players can join.")


class GameOver(GameError):
    code = "game_over"
    default_message = _("This game has finished.")


class NicknameInvalid(GameError):
    code = "nickname_invalid"
    default_message = _("Choose a nickname of 1 to 20 characters.")


class NicknameCharacters(NicknameInvalid):
    default_message = _(
        "A nickname cannot contain invisible or control characters. Letters, digits, spaces and emoji are fine."
    )


class NicknameBlocked(NicknameInvalid):
    default_message = _("That nickname has a word that cannot go on the big screen. Choose another.")


class NicknameTaken(GameError):
    code = "nickname_taken"
    default_message = _("Someone in this game already has that nickname. Choose another.")


class BadToken(GameError):
    code = "bad_token"
    default_message = _("Your place in this game could not be found. Join again.")


class PlayerRemoved(GameError):
    code = "removed"
    default_message = _("The host removed you from this game.")


class PlayerBlocked(GameError):
    code = "blocked"
    default_message = _("The host removed you from this game and you cannot join it again.")


class NotNow(GameError):
    code = "not_now"
    default_message = _("That cannot be done at this point of the game.")


class AnswerRefused(GameError):
    code = "answer_refused"
    default_message = _("Your answer could not be taken.")


class TooLate(AnswerRefused):
    code = "too_late"
    default_message = _("Time is up: your answer came after the deadline.")


class AlreadyAnswered(AnswerRefused):
    code = "already_answered"
    default_message = _("You have already answered this question.")


class AlreadyReported(GameError):
    code = "already_reported"
    default_message = _("You have already reported this question. Thank you.")
