"""The trainer's CPU-only speed work, behind one seam.

- `onednn_linear`: float32 linear layers multiplied by oneDNN instead of MKL
  (`speed.cpu_linear_kernel`), applied only to a model that computes on the CPU.
- `linear_replay` and `replay_recorder`: the update takes the linear layers' outputs the
  rollout computed instead of multiplying again (`speed.replay_rollout_outputs`).
- `memory`: a trainer process keeps the memory a step frees for the next step.

Only the model converters (trainer.models.converters) import this package (an
import-linter contract): they apply its kernels where a model is built and install its
replay recorder as the HF engine's `DecodeWatcher`, a training step's `StepHook`
(trainer.training.step_hooks) and the model's `ForwardReuse` (trainer.rollout.forward_reuse).
"""
