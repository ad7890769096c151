"""The trainer's entry points: `python -m trainer` (`cli`), the `sample` command, and the
choice of where a run trains (`training_runtime`)."""
