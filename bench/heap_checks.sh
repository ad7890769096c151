#!/usr/bin/env bash
# Run pytest node ids again and again under a CPU stress load with glibc's heap checks on
# in every process, Ray's workers included (they inherit the Ray head's environment,
# which is this one's): a heap corruption aborts at the bad free instead of later.
#
#   bench/heap_checks.sh ROUNDS [pytest node ids...]
#
# Defaults: 30 rounds of the distributed equivalence and checkpoint tests. Prints one line
# a round and a summary; each failed round's output is kept in var/heap-checks/. Run it
# alone: never beside another suite (the machine has 2 cores, stress-ng takes both).
#
# Core dumps are on for every process it starts (ulimit -c), so a crash in a Ray worker
# leaves its native stack to read with gdb; where they land is the kernel's
# core_pattern (as root: echo '/tmp/cores/core.%e.%p' > /proc/sys/kernel/core_pattern).
# Each round lists the cores that appeared in CORE_DIR (default /tmp/cores).
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-30}
shift || true
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=(tests/distributed/test_equivalence.py tests/distributed/test_checkpoints.py)
fi
debug_lib=$(ls /usr/lib/*-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -1)
if [ -z "$debug_lib" ] || ! command -v stress-ng >/dev/null; then
    echo "needs glibc's libc_malloc_debug.so.0 and stress-ng (apt-get install stress-ng)" >&2
    exit 2
fi
out=var/heap-checks
mkdir -p "$out"
ulimit -c unlimited 2>/dev/null || echo "core dumps stay off: ulimit -c refused" >&2
cores=${CORE_DIR:-/tmp/cores}
stress-ng --cpu 2 --timeout $((rounds * 600))s --quiet &
stress=$!
trap 'kill $stress 2>/dev/null' EXIT
passed=0
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
    t0=$(date +%s)
    touch "$out/.round-start"
    # On glibc 2.34+ MALLOC_CHECK_ does nothing without the debug library preloaded;
    # MALLOC_PERTURB_ fills freed and new blocks, so a use after free reads garbage.
    LD_PRELOAD=$debug_lib MALLOC_CHECK_=3 MALLOC_PERTURB_=165 \
        .venv/bin/python -m pytest -q -p no:cacheprovider -x "${tests[@]}" \
        > "$out/round-$round.log" 2>&1
    status=$?
    load=$(cut -d' ' -f1 /proc/loadavg)
    new_cores=$(find "$cores" -maxdepth 1 -name 'core*' -newer "$out/.round-start" 2>/dev/null)
    [ -z "$new_cores" ] || echo "round $round: core dumps: $new_cores"
    if [ $status -eq 0 ]; then
        passed=$((passed + 1))
        rm -f "$out/round-$round.log"
        echo "round $round: passed in $(( $(date +%s) - t0 )) s (load $load)"
    else
        echo "round $round: FAILED in $(( $(date +%s) - t0 )) s (load $load): $out/round-$round.log"
        grep -aE "malloc|free\(\)|corrupt|SIGABRT|SIGSEGV" "$out/round-$round.log" | head -5
    fi
done
echo "$passed of $rounds rounds passed in $(( $(date +%s) - started )) s under stress-ng --cpu 2"
[ "$passed" -eq "$rounds" ]
