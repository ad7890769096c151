"""The training step and what it works with: the batch, log-probs, the updates, the
models' roles (this process or Ray worker groups), checkpoints and the loop.

`step.train_step` reads top to bottom; `loop.Trainer` drives it. The run's `speed`
converters (trainer.models.converters) plug in through `step_hooks`; the entry points
live in trainer.commands.
"""
