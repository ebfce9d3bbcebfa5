class QuizError(Exception):
    """A domain error whose message can be shown to a user as it is."""


class InvalidQuestion(QuizError):
    pass


class RoundNotFound(QuizError):
    pass


class GenerationNotFound(QuizError):
    pass


class WriterError(QuizError):
    """The model could not be asked or did not answer; the message is for the host."""
