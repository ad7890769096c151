"""A job's bootstrap secret can't be raced from Ray's dashboard.

A local user who polls Ray's job list and each job's details (the dashboard's HTTP API on
127.0.0.1, with Ray's token where the head asks for one) and tries every string found
there (environment values, entrypoint words, metadata, the submission id, anything else)
as the secret of every job it sees, from the moment the job appears, gets 403 every time,
and the run still trains to success, the model server still answers. The launcher hands
each job its secret in a file only the trainer account can read (studio.runs.handoff);
Ray's view of the job holds only the file's path.

The studio processes and the Ray head are the live stack this package shares
(tests/runs/live/conftest.py): a run, then a playground message to the project's model,
each raced while it starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from studio.runs.models import RunAttempt
from tests.playground_client import Exchange, chat
from tests.runs.conftest import REDIS_URL, TERMINAL, Api, Stack, tiny_config

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# A secret is 68 characters; the endpoints refuse far longer values as malformed (400),
# and a header can't hold whitespace, which separates the words tried anyway.
LONGEST_CANDIDATE = 200


def ray_headers() -> dict[str, str]:
    """Ray's token where the stack's head asks for one (the stack made this process one of
    its clients): the poller holds it, so what it reads is everything Ray shows even to a
    client Ray lets in."""
    try:
        from trainer.distributed.ray_auth import auth_headers
    except ImportError:  # a studio whose Ray heads have no token authentication
        return {}
    return auth_headers()


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys too), and each whitespace-separated word of it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif value is not None:
        text = str(value)
        yield text
        yield from text.split()


def candidates(value: Any) -> set[str]:
    """The strings of `value` that could be sent as a secret."""
    found = set(strings_in(value))
    sendable = (t for t in found if t.isprintable() and " " not in t)
    return {t for t in sendable if 0 < len(t) <= LONGEST_CANDIDATE}


@dataclass
class Try:
    job: str  # the submission id
    candidate: str
    status: int
    at: float  # time.time()


class Poller(threading.Thread):
    """Polls Ray's job list as fast as it answers; for every job of the stack's prefix,
    tries each new string of its list entry at once, then each of its details."""

    def __init__(self, stack: Stack) -> None:
        super().__init__(daemon=True)
        self.prefix = stack.prefix
        self.dashboard = stack.ray_address.rstrip("/")
        self.studio = stack.web.info["url"]
        self.ray = requests.Session()
        self.ray.headers.update(ray_headers())
        self.http = requests.Session()
        self.tries: list[Try] = []
        self.first_seen: dict[str, tuple[float, str]] = {}  # submission id: (at, Ray status)
        self.errors: list[str] = []
        self.tried: dict[str, set[str]] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.poll()
            except Exception as exc:  # an attacker keeps polling; the errors say what failed
                self.errors.append(repr(exc))
                time.sleep(0.05)

    def poll(self) -> None:
        listed = self.ray.get(f"{self.dashboard}/api/jobs/", timeout=10)
        if listed.status_code != 200:
            self.errors.append(f"/api/jobs/: HTTP {listed.status_code} {listed.text[:200]}")
            time.sleep(0.05)
            return
        for job in listed.json():
            submission_id = job.get("submission_id") or ""
            if not submission_id.startswith(self.prefix):
                continue
            self.first_seen.setdefault(submission_id, (time.time(), str(job.get("status"))))
            self.attack(job, job)
            details = self.ray.get(f"{self.dashboard}/api/jobs/{submission_id}", timeout=10)
            if details.status_code == 200:
                self.attack(job, details.json())

    def attack(self, job: dict[str, Any], shown: Any) -> None:
        submission_id = job["submission_id"]
        tried = self.tried.setdefault(submission_id, set())
        for candidate in sorted(candidates(shown) - tried):
            tried.add(candidate)
            status = self.redeem(job, candidate)
            if status is not None:
                self.tries.append(Try(submission_id, candidate, status, time.time()))

    def redeem(self, job: dict[str, Any], candidate: str) -> int | None:
        """The bootstrap endpoint's answer to `candidate` as this job's secret."""
        metadata = job.get("metadata") or {}
        env = (job.get("runtime_env") or {}).get("env_vars") or {}
        run_id = metadata.get("rlstudio_run_id") or env.get("RLSTUDIO_RUN_ID")
        attempt = metadata.get("rlstudio_attempt") or env.get("RLSTUDIO_ATTEMPT")
        server = metadata.get("rlstudio_playground") or env.get("RLSTUDIO_PLAYGROUND_SERVER")
        if run_id and attempt:
            answer = self.http.post(
                f"{self.studio}/api/ingest/runs/{run_id}/bootstrap",
                json={"attempt": int(attempt)},
                headers={"Authorization": f"Bootstrap {candidate}"},
                timeout=10,
            )
        elif server:
            answer = self.http.post(
                f"{self.studio}/api/playground/servers/{server}/bootstrap",
                json={"secret": candidate},
                timeout=10,
            )
        else:
            return None
        return answer.status_code

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=30)


@pytest.fixture
def poller(stack: Stack) -> Iterator[Poller]:
    racing = Poller(stack)
    racing.start()
    try:
        yield racing
    finally:
        racing.stop()


def server_record(submission_id: str) -> dict[str, str]:
    """The studio's record (studio.playground.store) of the server of `submission_id`."""
    redis_client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    for key in redis_client.scan_iter(match="*:pg:server:*"):
        record = {str(k): str(v) for k, v in redis_client.hgetall(key).items()}
        if record.get("submission_id") == submission_id:
            return record
    raise AssertionError(f"no playground server record holds {submission_id}")


