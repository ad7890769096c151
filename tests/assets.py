"""The offline demo models and data the tests train on, built once and cached.

Built by the real builders (seeded, so a cached copy is the same files a fresh build
writes) under var/test-cache (RLSTUDIO_TEST_CACHE moves it), keyed by a hash of the
builders' sources and the library versions. Each is made in a temporary folder and
renamed into place under a lock, so parallel sessions never see a half-built one.

`python -m tests.assets` builds all three before a test session: `make test` starts it
beside the static checks, so the several minutes of warm-start training overlap them
instead of holding up the first tests that train.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# The demo assets depend only on these sources (and the library versions).
DEMO_SOURCES = ("trainer/demo/model.py", "trainer/demo/toy_data.py")
TOOLS_MODEL_SOURCES = (
    "trainer/demo/tools_model.py",
    "trainer/env/chat.py",
    "trainer/env/toolcalls.py",
)
REWARD_MODEL_SOURCE = "trainer/demo/reward_model.py"


def cache_dir() -> Path:
    cache = Path(os.environ.get("RLSTUDIO_TEST_CACHE", REPO_ROOT / "var" / "test-cache"))
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def _sources_digest(names: tuple[str, ...]) -> hashlib._Hash:
    digest = hashlib.sha256()
    for name in names:
        digest.update((REPO_ROOT / name).read_bytes())
    return digest


def _demo_cache_key() -> str:
    import tokenizers
    import torch
    import transformers

    digest = _sources_digest(DEMO_SOURCES)
    for version in (torch.__version__, transformers.__version__, tokenizers.__version__):
        digest.update(version.encode())
    return digest.hexdigest()[:16]


def demo_assets() -> Path:
    """The demo model (`model/`) and toy datasets (`data/`)."""
    from trainer.demo.model import build_demo_assets

    cache = cache_dir()
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


def demo_reward_model(demo: Path) -> Path:
    """The demo reward model (trainer.demo.reward_model) on the demo model, beside it."""
    from trainer.demo.reward_model import build_demo_reward_model

    folder = demo / f"reward-model-{_sources_digest((REWARD_MODEL_SOURCE,)).hexdigest()[:12]}"
    with open(demo.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "config.json").exists():
            building = demo.parent / f"building-rm-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_reward_model(demo / "model", building, seed=0)
            building.rename(folder)
    return folder


def demo_tools_assets(demo: Path) -> Path:
    """The demo tools model (`model/`) and the tools-arith data (`data/tools-arith/`),
    built by trainer.demo.tools_model on the demo model, beside it."""
    from trainer.demo.tools_model import build_demo_tools_model

    folder = demo / f"tools-{_sources_digest(TOOLS_MODEL_SOURCES).hexdigest()[:12]}"
    with open(demo.parent / "demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "model" / "config.json").exists():
            building = demo.parent / f"building-tools-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_demo_tools_model(demo / "model", building / "model", building / "data")
            building.rename(folder)
    return folder


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    demo = demo_assets()
    demo_tools_assets(demo)
    demo_reward_model(demo)


if __name__ == "__main__":
    main()
