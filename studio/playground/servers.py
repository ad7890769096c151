"""Model servers: started on demand as Ray jobs, fed from Redis, released when idle.

One server per (project, model or checkpoint). `ensure_server` starts one when none is
alive: it writes the record (state `starting`, a new submission id, who started it) under
a short lock, so two messages sent at once start one job, and asks a worker to submit the
job (workers.playground; the studio never imports Ray). It starts none, and says why,
when the model can't be loaded (its folder or files are gone) or one more running job
would exceed its project's or its user's cap: a live server counts as a running job, as
runs and evaluations do (studio.playground.liveness, studio.runs.fair_share).

The job's entrypoint reserves RLSTUDIO_PLAYGROUND_CPUS, a fraction of a CPU, so a warm
model leaves the cluster's CPUs to runs. Like a trainer, the job carries only the path
of a file holding a one-time secret (an HMAC of its submission id), written in the
server's own folder for the trainer account alone (studio.runs.handoff) and redeemed by
`bootstrap` for its token and the folder the resolver finds for its target
(studio.playground.targets); everything after goes over HTTP with that token
(studio/api/playground/servers.py).

A server is alive while starting (until RLSTUDIO_PLAYGROUND_START_TIMEOUT_S) and while
it keeps polling; one that went silent is replaced by the next message, and the old job
is stopped. One that failed to load answers every message with why, for
liveness.FAILED_HOLD_S, before the next message tries again.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import shlex
import time
from contextlib import suppress
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from redis.exceptions import LockError

from studio.playground import store
from studio.playground.liveness import POLL_SECONDS, alive
from studio.playground.targets import (
    Target,
    TargetError,
    find_target,
    parse_server_id,
    servable_folder,
)
from studio.runs.fair_share import cap_reached
from studio.runs.folders import PLAYGROUND_FOLDER
from studio.runs.handoff import SecretHandoff
from studio.runs.jobs import JobSpec
from studio.runs.queue import queue_limits, running_jobs

logger = logging.getLogger(__name__)

CHUNK_INTERVAL_S = 0.05  # at most one chunk post per this many seconds (per reply)
START_LOCK_S = 10.0
START_TASK = "workers.start_playground_server"
TOKEN_PREFIX = "rlp_"


def submission_prefix() -> str:
    return f"{settings.RLSTUDIO_RAY_JOB_PREFIX}-playground-"


def bootstrap_secret(submission_id: str) -> str:
    message = f"rlstudio-playground:{submission_id}".encode()
    return "rlb_" + hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def server_handoff(server_id: str, submission_id: str) -> SecretHandoff:
    """The job's secret and its file, in the server's own folder under the checkpoint
    root (the storage the Ray nodes share with the studio, as the model folders are)."""
    return SecretHandoff(
        folders=(PLAYGROUND_FOLDER, server_id),
        name=f".bootstrap-{submission_id}",
        secret=bootstrap_secret(submission_id),
    )


def _send_start(server_id: str, submission_id: str, stale: str) -> None:
    from kombu.exceptions import OperationalError

    from workers.celery_app import app  # the broker settings live with the app

    try:
        app.send_task(START_TASK, args=[server_id, submission_id, stale], expires=60, retry=False)
    except OperationalError as exc:  # the record lapses after the start timeout; retried then
        logger.warning("playground server %s not started: %s", server_id, exc)


class ServerRefused(Exception):
    """No model server may start for the target now; the message says why."""


def start_refusal(target: Target, user_id: int) -> str:
    """Why `user_id` may not start a server for `target` now; empty when they may."""
    cap = cap_reached(queue_limits(), running_jobs(), target.project_id, user_id, "your")
    if not cap:
        return ""
    idle_minutes = settings.RLSTUDIO_PLAYGROUND_IDLE_SECONDS / 60
    return (
        f"No model server was started for {target.label}: one more running job would "
        f"exceed {cap}. Runs, evaluations and playground model servers all count; an idle "
        f"model server stops after {idle_minutes:g} minutes."
    )


def ensure_server(target: Target, user_id: int) -> dict[str, str]:
    """The target's server record, starting a server when none is alive. Raises
    ServerRefused, with nothing submitted, when the model can't be loaded or a cap on
    running jobs is reached."""
    server_id = target.server_id
    record = store.read_server(server_id)
    if alive(record):
        return record
    try:
        servable_folder(target)  # a server for a model that is gone would only fail
    except TargetError as exc:
        raise ServerRefused(str(exc)) from None
    # One start at a time: two messages start one server, and two starts can't both
    # pass a cap.
    lock = store.client().lock(
        store.start_lock_key(), timeout=START_LOCK_S, blocking_timeout=START_LOCK_S
    )
    if not lock.acquire():
        raise ServerRefused("The playground is busy starting model servers; try again.")
    try:
        record = store.read_server(server_id)
        if alive(record):
            return record  # started by another message meanwhile
        refusal = start_refusal(target, user_id)
        if refusal:
            raise ServerRefused(refusal)
        stale = record.get("submission_id", "")
        submission_id = f"{submission_prefix()}{server_id}-{secrets.token_hex(3)}"
        now = time.time()
        store.client().delete(store.server_key(server_id))  # a fresh record: no old token
        store.write_server(
            server_id,
            state="starting",
            submission_id=submission_id,
            user=user_id,
            label=target.label,
            started_at=now,
            seen_at=now,
            message="",
        )
        store.remember_server(server_id)
    finally:
        with suppress(LockError):  # it lapsed (a very slow start): nothing to release
            lock.release()
    transaction.on_commit(lambda: _send_start(server_id, submission_id, stale))
    return store.read_server(server_id)


def job_spec(server_id: str, submission_id: str, handoff: SecretHandoff) -> JobSpec | None:
    """The Ray job of the server's current record; None when the record moved on."""
    if store.read_server(server_id).get("submission_id") != submission_id:
        return None
    python = shlex.quote(settings.RLSTUDIO_TRAINER_PYTHON)
    workdir = shlex.quote(str(settings.RLSTUDIO_TRAINER_WORKDIR))
    env = {
        "RLSTUDIO_URL": settings.RLSTUDIO_URL.rstrip("/"),
        "RLSTUDIO_PLAYGROUND_SERVER": server_id,
        **handoff.job_env(),  # where the secret's file is
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": str(settings.RLSTUDIO_PLAYGROUND_THREADS),
    }
    parsed = parse_server_id(server_id)
    return JobSpec(
        submission_id=submission_id,
        entrypoint=f"cd {workdir} && exec {python} -m trainer.playground",
        runtime_env={"env_vars": env},
        num_cpus=settings.RLSTUDIO_PLAYGROUND_CPUS,
        num_gpus=0.0,
        memory_bytes=0,
        metadata={"rlstudio_playground": server_id, "rlstudio_project": str(parsed and parsed[0])},
    )


