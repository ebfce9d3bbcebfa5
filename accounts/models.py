from django.conf import settings
from django.db import models


class HostAccount(models.Model):
    """A signed-in host: the owner key their rounds, generation jobs and rooms are filed under."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="host_account")
    owner_key = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"host account of {self.user}"
