"""One data-parallel rank as a Ray actor: the actor with its rollout engine, plus the
reference and the critic when the algorithm needs them, each an FSDP2 module.

The reference and the critic live in the actor's process ("colocated") rather than in
worker groups of their own. On CPU every extra process costs a torch import, a model
load and cores we do not have; on GPUs one process per GPU with the roles taking turns
is verl's default too, and it lets each phase free memory for the next. Each role is
its own FSDP2 module, so giving one a group of its own later changes only placement.

The rollout engine holds an unsharded copy of the actor (HF engine) or its own weights
(vLLM): generation then runs without collectives, so ranks may finish their shards at
different times. After each update the FSDP2 parameters are gathered one at a time
into that copy (`fsdp.copy_full_parameters`).
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import psutil
import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.distributed.device_mesh import init_device_mesh

from trainer.config.schema import RunConfig
from trainer.distributed import crash_evidence, fsdp
from trainer.models.converters import build_converters
from trainer.models.loading import (
    ValueModel,
    check_same_tokenizer,
    load_policy,
    load_tokenizer,
)
from trainer.models.lora import adapters_disabled, add_adapters, load_adapter
from trainer.rollout.chunked import generate_chunk
from trainer.rollout.engine import Completion, RolloutEngine, SamplingParams
from trainer.rollout.hf import HFEngine
from trainer.training.batch import RolloutBatch
from trainer.training.optim import build_optimizer, build_scheduler, set_schedule_length
from trainer.training.roles import ModelStates, rank_logprobs, rank_sum_pi_squared, rank_values
from trainer.training.update import update_actor, update_critic

VLLM_BUCKET_BYTES = 256 * 2**20  # weights handed to vLLM per load_weights call


@dataclass(frozen=True)
class WorkerInfo:
    rank: int
    pid: int
    node_ip: str
    device: str  # e.g. "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)"
    num_params: int  # the actor's parameters (full model)


def worker_info(rank: int, device: torch.device, num_params: int) -> WorkerInfo:
    """This Ray worker process's `WorkerInfo`."""
    import ray

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else ""
    return WorkerInfo(
        rank=rank,
        pid=os.getpid(),
        node_ip=ray.util.get_node_ip_address(),
        device=f"{device} ({name})" if name else str(device),
        num_params=num_params,
    )


@dataclass(frozen=True)
class UpdateResult:
    metrics: dict[str, float]
    generator_state: Tensor  # the mini-batch shuffle generator after the update
    memory: dict[str, float]


@dataclass(frozen=True)
class TorchDataGroup:
    """`trainer.training.data_parallel.DataGroup` over the default torch.distributed group."""

    rank: int
    world_size: int
    device: torch.device

    def all_reduce_sum(self, values: Tensor) -> Tensor:
        out = values.to(self.device)  # nccl reduces GPU tensors only
        dist.all_reduce(out, op=dist.ReduceOp.SUM)
        return out.cpu()


