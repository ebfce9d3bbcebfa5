from django.urls import path

from quiz import views

app_name = "quiz"
urlpatterns = [
    path("", views.round_list, name="round_list"),
    path("new/", views.round_new, name="round_new"),
    path("import/", views.round_import, name="round_import"),
    path("<int:round_id>/edit/", views.round_edit, name="round_edit"),
    path("<int:round_id>/export.csv", views.round_export_csv, name="round_export_csv"),
    path("<int:round_id>/export.json", views.round_export_json, name="round_export_json"),
]
