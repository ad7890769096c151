"""Evaluations: runs of kind `evaluation` (models answer a dataset's prompts, scored)."""
