"""Content-Security-Policy on every response (Django 5.2 has no built-in CSP).

The policy allows only the studio's own origin: the built SPA, the admin, and the
locally served Swagger UI / Redoc assets (drf-spectacular-sidecar), never a CDN.

`style-src` needs 'unsafe-inline': the SPA's index.html has a style attribute on its
loading placeholder, the Swagger UI page has an inline <style> block, and Redoc injects
its styles at run time. Scripts stay strictly 'self' (the Swagger UI page is served
with its init script as a separate file, see studio/urls.py).

`csrf_failure` answers CSRF refusals of Django views under /api/ (the session login is
one) in the API's error format, like DRF's session authentication does for its views.

Redoc alone needs more: it runs its search index in a blob: worker, so /api/redoc/ gets
`REDOC_POLICY` (its page is our own template, without drf-spectacular's Google Fonts).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.csrf import csrf_failure as django_csrf_failure

HEADER = "Content-Security-Policy"

DEFAULT_POLICY: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "worker-src": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
}

REDOC_POLICY: dict[str, str] = {
    **DEFAULT_POLICY,
    "worker-src": "'self' blob:",
}


def render(policy: dict[str, str]) -> str:
    return "; ".join(f"{directive} {sources}" for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    """Adds the CSP header unless a view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.default = render(getattr(settings, "RLSTUDIO_CSP", DEFAULT_POLICY))
        self.redoc = render(getattr(settings, "RLSTUDIO_CSP_REDOC", REDOC_POLICY))

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            redoc = request.path.startswith("/api/redoc/")
            response[HEADER] = self.redoc if redoc else self.default
        return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: the API's error format under /api/, Django's page elsewhere."""
    if not request.path.startswith("/api/"):
        return django_csrf_failure(request, reason)
    message = (
        f"CSRF Failed: {reason} Send the csrftoken cookie's value in the X-CSRFToken header "
        "(GET / or /api/auth/me sets the cookie)."
    )
    return JsonResponse({"error": {"code": "permission_denied", "message": message}}, status=403)
