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
from trainer.config import load_config
from trainer.config.schema import LoraConfig, RunConfig
from trainer.cpu_speed.linear_replay import LinearOutputs, bytes_per_token, replayable_linears
from trainer.cpu_speed.onednn_linear import use_cpu_linear_kernel
from trainer.cpu_speed.replay_recorder import ReplayRecorder, replay_recorder
from trainer.demo.model import build_model, build_tokenizer
from trainer.models.lora import add_adapters
from trainer.rollout.engine import Completion, SamplingParams
from trainer.rollout.forward_reuse import install_forward_reuse
from trainer.rollout.hf import HFEngine
from trainer.training.batch import RolloutBatch, build_batch
from trainer.training.loop import Trainer
from trainer.training.shared_prefix import shared_prefix_response_logits

PROMPTS = [[5, 9, 11, 7], [6, 8], [12, 13, 14, 15, 16, 17]]
N = 4
MAX_NEW = 40


def rollout(model: torch.nn.Module, pad: int) -> tuple[RolloutBatch, list[Completion]]:
    """A sampled rollout recorded for replay, in two engine chunks (two recording parts),
    with the recorder installed as `replay_recorder` installs it (`recorder_of`)."""
    engine = HFEngine(model, build_tokenizer(), max_batch_size=8)
    engine.eos_ids |= set(range(20, 28))  # so that some rows stop early (a random model)
    recorder = ReplayRecorder(model, MAX_NEW - 1)
    engine.watcher = recorder
    install_forward_reuse(model, recorder)
    RECORDERS[id(model)] = recorder
    sampling = SamplingParams(n=N, temperature=1.0, max_new_tokens=MAX_NEW, seed=3)
    with recorder.rollout():
        completions = engine.generate(PROMPTS, sampling)
    batch = build_batch(
        prompts=[PROMPTS[c.prompt_index] for c in completions],
        responses=[c.token_ids for c in completions],
        group_index=[c.prompt_index for c in completions],
        scores=[0.0] * len(completions),
        pad_token_id=pad,
    )
    batch.sample_ids = torch.arange(batch.size)  # as the step's batch has them
    recorder.batch_built(completions)
    assert recorder.batch_rows is not None
    return batch, completions


RECORDERS: dict[int, ReplayRecorder] = {}


def recorder_of(model: torch.nn.Module) -> tuple[ReplayRecorder, torch.Tensor]:
    """The model's recorder and its batch's recording rows."""
    recorder = RECORDERS[id(model)]
    assert recorder.batch_rows is not None
    return recorder, recorder.batch_rows


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
    """The tiny model with PyTorch's linear layers, and with oneDNN's
    (trainer.cpu_speed.onednn_linear): the recording and the replayed backward run the
    layer's own kernel."""
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
    plain_logits, plain_grads = logits_and_grads(model, replace(batch, sample_ids=None))
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
    recorder, rows = recorder_of(model)
    valid = batch.attention_mask[:, batch.prompt_width : batch.prompt_width + MAX_NEW - 1]
    out = recorder.outputs.gather("lm_head", rows, MAX_NEW - 1)
    assert torch.isfinite(out).all()
    assert (out[valid == 0] == 0).all() and (out[valid == 1] != 0).any()


def test_moved_weights_are_not_replayed(tiny: tuple[torch.nn.Module, int]) -> None:
    model, pad = tiny
    batch, _ = rollout(model, pad)
    with torch.no_grad():
        next(model.parameters()).add_(0.01)  # as an optimizer step would
    recorder, rows = recorder_of(model)
    assert not recorder.outputs.fresh_for(model)
    with pytest.raises(RuntimeError, match="weights changed"):
        recorder.outputs.replaying(model, rows, 3).__enter__()
    with torch.no_grad():  # the recorder reuses nothing: the ordinary forward runs instead
        torch.testing.assert_close(
            shared_prefix_response_logits(model, batch),
            shared_prefix_response_logits(model, replace(batch, sample_ids=None)),
        )


def test_a_mini_batch_replays_its_own_rows(tiny: tuple[torch.nn.Module, int]) -> None:
    model, pad = tiny
    batch, _ = rollout(model, pad)
    rows = torch.tensor([5, 0, 9])
    picked = batch.select(rows)
    assert picked.sample_ids is not None and torch.equal(picked.sample_ids, rows)
    with torch.no_grad():
        replayed = shared_prefix_response_logits(model, picked)
        plain = shared_prefix_response_logits(model, replace(picked, sample_ids=None))
    real = picked.response_mask[:, : plain.shape[1]].bool()
    torch.testing.assert_close(replayed[real], plain[real], rtol=1e-5, atol=1e-5)


def test_generation_outside_a_steps_rollout_is_not_recorded(
    tiny: tuple[torch.nn.Module, int],
) -> None:
    """Validation and evaluation share the engine: their completions are not recorded."""
    model, _ = tiny
    engine = HFEngine(model, build_tokenizer(), max_batch_size=8)
    recorder = ReplayRecorder(model, MAX_NEW - 1)
    engine.watcher = recorder
    sampling = SamplingParams(n=2, temperature=1.0, max_new_tokens=8, seed=3)
    recorder.batch_built(engine.generate(PROMPTS, sampling))
    assert recorder.batch_rows is None
    with recorder.rollout():
        recorded = engine.generate(PROMPTS, sampling)
    recorder.batch_built(recorded)
    assert recorder.batch_rows is not None
    # A call longer than the recording was sized for is generated, not recorded.
    with recorder.rollout():
        longer = engine.generate(PROMPTS, replace(sampling, max_new_tokens=MAX_NEW + 1))
    recorder.batch_built(longer)
    assert recorder.batch_rows is None


def config(*overrides: str) -> RunConfig:
    return load_config(overrides=list(overrides))


def test_replay_on_is_refused_where_it_cannot_apply(tiny: tuple[torch.nn.Module, int]) -> None:
    """`on` names why a run cannot replay; `auto` quietly skips those runs; `off` never
    replays. The config's reasons are refused when it is read, the device's at the start."""
    model, _ = tiny
    with pytest.raises(ValueError, match=r"replay_rollout_outputs=on .*actor.ppo_epochs > 1"):
        config("speed.replay_rollout_outputs=on", "actor.ppo_epochs=2")
    with pytest.raises(ValueError, match="multi-turn"):
        config("speed.replay_rollout_outputs=on", "rollout.multi_turn.enabled=true")
    assert config("speed.replay_rollout_outputs=true").speed.replay_rollout_outputs == "on"
    engine = HFEngine(model, build_tokenizer())
    gpu = torch.device("cuda")  # only its type is read: no GPU needed
    with pytest.raises(ValueError, match="trains on cuda, and replay is for CPU training"):
        replay_recorder(config("speed.replay_rollout_outputs=on"), engine, gpu)
    assert replay_recorder(config(), engine, gpu) is None and engine.watcher is None
    assert replay_recorder(config("speed.replay_rollout_outputs=off"), engine, model.device) is None
    assert replay_recorder(config("actor.ppo_epochs=2"), engine, model.device) is None
    assert replay_recorder(config(), engine, model.device) is engine.watcher is not None


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
            f"speed.replay_rollout_outputs={str(replay).lower()}",
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
