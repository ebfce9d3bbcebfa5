from django.apps import AppConfig
from django.db.models.signals import post_migrate


class QuizConfig(AppConfig):
    name = "quiz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from quiz.image_retention import image_receivers_connect
        from quiz.jobs import checks  # noqa: F401 - registers the start-up checks

        image_receivers_connect()
        # The word index is the database's own (quiz/questions/search_index.py): mended after any migrate that broke it.
        post_migrate.connect(_search_index_ensure, sender=self)


def _search_index_ensure(sender, using: str = "default", **kwargs) -> None:
    from django.db import connections

    from quiz.questions.search_index import search_index_repair

    search_index_repair(connections[using])
