"""Studio objects that reward test-runs need: a dataset version, a reward version, a run's
checkpoint. Plain functions (no fixtures), for the API tests and the live-worker tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from studio.projects.models import Project
from studio.rewards.models import RewardFunction, RewardVersion
from studio.runs.configs import resolve, resources_of
from studio.runs.models import Checkpoint, Run
from tests.verl_data import verl_parquet

EXACT = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
    "    return float(solution_str.strip() == str(ground_truth).strip())\n"
)


def make_dataset_version(
    project: Project, user: Any, scratch: Path, answers: list[str], name: str = "arith"
) -> DatasetVersion:
    source = scratch / f"{name}-{project.slug}.parquet"
    source.write_bytes(verl_parquet(answers))
    dataset = Dataset.objects.create(project=project, name=name, created_by=user)
    return add_version(dataset, source, "arith.parquet", ColumnMapping(), message="", user=user)


def make_reward_version(
    project: Project, user: Any, code: str = EXACT, name: str = "exact"
) -> RewardVersion:
    function = RewardFunction.objects.create(project=project, name=name, created_by=user)
    return RewardVersion.objects.create(
        function=function, number=1, code=code, code_hash="0" * 64, author=user
    )


def make_checkpoint(
    project: Project, user: Any, dataset: DatasetVersion, reward: RewardVersion, uri: str
) -> Checkpoint:
    resolved = resolve(preset="grpo-tiny-arith")
    run = Run.objects.create(
        project=project,
        name=f"run with {uri}",
        preset="grpo-tiny-arith",
        config=resolved.tree,
        dataset_version=dataset,
        reward_version=reward,
        resources=resources_of(resolved.config),
        created_by=user,
    )
    return Checkpoint.objects.create(run=run, attempt=1, step=1, uri=uri)
