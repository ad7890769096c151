#!/bin/bash
# sha256 of the step-2 checkpoint files of seeded CPU runs: presets ppo-gae and
# grpo-tiny-arith, and grpo-tiny-arith with the oneDNN kernel and replay on. Run it before
# and after a change that must leave training's results as they are, and compare (the
# trainer_state.pt files hold the config and clocks, so compare weights and optimizers):
#
#   bench/checkpoint_hashes.sh /tmp/before; ...change...; bench/checkpoint_hashes.sh /tmp/after
#   diff <(grep -hv trainer_state /tmp/before/*.sha256) <(grep -hv trainer_state /tmp/after/*.sha256)
#
# SPEED overrides the third run's speed keys (e.g. their old spelling).
set -e
OUT=$1
PY=${PY:-.venv/bin/python}
DEMO=$($PY -c "from tests.assets import demo_assets; print(demo_assets())")
mkdir -p "$OUT"
common=("model.path=$DEMO/model" "data.train_files=[$DEMO/data/arith/train.parquet]"
  "data.val_files=[$DEMO/data/arith/test.parquet]" "logging.console=false"
  "checkpoint.save_hf=false" "trainer.total_steps=2" "checkpoint.save_every=2"
  "trainer.val_every=0" "trainer.seed=1")
run() {
  name=$1; shift
  rm -rf "${OUT:?}/$name"
  OMP_NUM_THREADS=1 $PY -m trainer run "$@" "${common[@]}" "checkpoint.dir=$OUT/$name" \
    > "$OUT/$name.log" 2>&1 || { echo "FAIL $name"; tail -20 "$OUT/$name.log"; return 1; }
  (cd "$OUT/$name" && find . -type f -name '*.pt' | sort | xargs sha256sum) > "$OUT/$name.sha256"
}
run ppo-gae --preset ppo-gae
run grpo-tiny-arith --preset grpo-tiny-arith
# shellcheck disable=SC2086  # SPEED is a list of overrides
run grpo-onednn-replay --preset grpo-tiny-arith \
  ${SPEED:-speed.cpu_linear_kernel=onednn speed.replay_rollout_outputs=on}
cat "$OUT"/*.sha256
