"""`manage.py check --deploy --fail-level WARNING` in production mode, with the settings
of deploy/.env.example and the ones deploy/compose.yaml sets, reports nothing."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.deploy.files import ENV_EXAMPLE, REPO_ROOT, compose_tree, read_env_file


def production_env() -> dict[str, str]:
    example = read_env_file(ENV_EXAMPLE)
    studio = compose_tree(example)["services"]["web"]["environment"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RLSTUDIO_", "DJANGO_"))}
    env.update(example)
    env.update({k: str(v) for k, v in studio.items()})
    return env


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    return subprocess.run(
        argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_check_deploy_with_the_example_environment_reports_nothing() -> None:
    env = production_env()
    assert env["RLSTUDIO_ENV"] == "production"

    done = check_deploy(env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_check_deploy_fails_on_a_weak_setting() -> None:
    env = production_env()
    env["SECURE_HSTS_SECONDS"] = "0"

    done = check_deploy(env)

    assert done.returncode != 0
    assert "security.W004" in done.stderr + done.stdout


def test_a_checkpoint_root_that_is_a_url_is_refused_naming_the_setting() -> None:
    env = production_env()
    env["RLSTUDIO_CHECKPOINT_ROOT"] = "s3://bucket/checkpoints"

    done = check_deploy(env)

    assert done.returncode != 0
    assert "RLSTUDIO_CHECKPOINT_ROOT='s3://bucket/checkpoints' must be an absolute" in (done.stderr)


PROBE = """
import django
django.setup()
from django.test import Client
client = Client()
for path in ("/api/ingest/runs/1/dataset?split=train", "/api/projects/"):
    print(path, client.get(path, HTTP_HOST="web").status_code)
"""


def test_in_production_plain_http_is_redirected_except_for_probes_and_trainers() -> None:
    env = production_env()
    env["DJANGO_SETTINGS_MODULE"] = "studio.settings"
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    codes = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    assert codes["/api/projects/"] == "301"  # a browser or script: to HTTPS
    # A trainer fetching its dataset over the cluster's plain HTTP is not redirected (it
    # is refused here only for want of a run token).
    assert codes["/api/ingest/runs/1/dataset?split=train"] in ("401", "403")
