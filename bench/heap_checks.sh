#!/usr/bin/env bash
# Run pytest node ids again and again under a CPU stress load with glibc's heap checks on
# in every process, Ray's workers included (they inherit the Ray head's environment,
# which is this one's): a heap corruption aborts at the bad free instead of later.
#
#   bench/heap_checks.sh ROUNDS [pytest node ids...]
#
# HEAP_CHECK picks the check preloaded into every process:
#   debug (default)  glibc's debug malloc: MALLOC_CHECK_=3 catches a write past a block's
#                    end at its free; MALLOC_PERTURB_ fills freed and new blocks.
#   quarantine       bench/free_quarantine.c: freed blocks are filled and held back (small
#                    ones by count, big ones up to 256 MiB a process), and checked for
#                    writes after free when they leave the quarantine; its
#                    reports (with the stack that freed the block) are kept with the
#                    round's log, and a round that wrote one fails.
#   asan             the address sanitizer's allocator (gcc's libasan, preloaded, nothing
#                    rebuilt): every block has poisoned red zones around it and freed
#                    blocks wait in a 1 GiB quarantine, and the C library calls it
#                    intercepts (memcpy, memmove, memset, read, recv, ...) check the
#                    bytes they touch, so a copy or a socket read past a block's end or
#                    into a freed block is reported when it happens, with the stacks
#                    that allocated and freed that block; a block freed twice or a free
#                    of a pointer malloc never returned is reported at that free. Each
#                    process's report is kept with the round's log; a round with one fails.
#   plain            no check: glibc's ordinary malloc, as CI runs (both checks change
#                    where blocks land, which could hide a corruption that depends on
#                    it); an abort leaves its core dump to read.
#
# Defaults: 30 rounds of the distributed equivalence and checkpoint tests. Prints one line
# a round and a summary; each failed round's output is kept in var/heap-checks/<start
# time>/. Run it alone: never beside another suite (the machine has 2 cores, stress-ng
# takes both).
#
# HEAP_LOAD picks what runs beside the loop on the other core:
#   stress (default) stress-ng --cpu 2: both cores busy, the same load every round.
#   suite            the test suite's heaviest neighbours in CI (the browser package, the
#                    live stack, a sweep, an outage, `rlstudio up`, the shared-host and
#                    trainer-account tests), again and again on one pytest-xdist worker
#                    against the local Postgres and Redis: what ran beside the
#                    distributed tests in the two CI runs where a worker aborted (many
#                    processes starting, Ray heads, a browser, sockets), which stress-ng's
#                    arithmetic is not. Its output goes to <out>/neighbours.log; a failure
#                    there is counted, not fatal (it runs under more load than in CI).
#   distributed      the other distributed test modules (LoRA, the reward-model group, a
#                    worker's failure) again and again in a second pytest, with the same
#                    heap check: two Ray heads and two gloo groups at once, as when
#                    pytest-xdist's two workers run two distributed modules side by side
#                    in CI; no loop before ran two groups at once. Each failed pass's
#                    output is kept in <out>/neighbour-<n>.log; a failure there is counted
#                    and shown, not fatal. Their quarantine or sanitizer reports are kept
#                    in <out>/neighbour-reports; a write after free found there is shown.
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
# One folder an invocation: a later loop's round 1 must not overwrite this one's failed log.
out=var/heap-checks/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
check=${HEAP_CHECK:-debug}
case $check in
debug)
    # On glibc 2.34+ MALLOC_CHECK_ does nothing without the debug library preloaded;
    # MALLOC_PERTURB_ fills freed and new blocks, so a use after free reads garbage.
    debug_lib=$(ls /usr/lib/*-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -1)
    if [ -z "$debug_lib" ]; then
        echo "needs glibc's libc_malloc_debug.so.0" >&2
        exit 2
    fi
    check_env=(LD_PRELOAD="$debug_lib" MALLOC_CHECK_=3 MALLOC_PERTURB_=165)
    ;;
quarantine)
    gcc -O2 -Wall -Werror -shared -fPIC -o var/free_quarantine.so bench/free_quarantine.c -lpthread || exit 2
    reports=$out/quarantine  # this round's reports, one file a process
    rm -rf "$reports" && mkdir -p "$reports"
    check_env=(LD_PRELOAD="$PWD/var/free_quarantine.so" FREE_QUARANTINE_LOG="$PWD/$reports")
    ;;
asan)
    asan_lib=$(gcc -print-file-name=libasan.so)
    if [ ! -e "$asan_lib" ]; then
        echo "needs gcc's libasan (apt-get install gcc)" >&2
        exit 2
    fi
    reports=$out/asan
    rm -rf "$reports" && mkdir -p "$reports"
    # Leak checks off (a Python process leaks by design at exit); allocator mismatches
    # (malloc freed by delete) off: harmless with glibc and not what this hunts. A report
    # aborts its process (abort_on_error) so the round fails and leaves a core.
    check_env=(LD_PRELOAD="$asan_lib" ASAN_OPTIONS="detect_leaks=0:alloc_dealloc_mismatch=0:new_delete_type_mismatch=0:detect_odr_violation=0:halt_on_error=1:abort_on_error=1:quarantine_size_mb=1024:malloc_context_size=40:log_path=$PWD/$reports/asan:allow_user_segv_handler=1")
    ;;
plain)
    check_env=()
    ;;
*)
    echo "HEAP_CHECK is debug, quarantine, asan or plain, not $check" >&2
    exit 2
    ;;
esac
ulimit -c unlimited 2>/dev/null || echo "core dumps stay off: ulimit -c refused" >&2
cores=${CORE_DIR:-/tmp/cores}
load_kind=${HEAP_LOAD:-stress}
case $load_kind in
stress)
    if ! command -v stress-ng >/dev/null; then
        echo "needs stress-ng (apt-get install stress-ng)" >&2
        exit 2
    fi
    stress-ng --cpu 2 --timeout $((rounds * 600))s --quiet &
    ;;
suite)
    neighbours=(tests/browser tests/runs/live tests/runs/test_sweeps_on_ray.py
        tests/telemetry/test_nothing_lost.py tests/platform/test_up.py
        tests/security/test_shared_host.py tests/runs/test_trainer_account_on_ray.py)
    # setsid: the whole loop (pytest, its Ray heads, Celery, chromium) is one process
    # group, stopped together at the end.
    setsid bash -c '
        eval "$(.venv/bin/python -m studio.platform.suite_services)"
        while true; do
            .venv/bin/python -m pytest -q -p no:cacheprovider -p tests.suite_workers \
                -n 1 "$@" || echo "neighbours: a failure ($(date +%T))"
        done' neighbours "${neighbours[@]}" > "$out/neighbours.log" 2>&1 &
    ;;
distributed)
    neighbours=(tests/distributed/test_lora.py tests/distributed/test_reward_model_group.py
        tests/distributed/test_worker_failure.py)
    # The neighbours' quarantine or sanitizer reports go to a folder of their own: each
    # process opens its report once, as it starts, and the rounds' folder is emptied
    # after every round, which would drop a long-lived neighbour's report.
    neighbour_env=("${check_env[@]}")
    if [ -n "${reports:-}" ]; then
        neighbour_reports=$out/neighbour-reports
        mkdir -p "$neighbour_reports"
        neighbour_env=("${check_env[@]//$PWD\/$reports/$PWD/$neighbour_reports}")
    fi
    setsid env "${neighbour_env[@]}" bash -c '
        out=$1; shift
        pass=0
        while true; do
            pass=$((pass + 1))
            if .venv/bin/python -m pytest -q -p no:cacheprovider "$@" > "$out/neighbour-$pass.log" 2>&1
            then echo "neighbours: pass $pass passed ($(date +%T))"; rm -f "$out/neighbour-$pass.log"
            else echo "neighbours: a failure, pass $pass ($(date +%T)): $out/neighbour-$pass.log"
            fi
        done' neighbours "$out" "${neighbours[@]}" > "$out/neighbours.log" 2>&1 &
    ;;
*)
    echo "HEAP_LOAD is stress, suite or distributed, not $load_kind" >&2
    exit 2
    ;;
esac
load_pid=$!
trap 'kill -- -$load_pid 2>/dev/null || kill $load_pid 2>/dev/null' EXIT
# Sets checked and mib: the freed blocks (and their MiB) the quarantine checked in the
# processes that reported to folder $1, each process's last count.
quarantine_counts() {
    checked=0 mib=0
    local log n m
    for log in "$1"/*.log; do
        n=$(grep -o "[0-9]* blocks checked" "$log" 2>/dev/null | tail -1 | cut -d' ' -f1)
        m=$(grep -o "checked[a-z ]* ([0-9]* MiB)" "$log" 2>/dev/null | tail -1 | tr -dc 0-9)
        checked=$((checked + ${n:-0})) mib=$((mib + ${m:-0}))
    done
}
passed=0
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
    t0=$(date +%s)
    touch "$out/.round-start"
    env "${check_env[@]}" \
        .venv/bin/python -m pytest -q -p no:cacheprovider -x "${tests[@]}" \
        > "$out/round-$round.log" 2>&1
    status=$?
    if [ "$check" = quarantine ]; then
        quarantine_counts "$reports"
        echo "round $round: quarantine checked $checked freed blocks ($mib MiB) in $(ls "$reports" | wc -l) processes"
        if grep -q "written after free: bytes" "$reports"/*.log 2>/dev/null; then
            mv "$reports" "$out/quarantine-round-$round"
            echo "round $round: a block was written after free: $out/quarantine-round-$round"
            status=1
        fi
        rm -rf "$reports" && mkdir -p "$reports"
    fi
    if [ "$check" = asan ]; then
        if grep -lq "ERROR: AddressSanitizer" "$reports"/* 2>/dev/null; then
            mv "$reports" "$out/asan-round-$round"
            echo "round $round: the address sanitizer reported: $out/asan-round-$round"
            grep -h "ERROR: AddressSanitizer" "$out/asan-round-$round"/* | head -3
            status=1
        fi
        rm -rf "$reports" && mkdir -p "$reports"
    fi
    if [ -n "${neighbour_reports:-}" ] && [ -z "${neighbour_hit:-}" ]; then
        neighbour_hit=$(grep -lE "written after free: bytes|ERROR: AddressSanitizer" \
            "$neighbour_reports"/* 2>/dev/null | head -3)
        [ -z "$neighbour_hit" ] || echo "round $round: a neighbour's process reported: $neighbour_hit"
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    new_cores=$(find "$cores" -maxdepth 1 -type f -name 'core*' -newer "$out/.round-start" 2>/dev/null)
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
if [ "$load_kind" = distributed ]; then
    load_said="the other distributed modules in a second pytest ($(grep -c 'passed (' "$out/neighbours.log") passes passed, $(grep -c 'a failure' "$out/neighbours.log") failed; $out/neighbours.log)"
    if [ "$check" = quarantine ]; then
        quarantine_counts "$neighbour_reports"
        echo "neighbours: quarantine checked $checked freed blocks ($mib MiB) in $(ls "$neighbour_reports" | wc -l) processes; reports that found a write: ${neighbour_hit:-none}"
    fi
    grep 'a failure' "$out/neighbours.log"
elif [ "$load_kind" = suite ]; then
    load_said="the suite's neighbours ($(grep -c '^neighbours: a failure' "$out/neighbours.log") failed passes, $(grep -cE ' in [0-9.]+s( \([0-9:]+\))?$' "$out/neighbours.log") passes in all; $out/neighbours.log)"
else
    load_said="stress-ng --cpu 2"
fi
echo "$passed of $rounds rounds passed in $(( $(date +%s) - started )) s under $load_said ($check heap check)"
[ "$passed" -eq "$rounds" ]
