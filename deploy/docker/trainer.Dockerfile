# syntax=docker/dockerfile:1.7
# The trainer image for Ray nodes (head and GPU workers; KubeRay runs `ray start` in it):
# CUDA 12.8 runtime, Python 3.12, Ray, torch and the `vllm` extra. Build from the repo root:
#   docker build -f deploy/docker/trainer.Dockerfile -t rlstudio-trainer:0.1.0 .
# The studio submits `python -m trainer run` as a Ray job whose entrypoint runs here
# (RLSTUDIO_TRAINER_PYTHON=/opt/venv/bin/python, RLSTUDIO_TRAINER_WORKDIR=/app).

FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04 AS trainer
ENV DEBIAN_FRONTEND=noninteractive PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Python 3.12 from Ubuntu 24.04; the venv keeps pip away from the system packages.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3.12 python3.12-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 ray \
    && useradd --system --uid 10001 --gid ray --create-home --home-dir /home/ray ray \
    && python3.12 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY pyproject.toml README.md ./
COPY studio/ studio/
COPY trainer/ trainer/
COPY workers/ workers/
# Ray pinned to the RayCluster's rayVersion. vllm pins the CUDA build of torch it was
# compiled against; installing the extra first lets pip pick that torch (inside the
# project's range) rather than a second one.
# The trainer's studio reporter spools records to var/spool under the job's working
# directory (/app) before uploading them: writable by the ray user.
RUN pip install ".[vllm]" "ray[default]==2.60.0" && pip uninstall -y rlstudio \
    && mkdir -p /app/var && chown 10001:10001 /app/var
# Every `ray` command here, KubeRay's `ray start` included, through our ray_start (#46).
COPY --chmod=755 deploy/docker/ray /opt/venv/bin/ray
ENV PYTHONPATH=/app \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    RLSTUDIO_CHECKPOINT_ROOT=/checkpoints
USER 10001:10001
CMD ["ray", "start", "--head", "--block", "--dashboard-host=0.0.0.0", "--disable-usage-stats"]
