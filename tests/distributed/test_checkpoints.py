"""A checkpoint written by two workers resumes on one process, and the reverse.

The distributed trainer writes checkpoints in the single-process format (full state
dicts gathered from the FSDP2 shards; optimizer state keyed by parameter index), so
either side can resume the other's run and continue as the uninterrupted run would.
"""

from __future__ import annotations

import pytest
import torch

from trainer.distributed.runtime import distributed_runtime
from trainer.training.checkpoint import latest_checkpoint
from trainer.training.loop import Trainer

from .conftest import RecordingReporter, small_run

pytestmark = pytest.mark.slow

COMPARED = ("actor/pg_loss", "actor/grad_norm", "actor/entropy", "critic/score/mean")


def resumable(raw_demo, directory, *overrides):
    # KL in the reward with an adaptive controller: its state must survive too.
    return small_run(
        raw_demo,
        directory,
        "trainer.total_steps=4",
        "checkpoint.save_every=2",
        "algorithm.use_kl_in_reward=true",
        "algorithm.kl_ctrl.type=adaptive",
        *overrides,
    )


def fit_distributed(cfg, reporter, stop_after=None):
    with distributed_runtime(cfg, reporter) as runtime:
        Trainer(cfg, reporter, runtime).fit(stop_after=stop_after)


def assert_continues_like(resumed: RecordingReporter, straight: RecordingReporter) -> None:
    assert sorted(s for s in resumed.steps if s > 0) == [3, 4]
    for step in (3, 4):
        for key in COMPARED:
            expected = pytest.approx(straight.steps[step][key], rel=1e-5, abs=1e-5)
            assert resumed.steps[step][key] == expected, (step, key)
        assert resumed.steps[step]["actor/reward_kl_penalty_coeff"] == pytest.approx(
            straight.steps[step]["actor/reward_kl_penalty_coeff"], rel=1e-6
        )


def test_checkpoints_move_between_two_workers_and_one_process(raw_demo, ray_head, tmp_path):
    straight = RecordingReporter()
    Trainer(resumable(raw_demo, tmp_path / "straight"), straight).fit()

    # Two workers write step 2; one process resumes and finishes.
    cfg_two = resumable(raw_demo, tmp_path / "a", "resources.num_workers=2")
    fit_distributed(cfg_two, RecordingReporter(), stop_after=2)
    written_by_two = latest_checkpoint(cfg_two.checkpoint.dir)
    assert written_by_two is not None and written_by_two.step == 2
    on_one = RecordingReporter()
    Trainer(resumable(raw_demo, tmp_path / "a"), on_one).fit()
    assert_continues_like(on_one, straight)

    # The format is the single-process one, key for key.
    written_by_one = latest_checkpoint(tmp_path / "straight" / "ckpt")
    assert written_by_one is not None
    for name in ("actor.pt", "actor_optim.pt"):
        two = torch.load(written_by_two.path / name, weights_only=False)
        one = torch.load(written_by_one.path.parent / "step_00000002" / name, weights_only=False)
        assert two.keys() == one.keys(), name
        if name == "actor_optim.pt":
            assert sorted(two["state"]) == sorted(one["state"])  # parameter indices
            assert two["param_groups"][0]["params"] == one["param_groups"][0]["params"]
        else:
            assert {k: v.shape for k, v in two.items()} == {k: v.shape for k, v in one.items()}

    # One process writes step 2; two workers resume and finish.
    Trainer(resumable(raw_demo, tmp_path / "b"), RecordingReporter()).fit(stop_after=2)
    on_two = RecordingReporter()
    fit_distributed(resumable(raw_demo, tmp_path / "b", "resources.num_workers=2"), on_two)
    assert any("resumed from" in message for _, message in on_two.logs)
    assert_continues_like(on_two, straight)
