"""One process and two FSDP2 workers (gloo, CPU) train the same way.

What makes this a fair test: both runs start from the same weights and seed, and the
rollout engine samples in seeded chunks of prompts (trainer.rollout.chunked), so the
two workers, each generating its share of the chunks, produce the same completions as
the one process. The comparison then covers the whole step, generation included:
samples, rewards, old/reference log-probs, advantages, the sharded update with its
gradient reduction and clipping, and the weight sync back into the rollout engines.
Float sums run in a different order on two ranks, so values agree to rounding only.
"""

from __future__ import annotations

import pytest
import torch

from trainer.distributed.runtime import distributed_runtime
from trainer.training.loop import Trainer

from .conftest import RecordingReporter, small_run

pytestmark = pytest.mark.slow

COMPARED = (
    "actor/pg_loss",
    "actor/grad_norm",
    "actor/entropy",
    "actor/kl_loss",
    "actor/ppo_kl",
    "actor/pg_clipfrac",
    "critic/score/mean",
    "critic/advantages/max",
    "response_length/mean",
)


def train_samples(reporter: RecordingReporter) -> list[tuple[int, str, str]]:
    return [(s.step, s.group_id, s.response) for s in reporter.samples_seen if s.split == "train"]


def checksum(weights: dict[str, torch.Tensor]) -> float:
    return float(sum(w.double().sum() for w in weights.values()))


def test_two_gloo_workers_match_one_process_for_three_steps(raw_demo, ray_head, tmp_path):
    alone = RecordingReporter()
    one = Trainer(small_run(raw_demo, tmp_path / "one", "trainer.total_steps=3"), alone)
    initial = {k: v.clone() for k, v in one.roles.model_states().actor.items()}
    one.fit()
    one_weights = one.roles.model_states().actor

    split = RecordingReporter()
    cfg = small_run(raw_demo, tmp_path / "two", "trainer.total_steps=3", "resources.num_workers=2")
    with distributed_runtime(cfg, split) as runtime:
        Trainer(cfg, split, runtime).fit()
        two_weights = runtime.roles.model_states().actor
        memory = runtime.roles.group.call("rollout_memory")  # type: ignore[attr-defined]
    assert any("2 distributed workers" in message for _, message in split.logs)
    # FSDP really shards: each rank holds about half the actor; the rollout copy is whole.
    full = sum(w.numel() * w.element_size() for w in one_weights.values())
    for rank in memory:
        assert rank["actor_shard_bytes"] < 0.6 * rank["rollout_copy_bytes"]
        assert rank["rollout_copy_bytes"] <= full

    for step in (1, 2, 3):
        for key in COMPARED:
            expected = pytest.approx(alone.steps[step][key], rel=1e-5, abs=1e-5)
            assert split.steps[step][key] == expected, (step, key)
        assert alone.steps[step]["actor/grad_norm"] > 0  # there was something to learn
    assert train_samples(split) == train_samples(alone)  # generation is identical too

    assert two_weights.keys() == one_weights.keys()
    moved = max(float((one_weights[k] - initial[k]).abs().max()) for k in initial)
    assert moved > 1e-5  # the runs trained
    for name, weight in one_weights.items():
        torch.testing.assert_close(two_weights[name], weight, atol=1e-6, rtol=0, msg=name)
    assert checksum(two_weights) == pytest.approx(checksum(one_weights), rel=1e-9, abs=1e-6)


def test_two_gloo_workers_match_one_process_with_a_critic(raw_demo, ray_head, tmp_path):
    """PPO with GAE: the critic is sharded and updated on the workers too."""
    ppo = (
        "trainer.total_steps=2",
        "algorithm.adv_estimator=gae",
        "algorithm.lam=0.95",
        "rollout.n=1",
        "rollout.micro_batch_size=4",  # 4 prompts per chunk: 2 chunks a step
        "data.train_batch_size=8",
        "actor.ppo_mini_batch_size=4",
        "critic.optim.lr=1e-4",
    )
    alone = RecordingReporter()
    Trainer(small_run(raw_demo, tmp_path / "one", *ppo), alone).fit()
    split = RecordingReporter()
    cfg = small_run(raw_demo, tmp_path / "two", *ppo, "resources.num_workers=2")
    with distributed_runtime(cfg, split) as runtime:
        Trainer(cfg, split, runtime).fit()
    for step in (1, 2):
        for key in (
            "critic/vf_loss",
            "critic/grad_norm",
            "critic/values/mean",
            "critic/returns/mean",
            "actor/pg_loss",
            "actor/grad_norm",
        ):
            expected = pytest.approx(alone.steps[step][key], rel=1e-5, abs=1e-5)
            assert split.steps[step][key] == expected, (step, key)
        assert alone.steps[step]["critic/grad_norm"] > 0
