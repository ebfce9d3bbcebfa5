"""The question bank's pages, under /rounds/bank/ beside the host's rounds (config/urls.py includes them)."""

from django.urls import path

from lobby.pages import bank_views

app_name = "bank"
urlpatterns = [
    path("", bank_views.bank, name="bank"),
    path("<int:question_id>/", bank_views.bank_question, name="question"),
    path("round/", bank_views.bank_round, name="round"),
]
