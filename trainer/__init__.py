"""RL Studio trainer: GRPO/PPO-family post-training as a standalone library and CLI.

Importing this package is cheap (no torch): the studio imports `trainer.config`
and the data readers without pulling the training stack in.
"""

__version__ = "0.1.0"
