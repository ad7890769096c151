"""The actor's update reads the device from the host once per mini-batch, whatever
the number of micro-batches: the metrics of each micro-batch stay tensors until the end
(on a GPU, a read per micro-batch would make the host wait for its kernels before it
could queue the next one's)."""

from __future__ import annotations

import torch

from tests.trainer.batches import grpo_batch, tiny_model
from tests.trainer.host_reads import HostReads
from trainer.config.schema import ActorConfig
from trainer.training.optim import build_optimizer
from trainer.training.update import update_actor


def reads_and_metrics(micro_batch_size: int) -> tuple[int, dict[str, float]]:
    model, vocab, pad = tiny_model()
    batch = grpo_batch(vocab, pad, 0, 4, 4, (6, 14), (3, 20), with_advantages=True)
    cfg = ActorConfig(micro_batch_size=micro_batch_size, ppo_mini_batch_size=4)
    optimizer = build_optimizer(model, cfg.optim)
    with HostReads() as reads:
        metrics = update_actor(
            model, optimizer, batch, cfg, 1.0, 16, 1.0, torch.Generator().manual_seed(0)
        )
    return reads.counts.total(), metrics


def test_host_reads_do_not_grow_with_the_micro_batches() -> None:
    one_micro, metrics_one = reads_and_metrics(16)
    eight_micro, metrics_eight = reads_and_metrics(2)
    assert one_micro == eight_micro
    for key in ("actor/pg_loss", "actor/entropy", "actor/grad_norm", "actor/ppo_kl"):
        assert abs(metrics_one[key] - metrics_eight[key]) <= 1e-5 * max(1.0, abs(metrics_one[key]))
