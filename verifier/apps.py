from django.apps import AppConfig


class VerifierConfig(AppConfig):
    name = "verifier"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from verifier import checks

        checks.refuse_model_alias()
