"""What Ctrl-C on `rlstudio up` does to a run that is training, and what the next `up` says
of it: docs/distributed.md, "Stopping a node", where `up`'s other stops had an idle Ray head.

A fresh `rlstudio up` (demo model built), a demo run created as a user would (the CLI,
with a token made through the API), SIGTERM to `up` once the run has reported a step:
how long `up` takes to stop, whether any process it started is left, then a second `up`
and how long until the run's status says what happened to it. About 3 minutes on a quiet
2-core VM; it prints one line per figure.

    .venv/bin/python bench/up_stop_with_run.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.platform.conftest import RLSTUDIO, kill_processes_mentioning
from tests.platform.studio_process import Studio, survivors

TERMINAL = {"succeeded", "failed", "cancelled"}


def admin_token(studio: Studio) -> str:
    """A write-scoped API token of the admin `up` created, through the API as the browser
    signs in (session and CSRF cookie)."""
    found = re.search(r"Created admin user '([^']+)' with password '([^']+)'", studio.log())
    assert found, studio.log()[-2000:]
    base = f"http://127.0.0.1:{studio.web}"
    session = requests.Session()
    session.get(f"{base}/api/auth/me", timeout=10)
    csrf = {"X-CSRFToken": session.cookies.get("csrftoken", ""), "Referer": base}
    login = {"username": found.group(1), "password": found.group(2)}
    session.post(f"{base}/api/auth/login", json=login, headers=csrf, timeout=10).raise_for_status()
    csrf["X-CSRFToken"] = session.cookies.get("csrftoken", "")
    made = session.post(
        f"{base}/api/tokens/", json={"name": "bench", "scopes": ["write"]}, headers=csrf, timeout=10
    )
    made.raise_for_status()
    return str(made.json()["token"])


def demo_inputs(studio: Studio, token: str) -> tuple[int, int]:
    """The demo project's arith dataset and its arith reward function's latest version:
    a run names what it trains on and how it is scored."""
    base = f"http://127.0.0.1:{studio.web}/api"
    auth = {"Authorization": f"Bearer {token}"}
    datasets = requests.get(f"{base}/datasets/?project=demo", headers=auth, timeout=10).json()
    rewards = requests.get(f"{base}/reward-functions/?project=demo", headers=auth, timeout=10)
    dataset = next(d["id"] for d in datasets["results"] if d["name"] == "arith")
    function = next(f for f in rewards.json()["results"] if f["name"] == "arith")
    return int(dataset), int(function["latest_version"]["id"])


def run_status(studio: Studio, token: str, run_id: int) -> dict[str, object]:
    response = requests.get(
        f"http://127.0.0.1:{studio.web}/api/runs/{run_id}/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    response.raise_for_status()
    return dict(response.json())


def wait_for(what: str, check: Callable[[], bool], timeout_s: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if check():
            return time.monotonic() - started
        time.sleep(0.5)
    raise SystemExit(f"no {what} after {timeout_s:g} s")


def main() -> None:
    var = Path(tempfile.mkdtemp(prefix="rls-", dir="/tmp"))
    var.chmod(0o755)
    studio = Studio(var)
    try:
        print(f"first start (demo model built): {studio.start(demo=True):.1f} s", flush=True)
        token = admin_token(studio)
        env = {**os.environ, "RLSTUDIO_URL": f"http://127.0.0.1:{studio.web}"}
        env["RLSTUDIO_TOKEN"] = token
        dataset, reward_version = demo_inputs(studio, token)
        create = [str(RLSTUDIO), "runs", "create", "--project", "demo", "--name", "stop-bench"]
        create += ["--dataset", str(dataset), "--reward-version", str(reward_version)]
        create += ["--preset", "grpo-tiny-arith", "--set", "trainer.total_steps=400", "--json"]
        made = subprocess.run(create, env=env, capture_output=True, text=True)
        if made.returncode != 0:
            raise SystemExit(f"`rlstudio runs create` failed: {made.stderr or made.stdout}")
        run_id = int(json.loads(made.stdout)["id"])

        def stepped() -> bool:
            status = run_status(studio, token, run_id)
            return status["status"] == "running" and bool(status["reward_sparkline"])

        took = wait_for("first step", stepped, 300)
        print(f"run {run_id}: running with a step reported {took:.1f} s after create", flush=True)
        recorded = studio.descendants()
        logged = len(studio.log())
        stop_s = studio.stop()
        assert studio.proc is not None
        print(f"`up` stopped in {stop_s:.1f} s, exit code {studio.proc.returncode}", flush=True)
        for line in studio.log()[logged:].splitlines():
            if line.strip().startswith("stopped "):  # the supervisor's tiers, last started first
                print(f"  {line.strip()}", flush=True)
        time.sleep(0.5)
        left = survivors(recorded)
        print(f"processes of `up` left after its stop: {len(left)} {left}", flush=True)

        print(f"second start: {studio.start(demo=True):.1f} s", flush=True)
        before = run_status(studio, token, run_id)["status"]
        said = wait_for(
            "final status",
            lambda: run_status(studio, token, run_id)["status"] in TERMINAL,
            180,
        )
        final = run_status(studio, token, run_id)
        print(
            f"run {run_id} after the restart: {before} -> {final['status']} {said:.1f} s "
            f"after the studio answered; reason: {final['status_reason']!r}; "
            f"last error: {final['last_error']!r}",
            flush=True,
        )
        studio.stop()
    finally:
        studio.kill()
        kill_processes_mentioning(str(var))
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
