from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    # The language switch (set_language: POST, remembered in a cookie) and static/js's catalogue.
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    # The question bank: quiz searches it, and a question's record reads the game and the review side (lobby).
    path("rounds/bank/", include("lobby.pages.bank_urls")),
    path("rounds/", include("quiz.urls")),
    path("", include("lobby.urls")),
]
