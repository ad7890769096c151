"""Starting a playground model server as a Ray job (studio.playground.servers decides
when; this is where the studio's side reaches Ray). Idempotent: Ray refuses a second job
under one submission id, and a record that moved on to a newer server submits nothing."""

from __future__ import annotations

import logging

from celery import Task
from django.conf import settings

from studio.playground import servers
from studio.runs.handoff import HandoffRefused
from studio.runs.jobs import RayRejected, RayUnavailable
from workers.celery_app import app
from workers.delivery import over_delivery_cap
from workers.ray_jobs import RayJobsClient

logger = logging.getLogger(__name__)


@app.task(
    bind=True,
    name=servers.START_TASK,
    ignore_result=True,
    soft_time_limit=45,
    time_limit=60,
    autoretry_for=(RayUnavailable,),
    max_retries=3,
    retry_backoff=2,
    retry_jitter=True,
)
def start_playground_server(self: Task, server_id: str, submission_id: str, stale: str) -> str:
    if over_delivery_cap(self):
        return "dropped"
    if not settings.RAY_ADDRESS:
        servers.mark_failed(server_id, "The studio has no Ray cluster (RAY_ADDRESS is not set).")
        return "ray-not-configured"
    jobs = RayJobsClient.from_settings()
    if stale:
        jobs.stop(stale)  # the server it replaces went silent; don't leave it holding a CPU
    handoff = servers.server_handoff(server_id, submission_id)
    spec = servers.job_spec(server_id, submission_id, handoff)
    if spec is None:
        return "superseded"
    try:
        handoff.deliver()  # before Ray has the job: the server may start at once
    except HandoffRefused as exc:
        servers.mark_failed(server_id, str(exc))
        return "rejected"
    try:
        created = jobs.submit(spec)
    except RayRejected as exc:
        handoff.withdraw()
        servers.mark_failed(server_id, f"Ray did not accept the model server: {exc}")
        return "rejected"
    logger.info("playground server %s: %s %s", server_id, submission_id, created)
    return "submitted" if created else "already-submitted"
