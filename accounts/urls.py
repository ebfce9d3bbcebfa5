from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("sign-up/", views.sign_up, name="sign_up"),
    path("sign-in/", views.SignInView.as_view(), name="sign_in"),
    path("sign-out/", views.SignOutView.as_view(), name="sign_out"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
]
