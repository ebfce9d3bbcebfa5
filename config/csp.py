"""The Content-Security-Policy middleware (django-csp) with one relaxation: the admin's pages may use inline
`<style>`. Django's own change list writes a `<style>` block, and so do our review and sweep pages; inline
script stays refused there as everywhere."""

from csp.constants import UNSAFE_INLINE
from csp.middleware import CSPMiddleware, PolicyParts
from django.http import HttpRequest, HttpResponseBase
from django.urls import reverse

ADMIN_STYLE = {"style-src": [UNSAFE_INLINE]}


class QuizgateCSPMiddleware(CSPMiddleware):
    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if request.path_info.startswith(reverse("admin:index")):
            parts.update = {**(parts.update or {}), **ADMIN_STYLE}
        return parts
