from django.urls import re_path

from quiz.generation.consumers import GenerationConsumer

websocket_urlpatterns = [
    re_path(r"^ws/generation/(?P<job_id>\d+)/$", GenerationConsumer.as_asgi()),
]
