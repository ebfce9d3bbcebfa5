from django.apps import AppConfig


class LobbyConfig(AppConfig):
    name = "lobby"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # A dead server process's players get their open question's lost time back (core/processes.py).
        from lobby.realtime import lost  # noqa: F401
