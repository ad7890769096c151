"""Our GRPO trainer against TRL's GRPOTrainer on CPU, at matched settings.

The package behind `bench/trainer_vs_trl.py`: `settings` (matched settings, models,
workloads), `ours` and `trl` (each trainer's config and training worker), `workers` (the
worker subprocesses and `spawn`), `summary` (figures, ratios, tables, `report`) and `cli`
(the options and the benchmark run).
"""
