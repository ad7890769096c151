#!/usr/bin/env bash
# The distributed equivalence and checkpoint tests under gdb with glibc's heap checks (as
# bench/heap_checks.sh sets them), under a CPU stress load, ROUNDS times: a round whose
# pytest process crashes keeps every thread's native backtrace in var/heap-gdb/round-N.log,
# and a round with a failed test (a Ray worker's abort, say) keeps its output there too.
# A crash seen with bench/heap_checks.sh was pytest's own process at interpreter exit,
# after its tests passed. Prints a line a round and a summary.
#
#   bench/heap_checks_gdb.sh [ROUNDS]      (default 8; needs gdb and stress-ng; run it alone)
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p var/heap-gdb
lib=$(ls /usr/lib/*-linux-gnu/libc_malloc_debug.so.0 | head -1)
rounds=${1:-8}
stress-ng --cpu 2 --timeout $((rounds * 600))s --quiet &
stress=$!
trap 'kill $stress 2>/dev/null' EXIT
passed=0
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
  t0=$(date +%s)
  out=var/heap-gdb/round-$round.log
  gdb -q -batch -ex "set pagination off" -ex "set confirm off" \
    -ex "handle SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD SIGINT SIGTERM SIG34 SIG35 SIG36 nostop noprint pass" \
    -ex "set environment LD_PRELOAD=$lib" -ex "set environment MALLOC_CHECK_=3" \
    -ex "set environment MALLOC_PERTURB_=165" -ex run \
    -ex "info threads" -ex "thread apply all bt 40" \
    --args .venv/bin/python -X faulthandler -m pytest -q -p no:cacheprovider -x \
    tests/distributed/test_equivalence.py tests/distributed/test_checkpoints.py > $out 2>&1
  took=$(( $(date +%s) - t0 )); load=$(cut -d' ' -f1 /proc/loadavg)
  summary=$(grep -aE '[0-9]+ (passed|failed|errors?)' $out | tail -1)
  if grep -q "received signal SIG\(SEGV\|ABRT\|BUS\)" $out; then
    echo "round $round: CRASH in $took s (load $load): $out"
  elif echo "$summary" | grep -qE "failed|error" || ! echo "$summary" | grep -q passed; then
    echo "round $round: FAILED in $took s (load $load): ${summary:-no summary}: $out"
    grep -aE "malloc|free\(\)|corrupt|SIGABRT|SIGSEGV|died|^E " $out | head -8
  else
    passed=$((passed + 1))
    echo "round $round: $summary in $took s (load $load)"
    rm -f $out
  fi
done
echo "$passed of $rounds rounds passed in $(( $(date +%s) - started )) s under stress-ng --cpu 2"
[ "$passed" -eq "$rounds" ]
