"""A checkpoint's uri comes from a trainer, so it is untrusted: whatever uses a checkpoint
(a reward test-run's sampler, a model made from a run) reads it only inside its own run's
checkpoint folder (studio.runs.checkpoints.checkpoint_folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.rewards.errors import TestRunError
from studio.rewards.lifecycle import _model_dir
from studio.rewards.models import RewardFunction, RewardTestRun, RewardVersion
from studio.runs.models import Checkpoint, Run
from tests.studio.test_runs_api import dataset_version


def checkpoint_test_run(world, uri: str) -> RewardTestRun:
    user = world.owner
    run = Run.objects.create(project=world.project, name="r", config={}, created_by=user)
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=1, uri=uri)
    function = RewardFunction.objects.create(project=world.project, name="f", created_by=user)
    version = RewardVersion.objects.create(function=function, number=1, code="x", author=user)
    data = dataset_version(world.project, user)
    return RewardTestRun.objects.create(
        version=version,
        source="checkpoint",
        dataset_version=data,
        checkpoint=checkpoint,
        params={},
        created_by=user,
    )


@pytest.fixture
def checkpoints(settings, tmp_path: Path) -> Path:
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    return tmp_path / "checkpoints"


def test_a_test_run_does_not_sample_from_another_runs_checkpoint_folder(world, checkpoints):
    # The trainer of run A reported run B's (another project's) checkpoint as its own.
    theirs = checkpoints / "run-999999" / "step_4"
    theirs.mkdir(parents=True)
    test_run = checkpoint_test_run(world, str(theirs))
    with pytest.raises(TestRunError, match="outside this run's checkpoint folder"):
        _model_dir(test_run)


@pytest.mark.parametrize("uri", ["/etc", "../../../../etc", "/proc/self"])
def test_a_test_run_does_not_sample_from_any_other_path(world, checkpoints, uri):
    with pytest.raises(TestRunError):
        _model_dir(checkpoint_test_run(world, uri))


def test_the_runs_own_checkpoint_is_sampled(world, checkpoints):
    test_run = checkpoint_test_run(world, "placeholder")
    own = checkpoints / f"run-{test_run.checkpoint.run_id}" / "step_1"
    own.mkdir(parents=True)
    Checkpoint.objects.filter(pk=test_run.checkpoint_id).update(uri=str(own))
    test_run.refresh_from_db()
    assert _model_dir(test_run) == str(own.resolve())
