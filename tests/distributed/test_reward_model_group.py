"""The reward model on a Ray worker group of its own (`reward.model.placement=worker_group`)
scores what the colocated model scores, on the resources it asked for."""

from __future__ import annotations

import pytest
import ray
import torch

from trainer.config.reward_section import RewardModelConfig
from trainer.config.schema import ResourcesConfig
from trainer.distributed import uses_distributed
from trainer.distributed.group import WorkerFailed
from trainer.distributed.reward_group import RewardModelGroup
from trainer.distributed.runtime import distributed_runtime
from trainer.models.reward_model import RewardModelScorer
from trainer.training.loop import Trainer

from ..trainer.test_reward_model import arith_requests
from .conftest import RecordingReporter, small_run

pytestmark = pytest.mark.slow

GiB = 2**30
SCORES = (
    "critic/score/mean",
    "critic/score/arith/mean",
    "critic/score/reward_model/mean",
    "critic/score/judge/mean",
)


def group_config(path, **resources) -> RewardModelConfig:
    return RewardModelConfig.model_validate(
        {"path": str(path), "placement": "worker_group", "batch_size": 4, "resources": resources}
    )


def test_the_group_scores_like_the_colocated_model_on_the_resources_asked(
    demo_assets, demo_reward_model, ray_head
):
    cfg = group_config(demo_reward_model, num_workers=2, cpus_per_worker=0.5, memory_gb=0.5)
    answers = [lambda a, op, b: str(a + b), lambda a, op, b: f"{a}{op}{b}=", lambda *_: "7"]
    requests = arith_requests(demo_assets, answers * 7)  # 21: shares of 11 and 10
    colocated = RewardModelScorer(cfg, torch.device("cpu")).score_batch(requests)

    group = RewardModelGroup(cfg, ResourcesConfig(worker_timeout_s=300))
    try:
        remote = group.score_batch(requests)
        assigned = group.assigned_resources()
        bundles = ray.util.placement_group_table(group.group.placement)["bundles"]
        described = group.describe()
    finally:
        group.close()

    assert all(r.ok for r in remote) and len(remote) == len(requests)
    # Shares are padded to their own longest text, so sums differ in rounding only.
    assert [r.score for r in remote] == pytest.approx([r.score for r in colocated], abs=1e-5)
    assert len({round(r.score, 3) for r in remote}) > 3  # real, varied scores
    assert list(bundles.values()) == [{"CPU": 0.5, "memory": 0.5 * GiB}] * 2
    for worker in assigned:
        assert worker["CPU"] == 0.5 and worker["memory"] == 0.5 * GiB
    assert "reward-model worker rank 1 (pid" in described


def test_a_group_the_cluster_cannot_hold_fails_naming_its_fields(demo_reward_model, ray_head):
    cfg = group_config(demo_reward_model, num_workers=2, cpus_per_worker=64)
    with pytest.raises(WorkerFailed, match=r"reward.model.resources.num_workers=2 x "):
        RewardModelGroup(cfg, ResourcesConfig(worker_timeout_s=30))


def test_a_run_with_the_reward_model_on_its_group_scores_like_one_colocated(
    demo_assets, demo_reward_model, ray_head, tmp_path
):
    def run(directory, *overrides):
        return small_run(
            demo_assets,
            tmp_path / directory,
            "trainer.total_steps=2",
            "reward.function=arith",
            f"reward.model.path={demo_reward_model}",
            "reward.model.batch_size=4",
            "reward.function_weight=0.5",
            # A third source, colocated in both runs: the same folder reading only the
            # last 16 tokens, so it scores differently.
            f"reward.extra_models=[{{path: {demo_reward_model}, name: judge, weight: 0.25, "
            "max_length: 16}]",
            *overrides,
        )

    colocated = RecordingReporter()
    Trainer(run("colocated"), colocated).fit()

    cfg = run(
        "group",
        "reward.model.placement=worker_group",
        "reward.model.resources.num_workers=2",
        "reward.model.resources.cpus_per_worker=0.5",
        "reward.model.resources.memory_gb=0.5",
    )
    assert uses_distributed(cfg)  # one trainer worker, but the model's group is on Ray
    grouped = RecordingReporter()
    with distributed_runtime(cfg, grouped) as runtime:
        Trainer(cfg, grouped, runtime).fit()
    assert any("reward-model worker rank 1" in message for _, message in grouped.logs)

    for step in (1, 2):
        for key in SCORES:
            expected = pytest.approx(colocated.steps[step][key], abs=1e-5)
            assert grouped.steps[step][key] == expected, (step, key)
    first = colocated.steps[1]
    assert first["critic/score/reward_model/mean"] != 0.0
    assert first["critic/score/judge/mean"] != first["critic/score/reward_model/mean"]
    responses = [(s.step, s.response, s.score) for s in grouped.samples_seen]
    expected_responses = [(s.step, s.response, s.score) for s in colocated.samples_seen]
    assert [r[:2] for r in responses] == [r[:2] for r in expected_responses]
    assert [r[2] for r in responses] == pytest.approx([r[2] for r in expected_responses], abs=1e-5)
