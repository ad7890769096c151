# syntax=docker/dockerfile:1.7
# The studio image: web (uvicorn), Celery worker and Celery beat run from it with
# different commands (deploy/compose.yaml, deploy/k8s/base). Build from the repo root:
#   docker build -f deploy/docker/studio.Dockerfile -t rlstudio-studio:0.1.0 .
# No secret is baked in: every setting comes from the environment at run time.

# --- 1. the frontend, built with the locked npm packages -------------------------------
FROM node:22.12.0-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
RUN npm run build

# --- 2. the Python dependencies in a venv (CPU torch: the studio never trains) ----------
FROM python:3.11.11-slim-bookworm AS python-deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# CPU wheels first, so the range in pyproject.toml is met and no CUDA wheel is pulled
# (test-runs sample from the small demo model on CPU).
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"
WORKDIR /src
COPY pyproject.toml README.md ./
COPY studio/ studio/
COPY trainer/ trainer/
COPY workers/ workers/
# Ray pinned to the cluster's version (the RayCluster's rayVersion). Dependencies
# only: the code runs from /app (PYTHONPATH), where studio.paths finds frontend/dist
# beside it.
RUN pip install . "ray[default]==2.60.0" && pip uninstall -y rlstudio

# --- 3. the runtime: no compilers, no node, a non-root user ------------------------------
# /var/lib/rlstudio/media exists and is the user's, so an empty named volume mounted
# there (compose) starts with that ownership.
FROM python:3.11.11-slim-bookworm AS studio
RUN groupadd --system --gid 10001 rlstudio \
    && useradd --system --uid 10001 --gid rlstudio --home-dir /app --shell /usr/sbin/nologin rlstudio \
    && mkdir -p /var/lib/rlstudio/media /app \
    && chown -R rlstudio:rlstudio /var/lib/rlstudio
COPY --from=python-deps /opt/venv /opt/venv
WORKDIR /app
COPY manage.py ./
COPY studio/ studio/
COPY trainer/ trainer/
COPY workers/ workers/
COPY --from=frontend /src/frontend/dist frontend/dist
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    RLSTUDIO_ENV=production \
    RLSTUDIO_VAR_DIR=/var/lib/rlstudio \
    MEDIA_ROOT=/var/lib/rlstudio/media \
    STATIC_ROOT=/app/staticfiles
# Static files are collected at build time (development mode: a throwaway key in /tmp),
# so a web container starts without writing to its image.
RUN RLSTUDIO_ENV=development RLSTUDIO_VAR_DIR=/tmp/build-var \
    python -m django collectstatic --noinput --settings=studio.settings \
    && rm -rf /tmp/build-var
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]
CMD ["uvicorn", "studio.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers", "--forwarded-allow-ips", "*", "--timeout-graceful-shutdown", "20"]
