from django.urls import path

from lobby.homework import views as homework_views
from lobby.pages import views

app_name = "lobby"
urlpatterns = [
    path("", views.home, name="home"),
    path("join/", views.join, name="join"),
    path("play/<str:code>/", views.play, name="play"),
    path("host/<str:code>/", views.host, name="host"),
    path("games/", views.past_games, name="past_games"),
    path("host/<str:code>/players/", views.host_players, name="host_players"),
    path("host/<str:code>/results/", views.game_results, name="game_results"),
    path("host/<str:code>/results.csv", views.results, name="results"),
    path("host/<str:code>/teams.csv", views.teams_csv, name="teams_csv"),
    path("host/<str:code>/audit.json", views.audit, name="audit"),
    path("host/<str:code>/cohost/", views.cohost, name="cohost"),
    path("host/<str:code>/cohost/replace/", views.cohost_replace, name="cohost_replace"),
    path("homework/new/", homework_views.homework_new, name="homework_new"),
    path("homework/<str:code>/", homework_views.homework_host, name="homework_host"),
    path("homework/<str:code>/status.json", homework_views.homework_status, name="homework_status"),
    path("hw/<str:code>/", homework_views.homework_play, name="homework_play"),
    path("hw/<str:code>/api/join", homework_views.api_join, name="homework_api_join"),
    path("hw/<str:code>/api/state", homework_views.api_state, name="homework_api_state"),
    path("hw/<str:code>/api/start", homework_views.api_start, name="homework_api_start"),
    path("hw/<str:code>/api/answer", homework_views.api_answer, name="homework_api_answer"),
]
