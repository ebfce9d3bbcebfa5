from django.urls import path

from lobby import views

app_name = "lobby"
urlpatterns = [
    path("", views.home, name="home"),
    path("join/", views.join, name="join"),
    path("play/<str:code>/", views.play, name="play"),
    path("host/<str:code>/", views.host, name="host"),
    path("games/", views.past_games, name="past_games"),
    path("host/<str:code>/results/", views.game_results, name="game_results"),
    path("host/<str:code>/results.csv", views.results, name="results"),
    path("host/<str:code>/teams.csv", views.teams_csv, name="teams_csv"),
    path("host/<str:code>/audit.json", views.audit, name="audit"),
    path("host/<str:code>/cohost/", views.cohost, name="cohost"),
    path("host/<str:code>/cohost/replace/", views.cohost_replace, name="cohost_replace"),
]
