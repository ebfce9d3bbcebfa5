from django.contrib.admin.apps import AdminConfig as DjangoAdminConfig


class AdminConfig(DjangoAdminConfig):
    """django.contrib.admin with accounts' site as `admin.site` (the lockout message, TOTP when required)."""

    default_site = "accounts.admin_site.AdminSite"
