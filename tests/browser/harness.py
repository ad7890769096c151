"""One live studio shared by every browser test, and a chromium page that fails its test
on any console error or failed request.

The stack is the real thing (uvicorn, a Celery worker and beat, a Ray head, the demo
model), bound to pytest's test database. Browser tests write through the API like a user
does, so the data the servers see is committed; the package fixture flushes it at the end.
"""

from __future__ import annotations

import contextlib
import io
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from tests.live import LiveProcess

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/lib/chromium/chromium")  # Debian's; /usr/bin/chromium is a wrapper script
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = REPO_ROOT / "var" / "test-artifacts" / "browser"
WIDE = {"width": 1440, "height": 900}
NARROW = {"width": 390, "height": 844}
TERMINAL = {"succeeded", "failed", "cancelled"}


@dataclass
class StudioUser:
    id: int
    username: str
    password: str
    project_slug: str


@dataclass
class LiveStudio:
    url: str
    processes: list[LiveProcess]
    env: dict[str, str]
    demo_run_id: int | None = None
    demo_owner: StudioUser | None = None
    _sessions: dict[str, requests.Session] = field(default_factory=dict)

    def new_user(self, name_prefix: str = "u") -> StudioUser:
        """A user who owns a fresh project. The password is hashed with the servers' own
        hasher (the test process adds a fast one the servers do not know)."""
        from django.contrib.auth.hashers import make_password
        from django.contrib.auth.models import User

        from studio.projects.models import Membership, Project, Role

        username = f"{name_prefix}-{secrets.token_hex(3)}"
        password = f"pw-{username}"
        user = User.objects.create(
            username=username, password=make_password(password, None, "pbkdf2_sha256")
        )
        project = Project.objects.create(
            name=f"{username} project", slug=f"p-{username}", created_by=user
        )
        Membership.objects.create(project=project, user=user, role=Role.OWNER)
        return StudioUser(user.pk, username, password, project.slug)

    def demo_dataset(self, user: StudioUser, name: str = "arith") -> int:
        """The demo data `name` (its train and test files, the test rows labelled as held
        out) uploaded as a dataset of `user`'s project; its version's id."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = Path(self.env["RLSTUDIO_VAR_DIR"]) / "demo-data" / name
        table = pa.concat_tables(
            [pq.read_table(folder / "train.parquet"), pq.read_table(folder / "test.parquet")]
        )
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        api = self.api(user)
        dataset = api.post(
            f"{self.url}/api/datasets/",
            json={"project": user.project_slug, "name": name},
            timeout=30,
        )
        assert dataset.status_code == 201, dataset.text
        version = api.post(
            f"{self.url}/api/datasets/{dataset.json()['id']}/versions/",
            files={"file": (f"{name}.parquet", buffer.getvalue())},
            timeout=60,
        )
        assert version.status_code == 201, version.text
        return int(version.json()["id"])

    def api(self, user: StudioUser) -> requests.Session:
        """A requests session signed in as `user` through the session API, sending the
        CSRF token on every request the way the browser app does."""
        if user.username in self._sessions:
            return self._sessions[user.username]
        session = requests.Session()
        session.get(f"{self.url}/", timeout=30).raise_for_status()  # sets csrftoken
        session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
        response = session.post(
            f"{self.url}/api/auth/login",
            json={"username": user.username, "password": user.password},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        session.headers["X-CSRFToken"] = session.cookies["csrftoken"]  # rotated on login
        self._sessions[user.username] = session
        return session

    def wait_for_run(
        self, user: StudioUser, run_id: int, statuses: set[str], timeout_s: float
    ) -> dict[str, Any]:
        session = self.api(user)
        deadline = time.monotonic() + timeout_s
        while True:
            run: dict[str, Any] = session.get(f"{self.url}/api/runs/{run_id}/", timeout=30).json()
            if run["status"] in statuses:
                return run
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {p.name}\n{p.log()[-3000:]}" for p in self.processes)
                raise AssertionError(
                    f"run {run_id} is {run['status']} after {timeout_s:g} s, wanted {statuses}: "
                    f"{run.get('status_reason')}\n{run.get('last_error', '')}\n{logs}"
                )
            time.sleep(0.5)


@dataclass
class TrainedRun:
    id: int
    owner: StudioUser
    project_slug: str
    detail: dict[str, Any]


# Requests whose failure says nothing about the app: a navigation or an unmounted
# component cancels in-flight fetches and EventSource streams.
BENIGN_FAILURES = ("net::ERR_ABORTED", "NS_BINDING_ABORTED")
# Chromium logs every 4xx/5xx response as a console error, without its URL; the request
# check judges those, URL in hand (a 400 the UI shows at a field is expected behaviour,
# a 500 is not).
RESOURCE_STATUS = re.compile(
    r"Failed to load resource: the server responded with a status of (\d+)"
)
# /api/health answers 503 by design when a component is late or down ("degraded", which
# the app shows): on a loaded machine Ray's dashboard can miss the probe's 2 s. Tests of
# health check its answer themselves.
DESIGNED_5XX = {("/api/health", 503)}


def console_error_is_problem(text: str) -> bool:
    return RESOURCE_STATUS.search(text) is None


def response_is_problem(url: str, status: int) -> bool:
    return status >= 500 and (urlsplit(url).path, status) not in DESIGNED_5XX


@dataclass
class PageProblems:
    """What went wrong in the page while the test ran."""

    items: list[str] = field(default_factory=list)

    def watch(self, page: Any, studio_url: str) -> None:
        def on_console(message: Any) -> None:
            if message.type == "error" and console_error_is_problem(message.text):
                self.items.append(f"console error: {message.text} ({message.location})")

        def on_page_error(error: Any) -> None:
            self.items.append(f"uncaught page error: {error}")

        def on_request_failed(request: Any) -> None:
            failure = request.failure or ""
            if not any(benign in failure for benign in BENIGN_FAILURES):
                self.items.append(f"request failed: {request.method} {request.url}: {failure}")

        def on_response(response: Any) -> None:
            if response.url.startswith(studio_url) and response_is_problem(
                response.url, response.status
            ):
                self.items.append(
                    f"HTTP {response.status}: {response.request.method} {response.url}"
                )

        page.on("console", on_console)
        page.on("pageerror", on_page_error)
        page.on("requestfailed", on_request_failed)
        page.on("response", on_response)


class Shots:
    """Numbered screenshots of one test under var/test-artifacts/browser/<test>/."""

    def __init__(self, page: Any, test_name: str) -> None:
        self.page = page
        self.folder = ARTIFACTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
        self.count = 0
        with contextlib.suppress(FileNotFoundError):
            for old in self.folder.glob("*.png"):
                old.unlink()
        self.folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str, narrow: bool = False) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{name}{'-narrow' if narrow else ''}.png"
        if narrow:
            self.page.set_viewport_size(NARROW)
            try:
                self.page.wait_for_timeout(300)  # let the layout settle at the new width
                self.page.screenshot(path=str(path), full_page=True)
            finally:
                self.page.set_viewport_size(WIDE)
        else:
            self.page.screenshot(path=str(path), full_page=True)
        return path


def sign_in(page: Any, studio: LiveStudio, user: StudioUser) -> None:
    """Sign `user` in through the session API inside the page's browser context, for
    tests that are not about the sign-in form."""
    request = page.context.request  # shares the context's cookie jar
    request.get(f"{studio.url}/")  # the app's index sets the csrftoken cookie
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = request.post(
        f"{studio.url}/api/auth/login",
        data={"username": user.username, "password": user.password},
        headers={"X-CSRFToken": token},
    )
    assert response.status == 200, response.text()


def wait_for_sample_list(page: Any, **fields: object) -> None:
    """Wait until the rollout explorer's list is loaded for a query whose `fields` have
    these values (None: the field is absent). The URL changes before the list does: a
    wait for the URL and then for "ready" can read the previous filters' rows."""
    page.wait_for_function(
        """expected => {
            const status = document.querySelector('[data-testid=list-status]');
            if (!status || status.dataset.state !== 'ready') return false;
            const query = JSON.parse(status.dataset.query || '{}');
            return Object.entries(expected).every(
                ([k, v]) => (v === null ? !(k in query) : query[k] === v));
        }""",
        arg=fields,
    )