class PolicyWorker:
    """Methods are called by `group.WorkerGroup` on every rank at once (collectives)."""

    def __init__(self, cfg: dict[str, Any], rank: int, world_size: int) -> None:
        from transformers.utils import logging as hf_logging

        self.cfg = RunConfig.model_validate(cfg)
        self.rank, self.world_size = rank, world_size
        crash_evidence.enable()  # all threads' stacks on a fatal signal; a core if asked
        # Ray hands each actor `cpus_per_worker` cores; more threads only fight over them.
        torch.set_num_threads(max(1, int(self.cfg.resources.cpus_per_worker)))
        hf_logging.disable_progress_bar()
        use_gpu = self.cfg.resources.gpus_per_worker > 0
        self.device = torch.device("cuda", 0) if use_gpu else torch.device("cpu")
        # The run's `speed` converters, applied to each model as it is built.
        self.converters = build_converters(self.cfg)
        self.converters.prepare(self.device)

    def rendezvous(self) -> tuple[str, int]:
        """Rank 0's address and a free port on its node for `init_process_group`."""
        import socket

        import ray

        with socket.socket() as sock:
            sock.bind(("", 0))
            port = int(sock.getsockname()[1])
        return ray.util.get_node_ip_address(), port

    def setup(self, master_addr: str, master_port: int) -> WorkerInfo:
        """Join the process group (every rank must be here at once), load and shard the
        models, build optimizers and the rollout engine."""
        cfg = self.cfg
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        dist.init_process_group(
            "nccl" if self.device.type == "cuda" else "gloo",
            init_method=f"tcp://{master_addr}:{master_port}",
            rank=self.rank,
            world_size=self.world_size,
            timeout=timedelta(seconds=cfg.resources.worker_timeout_s),
        )
        mesh = init_device_mesh(self.device.type, (self.world_size,))
        self.group = TorchDataGroup(self.rank, self.world_size, self.device)
        mixed = self.device.type == "cuda"
        offload = cfg.actor.cpu_offload
        # Same seed and load order as trainer.training.state.build_state: the critic's value head
        # is initialised identically to the single-process run's.
        torch.manual_seed(cfg.trainer.seed)
        actor = self._policy(cfg.model.dtype)
        num_params = sum(p.numel() for p in actor.parameters())
        if cfg.model.gradient_checkpointing:
            actor.gradient_checkpointing_enable(  # type: ignore[operator]
                gradient_checkpointing_kwargs={"use_reentrant": False}  # FSDP2-safe form
            )
        self.lora = cfg.actor.lora.enabled
        if self.lora:  # seeded as in build_state: every rank starts from the same adapters
            actor = add_adapters(actor, cfg.actor.lora)
            if cfg.actor.lora.adapter_path:
                load_adapter(actor, cfg.actor.lora.adapter_path, cfg.actor.lora)
        self.actor = fsdp.shard_model(actor, mesh, mixed, offload)
        self.optimizer = build_optimizer(self.actor, cfg.actor.optim)
        total_steps = cfg.trainer.total_steps or 1_000_000
        self.scheduler = build_scheduler(self.optimizer, total_steps, cfg.actor.optim)
        self.ref: nn.Module | None = None
        if cfg.needs_reference_model and not self.lora:  # LoRA: the base is the reference
            ref = self._policy(cfg.model.dtype).requires_grad_(False).eval()
            self.ref = fsdp.shard_model(ref, mesh, mixed, offload)
        self.critic: nn.Module | None = None
        if cfg.needs_critic:
            if cfg.critic.model.path:
                tokenizer = load_tokenizer(cfg.model.path)
                check_same_tokenizer(tokenizer, cfg.critic.model.path, "critic.model.path")
            critic = self.converters.apply(
                ValueModel.from_pretrained(
                    cfg.critic_model_path, cfg.model.dtype, self.device, stage_on_cpu=True
                ),
                self.device,
            )
            self.critic = fsdp.shard_model(critic, mesh, mixed, offload)
            self.critic_optimizer = build_optimizer(self.critic, cfg.critic.optim)
            self.critic_scheduler = build_scheduler(
                self.critic_optimizer, total_steps, cfg.critic.optim
            )
        self.engine = self._rollout_engine()
        return worker_info(self.rank, self.device, num_params)

    def _policy(self, dtype: str) -> nn.Module:
        # Staged on the CPU: fully_shard moves only this rank's shard to the GPU.
        policy = load_policy(
            self.cfg.model.path,
            dtype,
            self.device,
            stage_on_cpu=True,
            config_overrides=self.cfg.model.config_overrides,
        )
        return self.converters.apply(policy, self.device)

    def _rollout_engine(self) -> RolloutEngine:
        cfg = self.cfg
        if cfg.rollout.engine == "vllm":
            if self.lora:
                raise NotImplementedError(
                    "actor.lora with rollout.engine='vllm' is not supported yet; use "
                    "rollout.engine='hf' (it generates with the adapters, no merged copy)"
                )
            from trainer.rollout.vllm import VLLMEngine

            return VLLMEngine(
                cfg.model.path, seed=cfg.trainer.seed, hf_overrides=cfg.model.config_overrides
            )
        # bf16 on GPUs halves the copy; sampling log-probs are not used by the update.
        dtype = "bfloat16" if self.device.type == "cuda" else cfg.model.dtype
        copy: nn.Module = self.converters.apply(
            load_policy(
                cfg.model.path, dtype, self.device, config_overrides=cfg.model.config_overrides
            ),
            self.device,
        )
        if self.lora:  # the copy carries adapters too: a sync then moves only them
            with torch.random.fork_rng(devices=[]):  # the adapters' init draws no run RNG
                copy = add_adapters(copy, cfg.actor.lora)
        copy.requires_grad_(False).eval()
        return HFEngine(
            copy,
            load_tokenizer(cfg.model.path),
            self.device,
            max_batch_size=cfg.rollout.micro_batch_size,
            offload_when_asleep=self.device.type == "cuda",  # free the GPU for training
        )

    # -- rollout ----------------------------------------------------------------------------

    def generate(
        self, chunks: list[tuple[int, int, list[list[int]]]], sampling: SamplingParams
    ) -> list[Completion]:
        """Completions of this rank's chunks: (chunk index, first prompt, prompts) each."""
        out: list[Completion] = []
        for index, first, prompts in chunks:
            out += generate_chunk(self.engine, prompts, sampling, index, first)
        return out

    def sleep(self) -> None:
        self.engine.sleep()
        self._free_memory()

    def wake(self) -> None:
        self.engine.wake()

    def sync_rollout_weights(self) -> None:
        if isinstance(self.engine, HFEngine):
            fsdp.copy_full_parameters(self.actor, self.engine.model, trainable_only=self.lora)
        else:
            for bucket in fsdp.full_parameter_buckets(self.actor, VLLM_BUCKET_BYTES):
                self.engine.update_weights(bucket)
        self._free_memory()

    def load_rollout_weights(self, state: dict[str, Tensor]) -> None:
        """Weights from elsewhere (a full state dict) into the rollout engine."""
        self.engine.update_weights(state)

    # -- scoring and updates ---------------------------------------------------------------

    def actor_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        batch = batch.to(self.device)
        return rank_logprobs(self.actor, batch, temperature, self.cfg.actor, self.group).cpu()

    def actor_sum_pi_squared(self, batch: RolloutBatch, temperature: float) -> Tensor:
        batch = batch.to(self.device)
        return rank_sum_pi_squared(self.actor, batch, temperature, self.cfg.actor, self.group).cpu()

    def ref_logprobs(self, batch: RolloutBatch, temperature: float) -> Tensor:
        batch = batch.to(self.device)
        if self.lora:
            with adapters_disabled(self.actor):
                return rank_logprobs(
                    self.actor, batch, temperature, self.cfg.actor, self.group
                ).cpu()
        assert self.ref is not None, "ref_logprobs needs a reference model"
        return rank_logprobs(self.ref, batch, temperature, self.cfg.actor, self.group).cpu()

    def critic_values(self, batch: RolloutBatch) -> Tensor:
        assert self.critic is not None, "critic_values needs a critic"
        batch = batch.to(self.device)
        return rank_values(self.critic, batch, self.cfg.actor, self.group).cpu()

    def update_actor(
        self,
        batch: RolloutBatch,
        temperature: float,
        mini_batch_rows: int,
        norm_constant: float,
        generator_state: Tensor,
    ) -> UpdateResult:
        generator = torch.Generator()
        generator.set_state(generator_state)  # every rank shuffles the mini-batches alike
        metrics = update_actor(
            self.actor,
            self.optimizer,
            batch.to(self.device),
            self.cfg.actor,
            temperature,
            mini_batch_rows,
            norm_constant,
            generator,
            self.group,
            rollout_correction=self.cfg.algorithm.rollout_correction,
        )
        return UpdateResult(metrics, generator.get_state(), self.memory())

    def update_critic(
        self, batch: RolloutBatch, mini_batch_rows: int, generator_state: Tensor
    ) -> UpdateResult:
        assert self.critic is not None, "update_critic needs a critic"
        generator = torch.Generator()
        generator.set_state(generator_state)
        metrics = update_critic(
            self.critic,
            self.critic_optimizer,
            batch.to(self.device),
            self.cfg.critic,
            self.cfg.actor.micro_batch_size,
            mini_batch_rows,
            generator,
            self.group,
            self.cfg.actor.max_tokens_per_micro_batch,
        )
        return UpdateResult(metrics, generator.get_state(), self.memory())

    def step_schedulers(self) -> None:
        self.scheduler.step()
        if self.critic is not None:
            self.critic_scheduler.step()

    def set_schedule_length(self, total_steps: int) -> None:
        set_schedule_length(self.scheduler, total_steps, self.cfg.actor.optim)
        if self.critic is not None:
            set_schedule_length(self.critic_scheduler, total_steps, self.cfg.critic.optim)

    # -- checkpoints -----------------------------------------------------------------------

    def actor_weights(self) -> dict[str, Tensor]:
        """Collective: the actor's full weights (a LoRA actor's adapters) on rank 0, `{}`
        elsewhere."""
        return fsdp.full_model_state(self.actor, trainable_only=self.lora)

    def model_states(self) -> ModelStates | None:
        """Collective: the single-process-format states on rank 0, None elsewhere."""
        states = ModelStates(
            actor=fsdp.full_model_state(self.actor, trainable_only=self.lora),
            actor_optim=fsdp.full_optimizer_state(self.actor, self.optimizer),
            scheduler=self.scheduler.state_dict(),
        )
        if self.critic is not None:
            states.critic = fsdp.full_model_state(self.critic)
            states.critic_optim = fsdp.full_optimizer_state(self.critic, self.critic_optimizer)
            states.critic_scheduler = self.critic_scheduler.state_dict()
        return states if self.rank == 0 else None

    def load_model_states(self, states: ModelStates) -> None:
        fsdp.load_full_states(
            self.actor, states.actor, self.optimizer, states.actor_optim, trainable_only=self.lora
        )
        self.scheduler.load_state_dict(states.scheduler)
        if self.critic is not None and states.critic is not None:
            fsdp.load_full_states(
                self.critic, states.critic, self.critic_optimizer, states.critic_optim
            )
            if states.critic_scheduler is not None:
                self.critic_scheduler.load_state_dict(states.critic_scheduler)
        self.sync_rollout_weights()

    # -- housekeeping ----------------------------------------------------------------------

    def memory(self) -> dict[str, float]:
        stats = {"perf/cpu_memory_used_gb": psutil.Process().memory_info().rss / 2**30}
        if self.device.type == "cuda":
            stats["perf/max_memory_allocated_gb"] = torch.cuda.max_memory_allocated() / 2**30
        return stats

    def rollout_memory(self) -> dict[str, int]:
        """Bytes of this rank's actor shard and of the rollout engine's full copy."""
        shard = sum(fsdp_local_bytes(p) for p in self.actor.parameters())
        engine_model = getattr(self.engine, "model", None)
        copy = (
            sum(p.numel() * p.element_size() for p in engine_model.parameters())
            if isinstance(engine_model, nn.Module)
            else 0
        )
        return {
            "actor_shard_bytes": shard,
            "rollout_copy_bytes": copy,
            "rss_bytes": psutil.Process().memory_info().rss,
        }

    def _free_memory(self) -> None:
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def fsdp_local_bytes(param: Tensor) -> int:
    local = param.to_local() if isinstance(param, fsdp.DTensor) else param
    return local.numel() * local.element_size()
