"""The update's replay of the rollout's linear outputs scores and differentiates what the
ordinary forward does, and is refused once the weights have moved."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.trainer.batches import tiny_model
from tests.trainer.conftest import demo_config
from tests.trainer.test_training import RecordingReporter
from trainer.batch import RolloutBatch, build_batch
from trainer.config.schema import LoraConfig
from trainer.cpu_linear import use_cpu_linear_kernel
from trainer.linear_replay import LinearOutputs, bytes_per_token, replayable_linears
from trainer.loop import Trainer
from trainer.models.demo import build_model, build_tokenizer
from trainer.models.lora import add_adapters
from trainer.rollout.engine import Completion, SamplingParams
from trainer.rollout.hf import HFEngine
from trainer.shared_prefix import shared_prefix_response_logits

PROMPTS = [[5, 9, 11, 7], [6, 8], [12, 13, 14, 15, 16, 17]]
N = 4
MAX_NEW = 40


def rollout(model: torch.nn.Module, pad: int) -> tuple[RolloutBatch, list[Completion]]:
    """A sampled rollout recorded for replay, in two engine chunks (two recording parts)."""
    engine = HFEngine(model, build_tokenizer(), max_batch_size=8)
    engine.eos_ids |= set(range(20, 28))  # so that some rows stop early (a random model)
    recording = engine.start_recording(MAX_NEW - 1, max_bytes=2**30)
    sampling = SamplingParams(n=N, temperature=1.0, max_new_tokens=MAX_NEW, seed=3)
    completions = engine.generate(PROMPTS, sampling)
    engine.stop_recording()
    batch = build_batch(
        prompts=[PROMPTS[c.prompt_index] for c in completions],
        responses=[c.token_ids for c in completions],
        group_index=[c.prompt_index for c in completions],
        scores=[0.0] * len(completions),
        pad_token_id=pad,
    )
    assert all(c.replay is not None for c in completions)
    batch.replay = recording
    batch.replay_rows = torch.tensor([c.replay.row for c in completions if c.replay])
    return batch, completions


def logits_and_grads(
    model: torch.nn.Module, batch: RolloutBatch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    logits = shared_prefix_response_logits(model, batch)
    weights = torch.randn(logits.shape, generator=torch.Generator().manual_seed(1))
    mask = batch.response_mask[:, : logits.shape[1], None]
    (logits.log_softmax(-1) * weights * mask).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return logits.detach(), grads


@pytest.fixture(params=["torch", "onednn"])
def tiny(request: pytest.FixtureRequest) -> tuple[torch.nn.Module, int]:
    """The tiny model with PyTorch's linear layers, and with oneDNN's (trainer.cpu_linear):
    the recording and the replayed backward run the layer's own kernel."""
    model, _, pad = tiny_model()
    assert use_cpu_linear_kernel(model, request.param) == (15 if request.param == "onednn" else 0)
    return model, pad


def test_replay_gives_the_ordinary_forwards_logits_and_gradients(
    tiny: tuple[torch.nn.Module, int],
) -> None:
    model, pad = tiny
    batch, completions = rollout(model, pad)
    lengths = sorted({len(c.token_ids) for c in completions})
    assert len(lengths) > 1 and lengths[-1] == MAX_NEW  # rows that stopped early, and not
    plain_logits, plain_grads = logits_and_grads(model, replace(batch, replay=None))
    replay_logits, replay_grads = logits_and_grads(model, batch)
    real = batch.response_mask[:, : plain_logits.shape[1]].bool()
    torch.testing.assert_close(replay_logits[real], plain_logits[real], rtol=1e-5, atol=1e-5)
    assert plain_grads.keys() == replay_grads.keys()
    for name, grad in plain_grads.items():  # float rounding: relative to the largest entry
        error = (replay_grads[name] - grad).abs().max() / grad.abs().max()
        assert error < 1e-5, (name, float(error))


def test_replayed_log_probs_are_the_sampling_ones(tiny: tuple[torch.nn.Module, int]) -> None:
    model, pad = tiny
    batch, completions = rollout(model, pad)
    with torch.no_grad():
        logp = shared_prefix_response_logits(model, batch).log_softmax(-1)
    for row, completion in enumerate(completions):
        tokens = torch.tensor(completion.token_ids)
        scored = logp[row, torch.arange(len(tokens)), tokens]
        torch.testing.assert_close(scored, torch.tensor(completion.logprobs), rtol=0, atol=1e-5)


def test_padding_columns_replay_as_zeros_not_leftover_memory(
    tiny: tuple[torch.nn.Module, int],
) -> None:
    model, pad = tiny
    batch, _ = rollout(model, pad)
    recording = batch.replay
    assert recording is not None and batch.replay_rows is not None
    valid = batch.attention_mask[:, batch.prompt_width : batch.prompt_width + MAX_NEW - 1]
    out = recording.gather("lm_head", batch.replay_rows, MAX_NEW - 1)
    assert torch.isfinite(out).all()
    assert (out[valid == 0] == 0).all() and (out[valid == 1] != 0).any()


