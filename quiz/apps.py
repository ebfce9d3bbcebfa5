from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from quiz.image_retention import image_receivers_connect
        from quiz.jobs import checks  # noqa: F401 - registers the start-up checks

        image_receivers_connect()
