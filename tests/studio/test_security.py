"""Security headers (CSP everywhere, HSTS and secure cookies in production), CSRF on
browser sessions, login throttling, and the audit log."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from django.http import HttpResponse
from django.test import override_settings
from rest_framework.test import APIClient

from studio.core import login_limits
from studio.core.security import DEFAULT_POLICY, REDOC_POLICY, ContentSecurityPolicyMiddleware
from studio.paths import REPO_ROOT
from studio.projects.models import AuditEvent
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample
from tests.studio.conftest import PASSWORD
from tests.studio.test_runs_api import dataset_version

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'; object-src 'none'; base-uri 'self'"
)


@pytest.fixture(autouse=True)
def fresh_throttles(django_db_setup: None) -> Iterator[None]:
    login_limits.forget_all()  # the login limits count in Redis, across tests
    yield
    login_limits.forget_all()


# --- Content-Security-Policy ---------------------------------------------------------


class Tags(HTMLParser):
    """The <script> and <link> tags of a page, and whether a script is inline."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.inline_scripts = 0
        self._in_script_without_src = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script":
            if values.get("src"):
                self.sources.append(values["src"] or "")
            elif values.get("type") != "application/json":  # data, never executed
                self._in_script_without_src = True
        if tag == "link" and values.get("href"):
            self.sources.append(values["href"] or "")

    def handle_data(self, data: str) -> None:
        if self._in_script_without_src and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script_without_src = False


def tags_of(html: bytes) -> Tags:
    parser = Tags()
    parser.feed(html.decode())
    return parser


def test_the_policy_allows_only_our_own_origin():
    assert "; ".join(f"{k} {v}" for k, v in DEFAULT_POLICY.items()) == POLICY
    assert REDOC_POLICY["worker-src"] == "'self' blob:"  # Redoc's search index
    assert all("unsafe-eval" not in v for v in (*DEFAULT_POLICY.values(), *REDOC_POLICY.values()))
    assert all("http" not in v and "*" not in v for v in DEFAULT_POLICY.values())


@pytest.mark.parametrize(
    "path", ["/", "/runs/12", "/api/health", "/api/schema/", "/api/docs/", "/admin/login/"]
)
def test_every_page_and_api_answer_carries_the_policy(db, path):
    response = APIClient().get(path)
    assert response.status_code in (200, 503), response.content[:200]
    assert response["Content-Security-Policy"] == POLICY
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_api_errors_carry_the_policy_too(db):
    response = APIClient().get("/api/runs/")
    assert response.status_code == 401
    assert response["Content-Security-Policy"] == POLICY


def test_redoc_gets_blob_workers_and_nothing_else_more(db):
    response = APIClient().get("/api/redoc/")
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == POLICY.replace(
        "worker-src 'self'", "worker-src 'self' blob:"
    )


@pytest.mark.parametrize("path", ["/", "/api/docs/", "/api/redoc/"])
def test_pages_load_only_local_assets_and_no_inline_scripts(db, path):
    response = APIClient().get(path)
    tags = tags_of(response.content)
    assert tags.inline_scripts == 0, f"{path} has an inline script the CSP would block"
    assert tags.sources, f"{path} loads nothing?"
    remote = [s for s in tags.sources if re.match(r"^(https?:)?//", s)]
    assert not remote, f"{path} loads assets from elsewhere: {remote}"


def test_the_swagger_init_script_is_served_as_a_file(db):
    page = tags_of(APIClient().get("/api/docs/").content)
    init = next(s for s in page.sources if "script" in s and "/api/docs/" in s)
    response = APIClient().get(init)
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]
    assert b"SwaggerUIBundle" in response.content


def test_a_view_that_sets_its_own_policy_keeps_it():
    def view(request):
        response = HttpResponse("sandboxed")
        response["Content-Security-Policy"] = "sandbox"
        return response

    middleware = ContentSecurityPolicyMiddleware(view)
    assert middleware(None)["Content-Security-Policy"] == "sandbox"  # type: ignore[arg-type]


# --- production hardening --------------------------------------------------------------

PRODUCTION_PROBE = """
import django, json
django.setup()
from django.conf import settings
from django.test import Client
plain = Client().get("/api/auth/me")
secure = Client().get("/api/auth/me", secure=True)
print(json.dumps({
    "debug": settings.DEBUG,
    "ssl_redirect": settings.SECURE_SSL_REDIRECT,
    "session_cookie_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_cookie_secure": settings.CSRF_COOKIE_SECURE,
    "plain_status": plain.status_code,
    "plain_location": plain.get("Location"),
    "hsts": secure.get("Strict-Transport-Security"),
    "csp": secure.get("Content-Security-Policy"),
}))
"""


