"""Serves the built single-page app's index.html (assets come from WhiteNoise).

Every client-side route (/runs, /status, ...) gets the same page; the React
router picks the view. The page sets Django's csrftoken cookie so the app can
send it back in the X-CSRFToken header on state-changing requests.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

# Paths the SPA must never answer: the API, the admin and static files keep their
# own 404s. Used by the catch-all route in studio/urls.py.
SPA_PATH_PATTERN = r"^(?!(?:api|admin|static|assets)(?:/|$)).*$"

NOT_BUILT_PAGE = (
    "<!doctype html><title>RL Studio</title><h1>RL Studio</h1>"
    "<p>The frontend is not built yet: run <code>make up</code> (or "
    "<code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>).</p>"
    '<p><a href="/api/health">API health</a> · <a href="/api/docs/">API docs</a></p>'
)


@require_safe
@ensure_csrf_cookie
def index(request: HttpRequest) -> HttpResponse:
    page = settings.FRONTEND_DIST / "index.html"
    body = page.read_bytes() if page.exists() else NOT_BUILT_PAGE.encode()
    response = HttpResponse(body, content_type="text/html; charset=utf-8")
    # index.html names the hashed asset files of the current build: always revalidate it.
    patch_cache_control(response, no_cache=True)
    return response
