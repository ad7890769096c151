# The two commands of the quickstart: `make up` and `make test`.
# Both install what they need on a fresh machine (virtualenv, CPU torch first,
# the project, npm packages, the frontend build).

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
FRONTEND_STAMP := frontend/dist/.built
# Playwright drives Debian's chromium; it must never fetch a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: up test install frontend browser lint typecheck importlint pytest frontend-test clean-var help

help:
	@echo "make up    - install, build, migrate, seed a demo and start the whole studio"
	@echo "make test  - ruff, mypy, import contracts, pytest and the frontend tests"

# The virtualenv is made from the system's python3.11 where there is one: a
# studio started as root runs its trainers as an unprivileged user, who must be
# able to execute the interpreter (a pyenv build under /root is not reachable).
PYTHON ?= $(shell test -x /usr/bin/python3.11 && echo /usr/bin/python3.11 || echo python3)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# torch==2.13.0 first on machines without CUDA, so the range in pyproject is
# already satisfied and pip never pulls the multi-GB CUDA wheels.
$(STAMP): pyproject.toml | $(PY)
	@if ! command -v nvidia-smi >/dev/null 2>&1; then \
		$(PIP) install -q "torch==2.13.0" 2>&1 | grep -v "is ignored" || true; \
	fi
	$(PIP) install -q -e ".[dev]" 2>&1 | grep -vE "is ignored|BuildBackendWarning|^\s*$$" || true
	$(PY) -c "import torch, django, trainer.config" 
	touch $(STAMP)

install: $(STAMP)

frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error

# Rebuilt only when a source file is newer than the last build.
$(FRONTEND_STAMP): frontend/node_modules/.package-lock.json $(shell find frontend/src frontend/index.html frontend/vite.config.ts -type f 2>/dev/null)
	cd frontend && npm run build --silent
	touch $(FRONTEND_STAMP)

frontend: $(FRONTEND_STAMP)

# The browser tests drive Debian's chromium through Playwright; no tool may
# download a browser of its own. Installed with apt when missing (needs root).
browser:
	@if [ ! -x /usr/lib/chromium/chromium ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# The Python install and the frontend's npm install and build share nothing: side by side
# on a fresh clone, 97-115 s instead of 120-139 s (two pairs, each order once; 2-core VM,
# 2026-11-29).
up:
	@$(MAKE) --no-print-directory -j2 install frontend
	$(VENV)/bin/rlstudio up

test:
	@$(MAKE) --no-print-directory -j2 install frontend browser
	bash scripts/test.sh

clean-var:
	rm -rf var
