"""Evaluating models on a dataset: answers from the base model and checkpoints
(`evaluate`), and the per-model summaries of their scores (`scores`, light: the studio
reads them too)."""
