class QuizError(Exception):
    """A domain error whose message can be shown to a user as it is."""


class InvalidQuestion(QuizError):
    pass


class RoundNotFound(QuizError):
    pass
