"""The trainer's CPU-only speed work, behind one seam.

- `onednn_linear`: float32 linear layers multiplied by oneDNN instead of MKL
  (`speed.cpu_linear_kernel`), applied only to a model that computes on the CPU.
- `linear_replay` and `replay_recorder`: the update takes the linear layers' outputs the
  rollout computed instead of multiplying again (`speed.replay_rollout_outputs`).
- `memory`: a trainer process keeps the memory a step frees for the next step.

The trainer's core never imports this package (an import-linter contract): the HF engine
exposes a `DecodeWatcher`, the step a `RolloutHints` and the batch a `RolloutHint`, and
the process's assembly (`trainer.training.state`, the distributed worker, `trainer.models.loading`)
plugs these in where they apply.
"""
