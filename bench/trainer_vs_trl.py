"""Our GRPO trainer vs TRL's GRPOTrainer (CPU): completion tokens/s and reward at matched settings.

Workloads (`WORKLOADS` in `bench/trl_compare/settings.py`):
- short (`demo`, `large`): the warm-started demo models (3.3M, 25.5M) on the toy arith
  prompts, 16 prompts x 8, at most 16 new tokens; answers end after ~6 tokens.
- long (`long128`, `long512`): the 25.5M shape with random weights, which almost never
  samples EOS, so completions run to the limit (128 or 512 new tokens); 8 prompts x 8,
  reward `bench/digit_share_reward.py` (graded, so every group has a signal).
  `long128-bf16` is long128 with both trainers in pure bf16; the others run in fp32.
  Our trainer runs its default `speed.cpu_linear_kernel=auto` (trainer/cpu_speed/onednn_linear.py):
  float32 linear layers through oneDNN on an AMD CPU with AVX-512, PyTorch's own kernels
  (as TRL's) elsewhere; each run's config records which one ran.
  `long128-torch-kernels` is long128 with ours on PyTorch's kernels on any CPU.

Both trainers start from the same weights (each model built once by the demo builder),
train on the same prompts in the same order, with the same reward (wrapped as a TRL reward
function), batch shape, sampling, loss aggregation, optimizer, seed and torch threads (see
`Matched`, the two config builders in `trl_compare/ours.py` and `trl_compare/trl.py`, and
`--threads`). Runs alternate (ours, TRL, ours, TRL, ...), each in a fresh subprocess of
this script. Per run: completion tokens/s
(generated response tokens incl. EOS over the wall time of the training steps, model load
and setup excluded), per-phase seconds (generation, reward, old and reference log-probs,
update, weight sync, other), the mean training reward of the last 5 steps, and for the
short workloads the greedy accuracy on the arith test split afterwards, computed for every
run's final weights by one evaluator process (plain `transformers` generate, shared by both).

    .venv/bin/pip install -e '.[bench]'   # trl==1.16.0
    .venv/bin/python bench/trainer_vs_trl.py [--workloads demo,large,long128,long512]
        [--runs 3] [--threads 2]
        [--steps 20,long128=10,long128-bf16=10,long128-torch-kernels=10,long512=5]
    .venv/bin/python bench/trainer_vs_trl.py --quick   # 1 run x 2 steps per workload

Before a full run it waits (30 s polls, 25 min at most) for the 1-minute load average to
drop below 1.5, and before each run up to `--run-wait` seconds more; it records the load
around every run. Pair i (ours run i, TRL run i) uses seed i - 1 for both trainers.
Models and data are cached under `var/bench/trainer_vs_trl/` (building the large model's
warm start takes minutes, once). The code is the package `bench/trl_compare/`; this script
is its entry point and the command its worker subprocesses run.
"""

from __future__ import annotations

from trl_compare.cli import main

if __name__ == "__main__":
    main(__doc__.splitlines()[0])
