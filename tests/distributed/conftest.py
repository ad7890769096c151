"""Fixtures of the distributed trainer's tests: a real local Ray head on free ports, this
test process connected to it as a driver, a recording reporter and a tiny model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import crash_cores
from trainer.config import RunConfig, load_config
from trainer.reporting.base import SampleRecord


class RecordingReporter:
    """Keeps every call in memory so tests can assert on what a run reported."""

    def __init__(self) -> None:
        self.steps: dict[int, dict[str, float]] = {}
        self.samples_seen: list[SampleRecord] = []
        self.statuses: list[tuple[str, str]] = []
        self.logs: list[tuple[str, str]] = []

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self.steps.setdefault(step, {}).update(values)

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        self.samples_seen += samples

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def checkpoint(self, step: int, path: str) -> None:
        pass

    def status(self, status: Any, detail: str = "") -> None:
        self.statuses.append((status, detail))

    def progress(self, step: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


# Spread on any model, trained or not: GRPO needs unequal rewards within a group to
# produce gradients, and the untrained demo model never answers arith right.
DIGIT_REWARD = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return sum(ch.isdigit() for ch in solution_str) % 4 / 3
"""


@pytest.fixture(scope="session")
def raw_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo model and data without the supervised warm start (seconds instead of
    minutes on a loaded 2-core machine), plus a reward with spread on it
    (`reward.py`). Equivalence needs gradients, not a good model."""
    from trainer.demo.model import build_demo_assets

    root = tmp_path_factory.mktemp("raw-demo")
    build_demo_assets(root / "model", root / "data", seed=0, warmup_steps=0, evaluate=False)
    (root / "reward.py").write_text(DIGIT_REWARD)
    return root


def small_run_overrides(root: Path, tmp: Path) -> list[str]:
    """A short GRPO run on the raw demo with a KL loss (so the reference model is used
    too): two optimizer steps per training step, old log-probs recomputed."""
    return [
        f"model.path={root / 'model'}",
        f"data.train_files=[{root / 'data' / 'arith' / 'train.parquet'}]",
        f"data.val_files=[{root / 'data' / 'arith' / 'test.parquet'}]",
        f"checkpoint.dir={tmp / 'ckpt'}",
        "logging.console=false",
        "checkpoint.save_hf=false",
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=2",
        "rollout.n=4",
        "rollout.micro_batch_size=8",  # 2 prompts per generation chunk: 2 chunks a step
        "rollout.max_new_tokens=12",
        "actor.micro_batch_size=4",
        "actor.optim.lr=1e-4",
        "actor.use_kl_loss=true",
        "trainer.val_before_train=false",
        "data.max_val_samples=4",
        "reward.function=custom",
        f"reward.custom_path={root / 'reward.py'}",
        "resources.memory_gb=1",
        # A phase here takes seconds to a minute on a loaded 2-core VM: a hung one fails
        # well inside pytest's 600 s, with the late workers' stacks in the log.
        "resources.worker_timeout_s=300",
        # Distributed runs always block-pack; the single-process runs these tests compare
        # them with must too, or they agree only to float rounding (the shared-prefix
        # layout's equality is tested in tests/trainer/test_shared_prefix.py).
        "actor.shared_prefix_scoring=false",
    ]


def small_run(root: Path, tmp: Path, *overrides: str) -> RunConfig:
    return load_config(overrides=small_run_overrides(root, tmp) + list(overrides))


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """A Ray head with explicit free ports and no dashboard (the trainer's own private
    head, trainer.distributed.cluster) that this process joins as a driver; yields its
    GCS address. Stopped, with every worker, at the end of the module: a Ray driver
    exits its whole process (code 1, no message on our side) when its GCS has been
    unreachable for a minute, so the test process must not stay connected while other
    modules' tests start and stop Ray heads and processes around it."""
    import ray

    from trainer.distributed.cluster import local_ray_head, restore_environ

    saved = dict(os.environ)
    os.environ.update(crash_cores.WORKER_CORE_DUMPS)  # the head's workers inherit it
    try:
        with local_ray_head() as head:
            head.connect()
            try:
                yield head.address
            finally:
                ray.shutdown()
    finally:
        restore_environ(saved)  # ray.init left RAY_AUTH_MODE=token etc. behind
