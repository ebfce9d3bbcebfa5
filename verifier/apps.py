from django.apps import AppConfig


class VerifierConfig(AppConfig):
    name = "verifier"
    default_auto_field = "django.db.models.BigAutoField"
