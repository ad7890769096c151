"""A studio started as root trains as another account.

The stack's Ray head runs as the trainer account (`studio.platform.trainer_account`, the
account `rlstudio up` gives it under root), so every trainer process does. Trainers then
reach the reward sandbox's full isolation through user namespaces instead of root: a
run with custom reward code succeeds with no partial isolation allowed, and the hostile
sandbox tests pass when run as that account.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.paths import REPO_ROOT
from studio.platform.trainer_account import own_folders, trainer_os_user
from tests.runs.conftest import TERMINAL, Api, Stack, eventually, live_stack, tiny_config
from tests.warm_runtimes import runtime_processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(os.geteuid() != 0, reason="only a studio started as root switches"),
]

REWARD = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    return float(solution_str.strip() == str(ground_truth).strip())
"""


@pytest.fixture(scope="module")
def account() -> str:
    user = trainer_os_user()  # created when missing, as `rlstudio up` does
    assert user is not None and user != "root"
    return user


def _readable_by_all(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module")
def stack(
    django_db_setup: None,
    tmp_path_factory: pytest.TempPathFactory,
    tiny_assets: Path,
    account: str,
) -> Iterator[Stack]:
    """The runs stack with its Ray head as the trainer account. The test's own temp dirs
    are root's alone, so the model lives in a folder every user can read, and what the
    trainer writes (checkpoints, its working directory) belongs to the account."""
    shared = Path(tempfile.mkdtemp(prefix="rl-account-", dir="/tmp"))
    models = shared / "models"
    shutil.copytree(tiny_assets / "model", models / "model")
    _readable_by_all(shared)
    checkpoints, workdir = shared / "checkpoints", shared / "trainer"
    data_cache = shared / "data-cache"  # the trainers' downloads (trainer.data.remote)
    own_folders(account, [checkpoints, workdir, data_cache])
    env = {"RLSTUDIO_CHECKPOINT_ROOT": str(checkpoints), "RLSTUDIO_TRAINER_WORKDIR": str(workdir)}
    assert "RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL" not in os.environ
    # A test worker's own data cache (tests/suite_workers.py) is root's: the account's
    # trainers, who inherit the Ray head's environment, get one of theirs.
    yield from live_stack(
        tmp_path_factory,
        models,
        "",
        name="account",
        environ={"RLSTUDIO_DATA_CACHE": str(data_cache)},
        extra_env=env,
        ray_user=account,
    )
    shutil.rmtree(shared, ignore_errors=True)


def test_a_root_studio_trains_as_the_trainer_account_with_the_full_sandbox(
    stack: Stack, api: Api, tiny_assets: Path, account: str
) -> None:
    reward = api.post(
        "/api/reward-functions/",
        {"project": api.project.slug, "name": "exact", "code": REWARD},
        201,
    )
    config = tiny_config(tiny_assets)
    created = api.create_run("as-account", config, reward_version=reward["latest_version"]["id"])

    run = api.wait_status(created["id"], TERMINAL, 180, stack)

    # A custom reward scored in the sandbox, which refuses to start with less than full
    # isolation unless told otherwise (and nothing here tells it).
    assert run["status"] == "succeeded", run["last_error"]
    keys = api.get(f"/api/runs/{run['id']}/metrics/keys")["keys"]
    assert "critic/score/mean" in keys
    sid = run["attempts"][0]["submission_id"]
    eventually(lambda: stack.ray_jobs()[sid].status == "SUCCEEDED", 30, "the Ray job ended")
    from ray.job_submission import JobSubmissionClient

    log = JobSubmissionClient(stack.ray_address).get_job_logs(sid)
    uid = pwd.getpwnam(account).pw_uid
    assert re.search(rf"trainer process: user {account} \(uid {uid}\)", log), log[-2000:]
    written = [p for p in Path(stack.env["RLSTUDIO_CHECKPOINT_ROOT"]).rglob("*") if p.is_file()]
    assert written and {p.stat().st_uid for p in written} == {uid}
    assert all(p.stat().st_mode & 0o077 == 0 for p in written)  # closed to other users

    # The run started the account's warm runtime (trainer.warm): the next one is forked
    # from it, as the account, and its reward code still gets the full sandbox.
    assert stack.warm_dir is not None
    eventually(lambda: any(stack.warm_dir.glob("*.sock")), 120, "the warm runtime is up")
    [runtime] = runtime_processes(stack.warm_dir)
    assert runtime.uids().real == uid
    again = api.create_run("warm", config, reward_version=reward["latest_version"]["id"])
    warm = api.wait_status(again["id"], TERMINAL, 120, stack)
    assert warm["status"] == "succeeded", warm["last_error"]
    log = JobSubmissionClient(stack.ray_address).get_job_logs(warm["attempts"][0]["submission_id"])
    assert "warm runtime: forked pid" in log
    assert re.search(rf"trainer process: user {account} \(uid {uid}\)", log), log[-2000:]


# Run unprivileged by the test below: the attacks, and closing pools mid-batch.
SANDBOX_TESTS = ("tests/rewards/test_sandbox_hostile.py", "tests/rewards/test_sandbox_close.py")


def test_the_hostile_sandbox_tests_pass_as_the_trainer_account(account: str) -> None:
    """The reward sandbox's attack tests, run unprivileged: full isolation comes from user
    namespaces there, and every attack is still held; a pool closed mid-batch leaves no
    process behind there either."""
    home = Path(tempfile.mkdtemp(prefix="rl-account-home-", dir="/tmp"))
    own_folders(account, [home])
    entry = pwd.getpwnam(account)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "SECRET_KEY": "sandbox-tests-as-the-trainer-account",
        "RLSTUDIO_VAR_DIR": str(home / "var"),
    }
    try:
        pytest_args = ["-q", "-p", "no:cacheprovider", f"--basetemp={home / 'pytest'}"]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *pytest_args, *SANDBOX_TESTS],
            cwd=REPO_ROOT,
            env=env,
            user=entry.pw_uid,
            group=entry.pw_gid,
            extra_groups=[],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.fullmatch(r"\d+ passed in [\d.]+s( \(.*\))?", summary), summary  # none skipped
