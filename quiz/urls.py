from django.urls import path

from quiz.generation import views as gen_views
from quiz.pages import views
from quiz.pictures import image_views

app_name = "quiz"
urlpatterns = [
    path("", views.round_list, name="round_list"),
    path("new/", views.round_new, name="round_new"),
    path("import/", views.round_import, name="round_import"),
    path("<int:round_id>/edit/", views.round_edit, name="round_edit"),
    path("<int:round_id>/check/", views.round_check, name="round_check"),
    path("packs/<int:pack_id>/check/", views.pack_check, name="pack_check"),
    path("<int:round_id>/export.csv", views.round_export_csv, name="round_export_csv"),
    path("<int:round_id>/export.json", views.round_export_json, name="round_export_json"),
    path("<int:round_id>/export/kahoot/report/", views.round_export_kahoot, name="round_export_kahoot"),
    path("<int:round_id>/export/<str:fmt>/", views.round_export_as, name="round_export_as"),
    path("images/<str:name>", image_views.question_image, name="question_image"),
    path("generate/", gen_views.generate_new, name="generate_new"),
    path("generate/<int:job_id>/", gen_views.generate_detail, name="generate_detail"),
    path("generate/<int:job_id>/status.json", gen_views.generate_status, name="generate_status"),
    path("generate/<int:job_id>/cancel/", gen_views.generate_cancel, name="generate_cancel"),
    path("generate/<int:job_id>/retry/", gen_views.generate_retry, name="generate_retry"),
]
