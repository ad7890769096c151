"""Serves the built single-page app's index.html (assets come from WhiteNoise)."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse


def index(request: HttpRequest) -> HttpResponse:
    page = settings.FRONTEND_DIST / "index.html"
    if not page.exists():
        return HttpResponse(
            "<!doctype html><title>RL Studio</title><h1>RL Studio</h1>"
            "<p>The frontend is not built yet: run <code>make up</code> (or "
            "<code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>).</p>"
            '<p><a href="/api/health">API health</a> · <a href="/api/docs/">API docs</a></p>',
            content_type="text/html",
        )
    return HttpResponse(page.read_bytes(), content_type="text/html")
