"""Fixtures shared by every test folder."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# The demo assets depend only on these sources (and the library versions): a cache keyed
# by their hash is rebuilt whenever any of them changes.
DEMO_SOURCES = ("trainer/models/demo.py", "trainer/data/toy.py")


def _demo_cache_key() -> str:
    import tokenizers
    import torch
    import transformers

    digest = hashlib.sha256()
    for name in DEMO_SOURCES:
        digest.update((REPO_ROOT / name).read_bytes())
    for version in (torch.__version__, transformers.__version__, tokenizers.__version__):
        digest.update(version.encode())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def demo_assets() -> Path:
    """The offline demo model (`model/`) and toy datasets (`data/`), built by the real
    builder once per source version and shared by test sessions through a cache under
    var/test-cache (set RLSTUDIO_TEST_CACHE to move it). The build is seeded, so a cached
    copy is the same files a fresh build writes; it is made in a temporary folder and
    renamed into place under a lock, so parallel sessions never see a half-built one."""
    from trainer.models.demo import build_demo_assets

    cache = Path(os.environ.get("RLSTUDIO_TEST_CACHE", REPO_ROOT / "var" / "test-cache"))
    cache.mkdir(parents=True, exist_ok=True)
    root = cache / f"demo-{_demo_cache_key()}"
    with open(cache / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "complete").exists():
            building = cache / f"building-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_assets(building / "model", building / "data", seed=0)
            (building / "complete").write_text("ok\n")
            shutil.rmtree(root, ignore_errors=True)
            building.rename(root)
    return root


@pytest.fixture(scope="session")
def demo_reward_model(demo_assets: Path) -> Path:
    """The demo reward model (trainer.models.demo_reward) on the cached demo model, cached
    beside it under a key of its builder's source (a few seconds to build)."""
    from trainer.models.demo_reward import build_demo_reward_model

    source = REPO_ROOT / "trainer" / "models" / "demo_reward.py"
    key = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    folder = demo_assets / f"reward-model-{key}"
    with open(demo_assets.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "config.json").exists():
            building = demo_assets.parent / f"building-rm-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_reward_model(demo_assets / "model", building, seed=0)
            building.rename(folder)
    return folder


TOOLS_MODEL_SOURCES = (
    "trainer/models/demo_tools.py",
    "trainer/env/chat.py",
    "trainer/env/toolcalls.py",
)


@pytest.fixture(scope="session")
def demo_tools_assets(demo_assets: Path) -> Path:
    """The demo tools model (`model/`) and the tools-arith data (`data/tools-arith/`), built
    by trainer.models.demo_tools on the cached demo model, cached beside it under a key of
    its sources (the warm start takes a minute or two on a busy machine)."""
    from trainer.models.demo_tools import build_demo_tools_model

    digest = hashlib.sha256()
    for name in TOOLS_MODEL_SOURCES:
        digest.update((REPO_ROOT / name).read_bytes())
    folder = demo_assets / f"tools-{digest.hexdigest()[:12]}"
    with open(demo_assets.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "model" / "config.json").exists():
            building = demo_assets.parent / f"building-tools-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_tools_model(demo_assets / "model", building / "model", building / "data")
            building.rename(folder)
    return folder


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """Hash test passwords with MD5 instead of PBKDF2. PBKDF2's million rounds cost ~0.33 s
    of CPU a password here and the studio tests create users for nearly every test; no test
    is about the hasher. Servers that tests start in subprocesses keep the real settings
    (they check tokens and their own users' passwords, never these)."""
    from django.conf import settings
    from django.test import override_settings

    hashers = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield
