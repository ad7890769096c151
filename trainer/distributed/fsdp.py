"""FSDP2 on one rank: sharding a Hugging Face model, and its full (unsharded) states.

- `shard_model`: `fully_shard` on every decoder layer, then on the root (embeddings,
  final norm, LM head), so one layer's parameters are gathered at a time.
- Gradients are *summed* across ranks, not averaged: every micro-batch's loss is
  already weighted by its share of the global mini-batch (trainer.training.update), so the sum
  is the single-process gradient. (FSDP's default divides by the world size.)
- Full states in the single-process format: `get_model_state_dict` with
  `full_state_dict=True` for the weights; the optimizer state keyed by parameter
  index like `optimizer.state_dict()`, converted from DCP's keys (parameter names).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor, nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor

# Full tensors gathered to rank 0 only, in CPU memory: what a checkpoint writes.
GATHER_TO_RANK0 = StateDictOptions(full_state_dict=True, cpu_offload=True)
# Every rank passes the same full tensors and keeps its shard of them.
LOAD_FULL = StateDictOptions(full_state_dict=True)
# A LoRA actor: only the adapters (the frozen base is rebuilt from model.path).
GATHER_TRAINABLE_TO_RANK0 = StateDictOptions(
    full_state_dict=True, cpu_offload=True, ignore_frozen_params=True
)
LOAD_TRAINABLE = StateDictOptions(full_state_dict=True, strict=False)

LAYER_PATHS = (
    "model.layers",
    "backbone.layers",
    "layers",
    "transformer.h",
    "gpt_neox.layers",
    "base_model.model.model.layers",  # a peft (LoRA) model around a causal LM
)


def decoder_layers(model: nn.Module) -> list[nn.Module]:
    """The repeated transformer blocks (Llama/Qwen/Mistral keep them in `model.layers`;
    the critic's backbone in `backbone.layers`)."""
    for path in LAYER_PATHS:
        found: Any = model
        for name in path.split("."):
            found = getattr(found, name, None)
        if isinstance(found, nn.ModuleList):
            return list(found)
    raise ValueError(
        f"cannot find the decoder layers of {type(model).__name__} (looked at {LAYER_PATHS}); "
        "the distributed trainer shards Hugging Face causal LMs of that shape"
    )


def shard_model(
    model: nn.Module, mesh: DeviceMesh, mixed_precision: bool, cpu_offload: bool
) -> nn.Module:
    """Shard `model` in place over `mesh` (see the module docstring); returns it."""
    options: dict[str, Any] = {"mesh": mesh}
    if mixed_precision:  # bf16 compute, fp32 master weights and gradient reduction
        options["mp_policy"] = MixedPrecisionPolicy(
            param_dtype=torch.bfloat16, reduce_dtype=torch.float32
        )
    if cpu_offload:
        options["offload_policy"] = CPUOffloadPolicy()
    for layer in decoder_layers(model):
        fully_shard(layer, **options)
    fully_shard(model, **options)
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.set_gradient_divide_factor(1.0)
            # Plain SUM reductions: gloo has no AVG/PREMUL_SUM, and there is no factor.
            module.set_force_sum_reduction_for_comms(True)
    return model


def parameter_names(model: nn.Module) -> list[str]:
    """Names of the optimizer's parameters in its order (`trainer.training.optim.build_optimizer`
    takes the trainable parameters in module order; tied weights appear once)."""
    return [name for name, param in model.named_parameters() if param.requires_grad]


def optimizer_state_by_index(state: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """DCP's name-keyed optimizer state -> `optimizer.state_dict()`'s index-keyed one."""
    index = {name: i for i, name in enumerate(names)}
    missing = sorted(set(state["state"]) - set(index))
    if missing:
        raise KeyError(f"optimizer state for unknown parameters: {missing[:5]}")
    return {
        "state": {index[name]: value for name, value in state["state"].items()},
        "param_groups": [
            {**g, "params": [index[name] for name in g["params"]]} for g in state["param_groups"]
        ],
    }


def optimizer_state_by_name(state: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The reverse of `optimizer_state_by_index`."""
    if any(not 0 <= int(i) < len(names) for i in state["state"]):
        raise KeyError(
            f"optimizer state has parameter indices beyond this model's {len(names)} "
            "parameters: the checkpoint belongs to another model"
        )
    return {
        "state": {names[int(i)]: value for i, value in state["state"].items()},
        "param_groups": [
            {**g, "params": [names[int(i)] for i in g["params"]]} for g in state["param_groups"]
        ],
    }


def full_model_state(model: nn.Module, trainable_only: bool = False) -> dict[str, Tensor]:
    """Collective: rank 0 gets every full tensor (or only the trainable parameters) on
    the CPU, other ranks `{}`."""
    options = GATHER_TRAINABLE_TO_RANK0 if trainable_only else GATHER_TO_RANK0
    state = get_model_state_dict(model, options=options)
    # torch drops frozen parameters by their first name only: a tied alias of a frozen
    # one (a LoRA model's lm_head.weight, tied to the frozen embedding) stays unless
    # filtered by name here.
    keep = set(parameter_names(model)) if trainable_only else None
    return {
        name: value
        for name, value in state.items()
        if isinstance(value, Tensor) and (keep is None or name in keep)
    }


def full_optimizer_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Collective: rank 0 gets the index-keyed full optimizer state, other ranks `{}`."""
    state = get_optimizer_state_dict(model, optimizer, options=GATHER_TO_RANK0)
    return optimizer_state_by_index(state, parameter_names(model)) if state else {}


def load_full_states(
    model: nn.Module,
    weights: dict[str, Tensor],
    optimizer: torch.optim.Optimizer | None = None,
    optimizer_state: dict[str, Any] | None = None,
    trainable_only: bool = False,
) -> None:
    """Collective: every rank passes the same full states and keeps its shards
    (`trainable_only`: `weights` holds the trainable parameters alone)."""
    options = LOAD_TRAINABLE if trainable_only else LOAD_FULL
    set_model_state_dict(model, dict[str, Any](weights), options=options)
    if optimizer is not None and optimizer_state is not None:
        by_name = optimizer_state_by_name(optimizer_state, parameter_names(model))
        set_optimizer_state_dict(model, optimizer, by_name, options=LOAD_FULL)


def gathered(param: Tensor) -> Tensor:
    """The full value of a (sharded) parameter; collective for a DTensor."""
    if not isinstance(param, DTensor):
        return param
    mesh = param.device_mesh
    local = param.to_local()
    if local.device.type != mesh.device_type:  # a CPU-offloaded shard: gather on the GPU
        param = DTensor.from_local(
            local.to(mesh.device_type),
            mesh,
            param.placements,
            shape=param.shape,
            stride=param.stride(),
        )
    return param.full_tensor()


@torch.no_grad()
def copy_full_parameters(
    source: nn.Module, target: nn.Module, trainable_only: bool = False
) -> None:
    """Collective: gather `source`'s sharded parameters one by one into the unsharded
    `target` (same architecture). Extra memory at any time: one full parameter.
    `trainable_only` copies just what trains (a LoRA actor's adapters: the frozen base
    in `target` never changes)."""
    into = dict(target.named_parameters())
    for name, param in source.named_parameters():
        if param.requires_grad or not trainable_only:
            into[name].copy_(gathered(param))


def full_parameter_buckets(model: nn.Module, bucket_bytes: int) -> Iterator[dict[str, Tensor]]:
    """Collective: the full parameters in buckets of about `bucket_bytes` (an engine
    holding its own weights, vLLM, loads them bucket by bucket)."""
    bucket: dict[str, Tensor] = {}
    size = 0
    for name, param in model.named_parameters():
        full = gathered(param).detach()
        bucket[name] = full
        size += full.numel() * full.element_size()
        if size >= bucket_bytes:
            yield bucket
            bucket, size = {}, 0
    if bucket:
        yield bucket