def assert_every_try_refused(poller: Poller, submission_id: str) -> list[Try]:
    assert submission_id in poller.first_seen, f"the poller never saw it: {poller.errors[-5:]}"
    tries = [t for t in poller.tries if t.job == submission_id]
    assert tries, "nothing was tried"
    won = [t for t in tries if t.status != 403]
    assert won == [], [(t.candidate, t.status) for t in won]
    return tries


def test_a_poller_of_rays_job_list_cannot_redeem_a_runs_secret(
    stack: Stack,
    api: Api,
    tiny_assets: Path,
    poller: Poller,
) -> None:
    created = api.create_run("raced", tiny_config(tiny_assets))

    run = api.wait_status(created["id"], TERMINAL, 240, stack)

    [attempt] = run["attempts"]
    sid = attempt["submission_id"]
    tries = assert_every_try_refused(poller, sid)
    assert run["status"] == "succeeded", run["last_error"]
    # The poller was in time: it tried while the secret was still unredeemed.
    redeemed = RunAttempt.objects.get(run_id=run["id"], number=1).bootstrapped_at
    assert redeemed is not None
    margin = redeemed.timestamp() - min(t.at for t in tries)
    assert margin > 0, "the trainer redeemed first"
    path = Path(stack.env["RLSTUDIO_CHECKPOINT_ROOT"]) / f"run-{run['id']}" / ".bootstrap-a1"
    assert any(t.candidate == str(path) for t in tries)  # what the job carries: a path
    assert not path.exists()  # read once and deleted by the trainer
    print(f"{len(tries)} strings tried, from {margin:.2f} s before")


def test_a_poller_of_rays_job_list_cannot_redeem_a_model_servers_secret(
    stack: Stack,
    api: Api,
    poller: Poller,
) -> None:
    model = api.model_id("model")
    sampling = {"temperature": 1.0, "max_new_tokens": 8, "seed": 1}

    answered: Exchange | None = None
    try:
        answered = chat(api.url, api.session, api.project.slug, [{"model": model}], sampling, 120)
    except AssertionError as exc:  # a server refused its own secret never answers
        unanswered = str(exc)

    [sid] = [s for s in stack.ray_jobs() if "-playground-" in s]
    tries = assert_every_try_refused(poller, sid)
    assert answered is not None, unanswered
    [done] = answered.of("done")
    assert answered.text(done["reply"]), answered.events
    # The poller was in time: it tried while the secret was still unredeemed. (Ray may
    # already call the job RUNNING when the poller first lists it; the server redeems its
    # secret only after importing torch, so the status is not what tells.)
    margin = float(server_record(sid)["bootstrapped_at"]) - min(t.at for t in tries)
    assert margin > 0, "the server redeemed first"
    print(f"{len(tries)} strings tried, from {margin:.2f} s before")
