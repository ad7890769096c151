"""Rows whose advantages are all zero are scored without autograd (trainer.training.update): the
update's weights and metrics must be those of the ordinary pass over every row."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import trainer.training.update
from tests.trainer.batches import grpo_batch, tiny_model
from trainer.config.schema import ActorConfig
from trainer.training.batch import RolloutBatch
from trainer.training.update import rows_without_gradient, update_actor


def batch_with_idle_groups(idle_groups: tuple[int, ...]) -> RolloutBatch:
    _, vocab, pad = tiny_model()
    batch = grpo_batch(vocab, pad, 3, 4, 4, (3, 7), (2, 9), with_advantages=True)
    assert batch.advantages is not None
    for group in idle_groups:
        batch.advantages[batch.group_index == group] = 0.0
    # Sampling log-probs unlike the model's: ratios far from 1, clipped ones among them.
    g = torch.Generator().manual_seed(4)
    batch.old_logprobs = -3 * torch.rand(batch.response_mask.shape, generator=g)
    return batch


def run_update(
    batch: RolloutBatch, skip: bool, packed: bool, **actor: Any
) -> tuple[dict[str, float], dict[str, torch.Tensor]]:
    model, _, _ = tiny_model()
    cfg = ActorConfig.model_validate(
        {
            "micro_batch_size": 4,
            "ppo_mini_batch_size": 2,  # prompts: two mini-batches
            "ppo_epochs": 2,
            "pack_shared_prompts": packed,
            "skip_zero_advantage_backward": skip,
            **actor,
        }
    )
    # Weight decay moves every weight at each step, so a missing gradient would show.
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    metrics = update_actor(model, optimizer, batch, cfg, 1.0, 8, 1.0, torch.Generator())
    return metrics, {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("idle_groups", [(1, 3), (0, 1, 2, 3), ()])
def test_skipping_zero_advantage_rows_changes_no_weight_and_no_metric(
    packed: bool, idle_groups: tuple[int, ...]
) -> None:
    batch = batch_with_idle_groups(idle_groups)
    metrics_skip, weights_skip = run_update(batch, True, packed)
    metrics_all, weights_all = run_update(batch, False, packed)
    assert metrics_skip.keys() == metrics_all.keys()
    for key, value in metrics_all.items():
        assert metrics_skip[key] == pytest.approx(value, abs=1e-5), key
    assert metrics_all["actor/ppo_kl"] != 0.0  # ratios far from 1 count in the metrics too
    for key, value in weights_all.items():
        torch.testing.assert_close(weights_skip[key], value, atol=1e-5, rtol=1e-5)


def test_only_rows_with_an_advantage_are_back_propagated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[bool, bool, int]] = []  # (learn, grad enabled, rows)
    score = trainer.training.update._actor_micro_batch

    def spy(*args: Any, **kwargs: Any) -> None:
        part, learn = args[1], args[-1]
        seen.append((learn, torch.is_grad_enabled(), int(part.batch.size)))
        score(*args, **kwargs)

    monkeypatch.setattr(trainer.training.update, "_actor_micro_batch", spy)
    batch = batch_with_idle_groups((1, 3))
    run_update(batch, True, True)
    assert {(learn, grad) for learn, grad, _ in seen} == {(True, True), (False, False)}
    learned = sum(rows for learn, _, rows in seen if learn)
    idle = sum(rows for learn, _, rows in seen if not learn)
    assert (learned, idle) == (16, 16)  # 2 epochs x 8 rows each


@pytest.mark.parametrize(
    "actor",
    [
        {"entropy_coeff": 0.01},  # the entropy bonus has a gradient on every row
        {"use_kl_loss": True},  # so has the KL loss
        {"skip_zero_advantage_backward": False},
    ],
)
def test_no_row_is_skipped_when_another_loss_term_reaches_it(actor: dict[str, Any]) -> None:
    batch = batch_with_idle_groups((0, 1, 2, 3))
    assert not rows_without_gradient(batch, ActorConfig.model_validate(actor)).any()
    assert rows_without_gradient(batch, ActorConfig()).all()