def mark_failed(server_id: str, message: str) -> None:
    """The server can't serve: say why to every message waiting for it."""
    store.write_server(server_id, state="failed", message=message[:1000], seen_at=time.time())
    for request in store.drain(server_id):
        fail_reply(request["exchange"], request["reply"], f"The model could not load: {message}")


def fail_reply(exchange_id: str, reply_id: str, message: str) -> None:
    store.emit(exchange_id, "error", {"reply": reply_id, "message": message})
    if store.finish_reply(exchange_id):
        store.emit(exchange_id, "end", {})


class BootstrapRefused(Exception):
    """Not this server's secret, or used already."""


def bootstrap(server_id: str, secret: str) -> dict[str, Any]:
    """Redeem the job's secret, once, for its token, its model folder and its settings."""
    record = store.read_server(server_id)
    submission_id = record.get("submission_id", "")
    parsed = parse_server_id(server_id)
    expected = bootstrap_secret(submission_id) if submission_id else ""
    if parsed is None or not expected or not hmac.compare_digest(secret, expected):
        raise BootstrapRefused("This secret opens no playground server.")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    if not store.set_token_once(server_id, hashlib.sha256(raw.encode()).hexdigest()):
        raise BootstrapRefused("This server's secret was used already.")
    project_id, kind, pk = parsed
    try:
        target = find_target(project_id, kind, pk)
        folder = servable_folder(target)
    except (TargetError, ObjectDoesNotExist) as exc:
        mark_failed(server_id, str(exc))
        raise BootstrapRefused(str(exc)) from None
    redeemed = time.time()  # kept: when the secret stopped being worth anything
    store.write_server(server_id, state="loading", seen_at=redeemed, bootstrapped_at=redeemed)
    return {
        "token": raw,
        "model_path": folder,
        "label": target.label,
        "idle_seconds": settings.RLSTUDIO_PLAYGROUND_IDLE_SECONDS,
        "poll_seconds": POLL_SECONDS,
        "chunk_interval_s": CHUNK_INTERVAL_S,
        "threads": settings.RLSTUDIO_PLAYGROUND_THREADS,
    }


def authenticate(server_id: str, raw: str) -> dict[str, str] | None:
    """The server's record when `raw` is its token; None otherwise."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    record = store.read_server(server_id)
    stored = record.get("token_hash", "")
    given = hashlib.sha256(raw.encode()).hexdigest()
    return record if stored and hmac.compare_digest(stored, given) else None
