"""LoRA (`actor.lora`) on CPU with the demo model: what trains, the reference, resume, export."""

from __future__ import annotations

import peft
import torch

from trainer.models.loading import load_policy
from trainer.models.lora import export_adapted
from trainer.rollout.collect import generate, score
from trainer.rollout.engine import SamplingParams
from trainer.training.checkpoint import latest_checkpoint
from trainer.training.logprobs import compute_logprobs
from trainer.training.loop import Trainer
from trainer.training.step import to_batch

from .conftest import demo_config
from .test_training import RESUME_KEYS, RecordingReporter

SAMPLING = SamplingParams(n=4, temperature=1.0, max_new_tokens=8, seed=7)


def sampled_batch(trainer: Trainer):
    """A fresh batch of the trainer's own completions of two training prompts."""
    state = trainer.state
    samples = score(state.scorer, generate(state.engine, trainer.train_items[:2], SAMPLING))
    return to_batch(state, samples)


def lora_config(demo_assets, tmp_path, *overrides: str):
    return demo_config(
        demo_assets,
        tmp_path,
        "data.train_batch_size=4",
        "actor.ppo_mini_batch_size=2",
        "rollout.n=4",
        "trainer.val_before_train=false",
        "data.max_val_samples=4",
        "rollout.max_new_tokens=8",
        *overrides,
        preset="grpo-lora-tiny",
    )


def test_lora_trains_only_the_adapters_and_scores_the_reference_with_the_base_model(
    demo_assets, tmp_path
):
    cfg = lora_config(demo_assets, tmp_path, "trainer.total_steps=2", "actor.use_kl_loss=true")
    trainer = Trainer(cfg, RecordingReporter())
    actor = trainer.state.actor
    base = load_policy(cfg.model.path)
    # all-linear at rank r: each Linear(d_in, d_out) but the LM head gains r*(d_in + d_out).
    expected = sum(
        cfg.actor.lora.rank * (module.in_features + module.out_features)
        for name, module in base.named_modules()
        if isinstance(module, torch.nn.Linear) and name != "lm_head"
    )
    trainable = {n: p for n, p in actor.named_parameters() if p.requires_grad}
    assert sum(p.numel() for p in trainable.values()) == expected
    assert all(".lora_A." in n or ".lora_B." in n for n in trainable)
    optimized = sum(p.numel() for g in trainer.state.optimizer.param_groups for p in g["params"])
    assert optimized == expected
    assert trainer.state.ref is None  # no reference copy in memory

    frozen = {n: p.detach().clone() for n, p in actor.named_parameters() if not p.requires_grad}
    adapters = {n: p.detach().clone() for n, p in trainable.items()}
    trainer.fit()
    assert all(torch.equal(p, frozen[n]) for n, p in actor.named_parameters() if n in frozen)
    assert any(not torch.equal(p, adapters[n]) for n, p in trainable.items())

    batch = sampled_batch(trainer)
    ref = trainer.roles.ref_logprobs(batch, 1.0)
    torch.testing.assert_close(ref, compute_logprobs(base, batch, 1.0, 64, True))
    assert not torch.allclose(trainer.roles.actor_logprobs(batch, 1.0), ref)


def test_lora_checkpoints_hold_only_the_adapters_and_resume_exactly(demo_assets, tmp_path):
    overrides = ("trainer.total_steps=3", "checkpoint.save_every=2", "actor.use_kl_loss=true")
    straight = RecordingReporter()
    Trainer(lora_config(demo_assets, tmp_path / "a", *overrides), straight).fit()

    interrupted = RecordingReporter()
    first = Trainer(lora_config(demo_assets, tmp_path / "b", *overrides), interrupted)
    first.fit(stop_after=2)
    saved = latest_checkpoint(tmp_path / "b" / "ckpt")
    assert saved is not None and saved.step == 2
    weights = torch.load(saved.path / "actor.pt", weights_only=True)
    assert weights and all(".lora_" in name for name in weights)
    full_bytes = sum(p.numel() * 4 for p in first.state.actor.parameters())
    assert (saved.path / "actor.pt").stat().st_size < full_bytes / 4

    resumed = RecordingReporter()
    Trainer(lora_config(demo_assets, tmp_path / "b", *overrides), resumed).fit()
    assert sorted(s for s in resumed.steps if s > 0) == [3]
    for key in (*RESUME_KEYS, "actor/kl_loss"):
        assert resumed.steps[3][key] == straight.steps[3][key], key


def test_lora_exports_compute_what_the_trained_actor_computes(demo_assets, tmp_path):
    cfg = lora_config(demo_assets, tmp_path, "trainer.total_steps=1", "checkpoint.save_hf=true")
    trainer = Trainer(cfg, RecordingReporter())
    trainer.fit()  # the run's own export: merged (the default)
    merged = tmp_path / "ckpt" / "hf"
    adapter = tmp_path / "adapter"
    export_adapted(trainer.state.actor, adapter, "adapter")
    batch = sampled_batch(trainer)
    expected = trainer.roles.actor_logprobs(batch, 1.0)

    assert not (merged / "adapter_config.json").exists()
    from_merged = compute_logprobs(load_policy(merged), batch, 1.0, 64, True)
    torch.testing.assert_close(from_merged, expected, atol=1e-4, rtol=1e-4)

    assert not (adapter / "model.safetensors").exists()
    with_adapter = peft.PeftModel.from_pretrained(load_policy(cfg.model.path), str(adapter))
    from_adapter = compute_logprobs(with_adapter, batch, 1.0, 64, True)
    torch.testing.assert_close(from_adapter, expected, atol=1e-5, rtol=1e-5)