def test_moved_weights_are_not_replayed(tiny: tuple[torch.nn.Module, int]) -> None:
    model, pad = tiny
    batch, _ = rollout(model, pad)
    with torch.no_grad():
        next(model.parameters()).add_(0.01)  # as an optimizer step would
    assert batch.replay is not None and not batch.replay.fresh_for(model)
    rows = batch.replay_rows
    assert rows is not None
    with pytest.raises(RuntimeError, match="weights changed"):
        batch.replay.replaying(model, rows, 3).__enter__()
    with torch.no_grad():  # the ordinary forward runs instead
        torch.testing.assert_close(
            shared_prefix_response_logits(model, batch),
            shared_prefix_response_logits(model, replace(batch, replay=None)),
        )


def test_wrapped_linear_layers_are_not_replayable(tiny: tuple[torch.nn.Module, int]) -> None:
    model, _ = tiny
    assert replayable_linears(model) is not None

    class Adapted(torch.nn.Linear):  # as a LoRA layer: more than its weight's product
        pass

    model.lm_head.__class__ = Adapted
    assert replayable_linears(model) is None
    with pytest.raises(ValueError, match="cannot replay"):
        LinearOutputs(model, 4, max_bytes=2**30)


def test_lora_adapters_replay_unless_they_drop_out() -> None:
    """Each LoRA layer's base and adapter matrices are plain linear layers: they replay.
    With dropout the update would draw other masks than the decoding did: refused."""
    model, _, _ = tiny_model()
    linears = replayable_linears(add_adapters(model, LoraConfig(rank=4)))
    assert linears is not None and any("lora_A" in name for name in linears)
    model, _, _ = tiny_model()
    with_dropout = LoraConfig(rank=4, dropout=0.1)
    assert replayable_linears(add_adapters(model, with_dropout)) is None


def test_the_recording_stops_at_its_byte_budget_and_reuses_its_memory(
    tiny: tuple[torch.nn.Module, int],
) -> None:
    model, _ = tiny
    row_bytes = (MAX_NEW - 1) * bytes_per_token(model)
    recording = LinearOutputs(model, MAX_NEW - 1, max_bytes=row_bytes * 8)
    assert recording.add_rows(6) == (0, 0)
    assert recording.add_rows(2) == (1, 6)
    assert recording.add_rows(1) is None  # a 9th row would pass the budget: not recorded
    memory = recording._parts[0].outputs["lm_head"].data_ptr()
    recording.restart(max_bytes=row_bytes * 8)
    assert recording.rows == 0
    assert recording.add_rows(6) == (0, 0)
    assert recording._parts[0].outputs["lm_head"].data_ptr() == memory  # the earlier part's, reused


def test_a_training_step_replays_and_updates_as_without_replay(
    demo_assets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the trainer: a random model's long responses score in the shared-prefix
    layout, the update replays them, and the step reports the loss and gradient norm of
    the same step without replay (to float rounding)."""
    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    build_model(tokenizer, "tiny", hidden_size=64, num_layers=2).save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    replays: list[int] = []
    replaying = LinearOutputs.replaying

    def counted(self: LinearOutputs, *args: Any, **kwargs: Any) -> Any:
        replays.append(1)
        return replaying(self, *args, **kwargs)

    monkeypatch.setattr(LinearOutputs, "replaying", counted)
    metrics = {}
    for replay in (True, False):
        replays.clear()
        cfg = demo_config(
            demo_assets,
            tmp_path / str(replay),
            f"model.path={tmp_path / 'm'}",
            "reward.executor=inprocess",
            "data.train_batch_size=2",
            "rollout.n=4",
            "rollout.max_new_tokens=48",
            "actor.ppo_mini_batch_size=2",
            "actor.micro_batch_size=8",
            f"actor.replay_rollout_outputs={str(replay).lower()}",
            "trainer.total_steps=1",
            # Every row back-propagates here: split off, the one group that scored would be
            # scored alone, and a lone group packs instead of taking the shared-prefix
            # layout that replays.
            "actor.skip_zero_advantage_backward=false",
            "trainer.val_before_train=false",
            "trainer.val_every=0",
        )
        reporter = RecordingReporter()
        Trainer(cfg, reporter).fit()
        metrics[replay] = reporter.steps[1]
        assert bool(replays) == replay  # replayed with the flag on, never with it off
    assert metrics[True]["response_length/mean"] > 24  # long: the shared-prefix layout
    for key in ("actor/pg_loss", "actor/grad_norm", "actor/entropy", "critic/score/mean"):
        assert metrics[True][key] == pytest.approx(metrics[False][key], rel=1e-4, abs=1e-7), key
