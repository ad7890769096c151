#!/usr/bin/env bash
# The distributed equivalence and checkpoint tests under gdb with glibc's heap checks (as
# bench/heap_checks.sh sets them), under a CPU stress load, until pytest's process crashes:
# then every thread's native backtrace is in var/heap-gdb/round-N.log. A crash seen with
# bench/heap_checks.sh was pytest's own process at interpreter exit, after its tests passed.
#
#   bench/heap_checks_gdb.sh [ROUNDS]      (default 8; needs gdb and stress-ng; run it alone)
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p var/heap-gdb
lib=$(ls /usr/lib/*-linux-gnu/libc_malloc_debug.so.0 | head -1)
stress-ng --cpu 2 --timeout 3600s --quiet &
stress=$!
trap 'kill $stress 2>/dev/null' EXIT
for round in $(seq 1 "${1:-8}"); do
  t0=$(date +%s)
  out=var/heap-gdb/round-$round.log
  gdb -q -batch -ex "set pagination off" -ex "set confirm off" \
    -ex "handle SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD SIGINT SIGTERM SIG34 SIG35 SIG36 nostop noprint pass" \
    -ex "set environment LD_PRELOAD=$lib" -ex "set environment MALLOC_CHECK_=3" \
    -ex "set environment MALLOC_PERTURB_=165" -ex run \
    -ex "info threads" -ex "thread apply all bt 40" \
    --args .venv/bin/python -X faulthandler -m pytest -q -p no:cacheprovider -x \
    tests/distributed/test_equivalence.py tests/distributed/test_checkpoints.py > $out 2>&1
  if grep -q "received signal SIG\(SEGV\|ABRT\|BUS\)" $out; then
    echo "round $round: CRASH in $(( $(date +%s) - t0 )) s: $out"; exit 0
  fi
  echo "round $round: $(grep -E 'passed|failed' $out | tail -1) in $(( $(date +%s) - t0 )) s (load $(cut -d' ' -f1 /proc/loadavg))"
  rm -f $out
done