def test_production_mode_redirects_to_https_and_sends_hsts_and_secure_cookies():
    env = {
        **os.environ,
        "RLSTUDIO_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgresql://127.0.0.1:5432/x"),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        "ALLOWED_HOSTS": "testserver",
        "DJANGO_SETTINGS_MODULE": "studio.settings",
    }
    env.pop("DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-c", PRODUCTION_PROBE],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["debug"] is False
    assert seen["ssl_redirect"] is True
    assert seen["plain_status"] == 301
    assert seen["plain_location"] == "https://testserver/api/auth/me"
    assert seen["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert seen["session_cookie_secure"] is True and seen["csrf_cookie_secure"] is True
    assert seen["csp"] == POLICY


def test_development_mode_sends_no_hsts(db):
    response = APIClient().get("/api/health", secure=True)
    assert "Strict-Transport-Security" not in response


# --- sessions: CSRF and login throttling -----------------------------------------------


def test_browser_sessions_need_the_csrf_token_for_login_and_for_writes(world):
    browser = APIClient(enforce_csrf_checks=True)
    credentials = {"username": "member", "password": PASSWORD}
    refused = browser.post("/api/auth/login", credentials, format="json")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["message"]

    browser.get("/")  # the SPA's page sets the csrftoken cookie
    csrf = browser.cookies["csrftoken"].value
    signed_in = browser.post("/api/auth/login", credentials, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert signed_in.status_code == 200
    assert browser.cookies["sessionid"]["httponly"]
    assert browser.get("/api/auth/me").json()["username"] == "member"

    body = {"project": "alpha", "name": "from the browser"}
    assert browser.post("/api/datasets/", body, format="json").status_code == 403
    csrf = browser.cookies["csrftoken"].value  # rotated at login
    created = browser.post("/api/datasets/", body, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert created.status_code == 201


def test_tokens_need_no_csrf_token(world):
    client = world.client("member")
    client.handler.enforce_csrf_checks = True
    created = client.post("/api/datasets/", {"project": "alpha", "name": "ci"}, format="json")
    assert created.status_code == 201


def test_the_eleventh_bad_login_in_a_minute_is_throttled(world):
    client = APIClient()
    wrong = {"username": "member", "password": "not-it"}
    for attempt in range(10):
        response = client.post("/api/auth/login", wrong, format="json")
        assert response.status_code == 401, f"attempt {attempt + 1}: {response.status_code}"
        assert response.json()["error"]["message"] == "Wrong username or password."
    throttled = client.post("/api/auth/login", wrong, format="json")
    assert throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "throttled"
    assert 0 < int(throttled["Retry-After"]) <= 60
    right = {"username": "member", "password": PASSWORD}
    assert client.post("/api/auth/login", right, format="json").status_code == 429


def test_the_login_throttle_counts_per_client_address(world):
    wrong = {"username": "member", "password": "not-it"}
    for _ in range(10):
        APIClient().post("/api/auth/login", wrong, format="json", REMOTE_ADDR="10.0.0.1")
    # Another address, for another account (this one has its own limit now).
    other = APIClient().post(
        "/api/auth/login", {**wrong, "username": "viewer"}, format="json", REMOTE_ADDR="10.0.0.2"
    )
    assert other.status_code == 401


# --- audit log -------------------------------------------------------------------------


def test_creating_changing_cancelling_and_labelling_are_audited_for_members_only(world):
    member = world.client("member")
    version = dataset_version(world.project, world.owner)
    created = member.post(
        "/api/runs/",
        {
            "project": "alpha",
            "name": "audited",
            "preset": "grpo-tiny-arith",
            "dataset_version": version.pk,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    run_id = created.json()["id"]
    assert member.patch(f"/api/runs/{run_id}/", {"notes": "n"}, format="json").status_code == 200
    priority = member.post(f"/api/runs/{run_id}/priority/", {"priority": 3}, format="json")
    assert priority.status_code == 200
    cancel = member.post(f"/api/runs/{run_id}/cancel/", {"reason": "r"}, format="json")
    assert cancel.status_code == 200
    sample = RolloutSample.objects.create(
        run=Run.objects.get(pk=run_id),
        attempt=1,
        seq=0,
        position=0,
        step=1,
        group_id="g",
        data_source="d",
        prompt="p",
        response="r",
        score=0.0,
    )
    labelled = member.post(f"/api/samples/{sample.pk}/labels/", {"label": "bad"}, format="json")
    assert labelled.status_code == 201

    expected = ["sample.label", "run.cancel", "run.priority", "run.update", "run.create"]
    rows = AuditEvent.objects.filter(project=world.project).order_by("-at", "-id")
    assert [e.action for e in rows] == expected
    assert all(e.actor == world.member for e in rows)

    for who in ("owner", "member", "viewer"):
        listed = world.client(who).get("/api/audit/").json()["results"]
        assert [e["action"] for e in listed] == expected, who
        assert {(e["actor"], e["project"]) for e in listed} == {("member", "alpha")}
    cancel = world.client("viewer").get("/api/audit/", {"action": "run.cancel"}).json()
    assert [(e["object_id"], e["detail"]["status"]) for e in cancel["results"]] == [
        (str(run_id), "cancelled")
    ]
    assert world.client("outsider").get("/api/audit/").json()["results"] == []
    assert world.client(None).get("/api/audit/").status_code == 401


def test_failed_writes_leave_no_audit_event(world):
    viewer = world.client("viewer")
    body = {"project": "alpha", "name": "nope", "preset": "grpo-tiny-arith"}
    assert viewer.post("/api/runs/", body, format="json").status_code == 403
    bad = world.client("member").post(
        "/api/runs/", {**body, "overrides": ["nope.key=1"]}, format="json"
    )
    assert bad.status_code == 400
    assert not AuditEvent.objects.exists()


@override_settings(RLSTUDIO_CSP={"default-src": "'none'"})
def test_the_policy_can_be_replaced_in_settings(db):
    assert APIClient().get("/api/health")["Content-Security-Policy"] == "default-src 'none'"


def test_a_json_body_over_the_memory_bound_is_a_413_in_the_api_error_format(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client = world.client("owner")
    response = client.post("/api/projects/", {"name": "x" * 20_000, "slug": "big"}, format="json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
