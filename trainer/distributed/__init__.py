"""The distributed trainer: FSDP2 worker groups on Ray, driven by one controller.

- `runtime.distributed_runtime` connects to Ray, places one worker per rank
  (`group.WorkerGroup`, a placement group from `resources`), and hands the training
  loop a `trainer.training.roles.Runtime`: the controller's state and `DistributedRoles`.
- The controller (this process) runs the unchanged `trainer.training.loop.Trainer` and
  `trainer.training.step.train_step`: data, reward scoring, advantages, metrics, checkpoints.
- Each worker (`worker.PolicyWorker`) is one FSDP2 rank holding the actor with its
  rollout engine, and the reference and critic when the algorithm needs them. It runs
  the per-rank functions the single process runs (`update_actor`, `update_critic`,
  `rank_logprobs`, `rank_values`) on its shard, with gradients summed by FSDP and
  metrics all-reduced.
- A reward model with `placement=worker_group` (`reward.model` or one of
  `reward.extra_models`) has a group of its own (`reward_group.RewardModelGroup`, placed
  from its `resources`): the controller's reward scorer sends each batch there in shares
  and combines the scores with the other sources' as in one process
  (`trainer.training.reward_sources`).

Nothing here is imported by the single-process path; this module stays light (no ray).
"""

from __future__ import annotations

from trainer.config.schema import RewardModelConfig, RunConfig


def uses_distributed(cfg: RunConfig) -> bool:
    """Several workers, GPU workers, or a reward model on a worker group of its own: the
    run goes through Ray worker groups. An evaluation (`evaluation.models`) never does: it
    runs in the job's own process (trainer.evaluation.evaluate), which reserves the whole
    request."""
    if cfg.evaluation.models:
        return False
    return (
        cfg.resources.num_workers > 1
        or cfg.resources.gpus_per_worker > 0
        or uses_reward_model_group(cfg)
    )


def uses_reward_model_group(cfg: RunConfig) -> bool:
    return bool(reward_model_groups(cfg))


def reward_model_groups(cfg: RunConfig) -> list[tuple[str, RewardModelConfig]]:
    """The reward models that run on worker groups of their own, with their config paths."""
    return [(s, m) for s, m in cfg.reward.model_sections() if m.placement == "worker_group"]
