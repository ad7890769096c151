#!/usr/bin/env bash
# Run pytest node ids on a machine slowed down, beside a CI-like load: every process of
# the run and of the load (Ray heads, trainers, Celery, the web server) is put in one CPU
# cgroup capped at CPUS cores' worth of time. On a 2-core VM, CPUS=1 is a machine half as
# fast as this one, CPUS=0.67 a third as fast: what the slow VMs behind the 28-40 min CI
# runs were (every test 1.5-3x slower there, docs/operations.md#tests).
#
#   CPUS=0.67 bench/slow_machine.sh TAG [pytest node ids...]
#
# The load is the sweep and worker-failure tests looping in another pytest, with their own
# test database (test_slowload) and Redis database (14): two more Ray heads training, as
# the other xdist worker of a CI run. It starts LOAD_HEAD_START_S (45) seconds before the
# run. Each run keeps its pytest temp folder (stack logs included) in /tmp/slow-<TAG>.
# Extra pytest options go in PYTEST_ADDOPTS; RLSTUDIO_CHAOS_SEED replays the launch chaos
# test's seed. CODE runs the node ids from another checkout of this repository (a
# `git worktree` at an older commit), with this checkout's virtualenv.
#
# Needs root and a CPU cgroup: cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us). Run it
# alone: the cap holds the run's share, but another suite would still take the cores.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TAG=${1:?usage: CPUS=0.67 bench/slow_machine.sh TAG [node ids...]}
shift
NODE_IDS=("$@")
if [ ${#NODE_IDS[@]} -eq 0 ]; then
    NODE_IDS=("tests/runs/live/test_runs_on_ray.py::test_killing_the_worker_anywhere_in_launch_run_starts_every_run_exactly_once")
fi
CPUS=${CPUS:-0.67}
CODE=${CODE:-$REPO}
LOAD_HEAD_START_S=${LOAD_HEAD_START_S:-45}
quota=$(python3 -c "print(int(float('$CPUS') * 100000))")

if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2
    group=/sys/fs/cgroup/rlstudio-slow
    mkdir -p "$group"
    echo "$quota 100000" > "$group/cpu.max"
else  # cgroup v1
    group=/sys/fs/cgroup/cpu/rlstudio-slow
    mkdir -p "$group"
    echo 100000 > "$group/cpu.cfs_period_us"
    echo "$quota" > "$group/cpu.cfs_quota_us"
fi
echo $$ > "$group/cgroup.procs"  # this shell, and so everything it starts

eval "$("$REPO/.venv/bin/python" -m studio.platform.suite_services)"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export RLSTUDIO_TEST_CACHE=${RLSTUDIO_TEST_CACHE:-$REPO/var/test-cache}
(
    export DATABASE_URL=${DATABASE_URL%/*}/slowload REDIS_URL=redis://127.0.0.1:6379/14
    while true; do
        "$REPO/.venv/bin/python" -m pytest -q -p no:cacheprovider \
            tests/runs/test_sweeps_on_ray.py tests/distributed/test_worker_failure.py \
            > "/tmp/slow-$TAG-load.log" 2>&1
    done
) &
load=$!
stop_load() {
    kill "$load" 2>/dev/null
    pkill -f "tests/runs/test_sweeps_on_ray.py tests/distributed/test_worker_failure.py"
    wait "$load" 2>/dev/null
}
trap stop_load EXIT
sleep "$LOAD_HEAD_START_S"

rm -rf "/tmp/slow-$TAG"
started=$(date +%s)
(cd "$CODE" && PYTHONPATH=$CODE "$REPO/.venv/bin/python" -m pytest -q -s -p no:cacheprovider \
    --basetemp="/tmp/slow-$TAG" "${NODE_IDS[@]}")
status=$?
echo "slow_machine $TAG: CPUS=$CPUS, exit $status in $(( $(date +%s) - started )) s," \
    "stack logs in /tmp/slow-$TAG"
exit $status
