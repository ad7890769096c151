#!/usr/bin/env bash
# Close reward sandbox pools mid-batch again and again under a CPU stress load, as root and
# as the trainer account (unprivileged: the sandbox lives in a user namespace there):
# tests/rewards/test_sandbox_close.py, ROUNDS times in a row for each account.
#
#   bench/sandbox_close_loop.sh [ROUNDS] [ACCOUNT]
#
# Defaults: 50 rounds; rlstudio-trainer (created by `rlstudio up` under root). Prints one
# line a round and a summary per account. Run it alone (stress-ng takes both cores).
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-50}
account=${2:-rlstudio-trainer}
command -v stress-ng >/dev/null || { echo "needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
id "$account" >/dev/null 2>&1 || { echo "no account $account" >&2; exit 2; }
home=$(mktemp -d /tmp/rl-close-XXXXXX)
chown "$account" "$home"
stress-ng --cpu 2 --timeout $((rounds * 120))s --quiet &
stress=$!
trap 'kill $stress 2>/dev/null; rm -rf "$home"' EXIT
python=$PWD/.venv/bin/python
failed=0
for who in root "$account"; do
    passed=0
    started=$(date +%s)
    for round in $(seq 1 "$rounds"); do
        t0=$(date +%s)
        args=(-m pytest -q -p no:cacheprovider tests/rewards/test_sandbox_close.py)
        if [ "$who" = root ]; then
            out=$("$python" "${args[@]}" 2>&1)
        else
            out=$(runuser -u "$account" -- env -i PATH=/usr/bin:/bin HOME="$home" \
                SECRET_KEY=sandbox-close-loop RLSTUDIO_VAR_DIR="$home/var" \
                "$python" "${args[@]}" --basetemp="$home/pytest" 2>&1)
        fi
        status=$?
        summary=$(echo "$out" | tail -1)
        if [ $status -eq 0 ] && ! echo "$summary" | grep -q skipped; then
            passed=$((passed + 1))
        else
            echo "$out" | tail -30
        fi
        echo "$who round $round: $summary ($(( $(date +%s) - t0 )) s, load $(cut -d' ' -f1 /proc/loadavg))"
    done
    echo "== $who: $passed of $rounds rounds passed in $(( $(date +%s) - started )) s under stress-ng --cpu 2"
    [ "$passed" -eq "$rounds" ] || failed=1
done
exit $failed
