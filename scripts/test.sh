#!/usr/bin/env bash
# `make test`: static checks, then the Python and frontend suites.
# Uses DATABASE_URL / REDIS_URL when set; otherwise the machine's local
# Postgres and Redis, starting them (or embedded ones) when they are not up.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
started=$(date +%s)

eval "$(python -m studio.platform.suite_services)"

# The demo models the tests train on take minutes of warm-start training on a fresh
# checkout: build them (tests/assets.py, cached) beside the static checks.
# One math thread: beside mypy and pytest's workers, two OpenMP threads stall at every
# barrier. With one core busy elsewhere the build took 6 min 17 s on two threads and
# 2 min 31 s on one, writing the same bytes (sha256 of every weight and data file).
mkdir -p var
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m tests.assets > var/test-assets.log 2>&1 &
assets=$!
trap 'kill $assets ${mypy_job:-} 2>/dev/null || true' EXIT

phase() { echo "== $1 ($(( $(date +%s) - started )) s)"; }

# mypy on a clean checkout takes about a minute of one core: it runs beside the other
# checks and pytest's start (collection, test databases), and its report is printed (and
# fails the run) after pytest. Waiting for it before pytest cost 45 s of a CI run.
mypy studio trainer workers > var/mypy.log 2>&1 &
mypy_job=$!
phase "ruff";          ruff check .
phase "ruff format";   ruff format --check .
phase "import-linter"; lint-imports --no-cache
phase "eslint";        (cd frontend && npm run lint --silent)
phase "frontend";      (cd frontend && npm test --silent)
# Two workers: the suite spends much of its time waiting on subprocesses (Ray, Celery,
# a browser), so a second worker fills the other core. PYTEST_WORKERS=0 runs it in one.
# The 30 slowest tests are printed: the suite has a 25-minute budget (README).
phase "pytest"
pytest_status=0
python -m pytest -p tests.suite_workers \
    -n "${PYTEST_WORKERS:-2}" --dist loadgroup --durations=30 "$@" || pytest_status=$?
phase "mypy";          wait $mypy_job || { cat var/mypy.log; exit 1; }; cat var/mypy.log
echo "make test finished in $(( $(date +%s) - started )) s"
exit $pytest_status
