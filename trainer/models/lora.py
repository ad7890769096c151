"""LoRA adapters on the actor (`actor.lora`), through `peft`.

With adapters only the low-rank matrices train; the base weights stay frozen, so:

- the optimizer holds state for the adapters alone (a fraction of the memory);
- the reference policy is the same module with its adapters switched off
  (`adapters_disabled`): no second copy of the model is loaded;
- a checkpoint holds the adapters (`trainable_weights`), and resuming loads them
  back into a freshly built model (`load_trainable_weights`);
- export writes either the adapter folder (peft's format) or a merged Hugging Face
  folder whose weights are `W + scale * B @ A`, computed beside the live weights so the
  trained module itself is never merged in place (unmerging is not bit-exact).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import peft
from peft.tuners.lora import LoraLayer
from safetensors.torch import load_file
from torch import Tensor, nn

from trainer.config.schema import LoraConfig

ALL_LINEAR = "all-linear"


def add_adapters(model: nn.Module, cfg: LoraConfig) -> peft.PeftModel:
    """Wrap `model` with fresh adapters (B = 0, so it still computes the base model);
    every base parameter is frozen."""
    targets: str | list[str] = (
        ALL_LINEAR if cfg.target_modules == [ALL_LINEAR] else list(cfg.target_modules)
    )
    config = peft.LoraConfig(
        r=cfg.rank,
        lora_alpha=cast(Any, cfg.alpha),  # peft types it int; a float scale works
        lora_dropout=cfg.dropout,
        target_modules=targets,
        bias="none",
        task_type="CAUSAL_LM",
    )
    try:
        wrapped = peft.get_peft_model(cast(Any, model), config)
    except ValueError as error:
        raise ValueError(
            f"actor.lora.target_modules={cfg.target_modules} does not fit this model: {error}"
        ) from error
    return cast(peft.PeftModel, wrapped)


ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
_ADAPTER_KEY = "actor.lora.adapter_path"


def adapted_modules(model: nn.Module) -> set[str]:
    """Names of the modules that carry adapters, as peft's saved keys spell them."""
    return {name for name, module in model.named_modules() if isinstance(module, LoraLayer)}


def load_adapter(model: peft.PeftModel, path: str | Path, cfg: LoraConfig) -> None:
    """Start from a saved peft adapter (verl's `lora_adapter_path`): its weights go into
    this run's adapters, which must be the same (rank, alpha, adapted modules, plain LoRA
    scaling) so the adapted model is the one that was saved. Mismatches are refused, each
    named, rather than loaded into differently shaped or scaled adapters."""
    folder = Path(path)
    config_file, weights_file = folder / ADAPTER_CONFIG, folder / ADAPTER_WEIGHTS
    if not config_file.is_file() or not weights_file.is_file():
        raise ValueError(
            f"{_ADAPTER_KEY}={path} is not a peft adapter folder ({ADAPTER_CONFIG} and "
            f"{ADAPTER_WEIGHTS})"
        )
    saved = json.loads(config_file.read_text())
    weights = load_file(weights_file)
    problems = []
    if saved.get("r") != cfg.rank:
        problems.append(f"rank {saved.get('r')} where actor.lora.rank={cfg.rank}")
    if float(saved.get("lora_alpha") or 0.0) != cfg.alpha:
        problems.append(f"alpha {saved.get('lora_alpha')} where actor.lora.alpha={cfg.alpha}")
    for switch in ("use_rslora", "use_dora"):
        if saved.get(switch):
            problems.append(f"{switch} (RL Studio's adapters are plain LoRA)")
    theirs = {key.partition(".lora_")[0] for key in weights if ".lora_" in key}
    ours = adapted_modules(model)
    if theirs != ours:
        only_theirs, only_ours = sorted(theirs - ours), sorted(ours - theirs)
        problems.append(
            f"adapters on other modules (only the adapter's: {only_theirs[:2]}, only "
            f"actor.lora.target_modules={cfg.target_modules}'s: {only_ours[:2]})"
        )
    if problems:
        raise ValueError(
            f"{_ADAPTER_KEY}={path} does not match this run's adapters: {'; '.join(problems)}; "
            "set actor.lora to the adapter's settings"
        )
    result: Any = peft.set_peft_model_state_dict(model, weights)  # torch's load result
    unexpected = sorted(result.unexpected_keys)
    if unexpected:
        raise ValueError(
            f"{_ADAPTER_KEY}={path} holds weights this run has no place for: {unexpected[:3]}"
        )


def is_adapted(model: nn.Module) -> bool:
    """A peft model (also once FSDP2 has wrapped it: it subclasses the original class)."""
    return isinstance(model, peft.PeftModel)


@contextmanager
def adapters_disabled(model: nn.Module) -> Iterator[None]:
    """The base model's forward: the reference policy of a LoRA run."""
    with cast(peft.PeftModel, model).disable_adapter():
        yield


def trainable_weights(model: nn.Module) -> dict[str, Tensor]:
    """The parameters that train (the adapters), by their full names."""
    return {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}


def load_trainable_weights(model: nn.Module, weights: dict[str, Tensor]) -> None:
    """Load a checkpoint's adapters; it must hold exactly this model's trainable ones."""
    expected = set(trainable_weights(model))
    if set(weights) != expected:
        missing, extra = sorted(expected - set(weights)), sorted(set(weights) - expected)
        raise KeyError(
            "the checkpoint's weights do not match this run's adapters (was it saved with "
            f"another actor.lora?): missing {missing[:3]}, unexpected {extra[:3]}"
        )
    model.load_state_dict(weights, strict=False)


def merged_weights(model: nn.Module) -> dict[str, Tensor]:
    """The base model's state dict with every adapter folded into its layer, under the
    base model's own names (what `from_pretrained` of the base architecture expects)."""
    base = cast(peft.PeftModel, model).get_base_model()
    deltas: dict[str, Tensor] = {}
    for name, module in base.named_modules():
        if isinstance(module, LoraLayer):  # peft's Linear: declares get_delta_weight
            for adapter in module.active_adapters:
                delta = cast(Any, module).get_delta_weight(adapter).detach()
                key = f"{name}.weight"
                deltas[key] = deltas[key] + delta if key in deltas else delta
    merged: dict[str, Tensor] = {}
    for key, value in base.state_dict().items():
        if ".lora_" in key:
            continue
        key = key.replace(".base_layer.", ".")
        merged[key] = (value + deltas[key].to(value.dtype)) if key in deltas else value
    return merged


def export_adapted(model: nn.Module, path: Path, mode: str) -> None:
    """`adapter`: peft's adapter folder (adapter_config.json + adapter_model.safetensors);
    `merged`: a plain Hugging Face folder of the merged model."""
    adapted = cast(peft.PeftModel, model)
    if mode == "adapter":
        adapted.save_pretrained(str(path), safe_serialization=True)
        return
    base = cast(Any, adapted.get_base_model())
    base.save_pretrained(str(path), state_dict=merged_weights(model), safe_serialization=True)
