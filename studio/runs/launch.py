"""Launching a run as a Ray job: claim it, then submit it, idempotently.

The order is what makes duplicates impossible:

1. claim: QUEUED -> STARTING by conditional update and the attempt row, in one
   transaction. Two workers (a redelivered task, a double enqueue) can't both win.
2. submit with `submission_id = <prefix>-run-<id>-a<n>`: Ray refuses a second job under
   an id it already has, so submitting an attempt again is harmless; we read the
   refusal as "already launched".
3. record: `ray_status` set on the attempt. An attempt still without one may or may not
   have reached Ray (the worker died in between); it is submitted again under the same
   id, by a redelivered `launch_run` at once or, after a grace period, by a `launch_run`
   that `reconcile_runs` sends. Every submission goes through `launch`.

A worker dying at any point therefore leads to exactly one Ray job per attempt.
"""

from __future__ import annotations

import copy
import logging
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from studio.model_registry.locations import ModelUnavailable
from studio.references.launch_paths import fill_launch_paths
from studio.references.registry import Launch, UnresolvedReference
from studio.runs import lifecycle, startup
from studio.runs.bootstrap import attempt_handoff
from studio.runs.checkpoints import CheckpointUnavailable
from studio.runs.configs import INPROCESS_REFUSED
from studio.runs.handoff import HandoffRefused, SecretHandoff
from studio.runs.jobs import JobSpec, RayJobs, RayRejected, RayUnavailable
from studio.runs.models import Checkpoint, Run, RunAttempt, RunStatus
from studio.runs.provenance import relaunch_refusal
from trainer.config.schema import RunConfig
from trainer.distributed import uses_distributed

logger = logging.getLogger(__name__)

S = RunStatus
Failpoint = Callable[[str], None]
LaunchOutcome = Literal["submitted", "already-submitted", "not-queued", "not-starting", "rejected"]


def _no_failpoint(point: str) -> None:
    return None


class LaunchRefused(Exception):
    """The run can't be turned into a job (its reward code is too large, ...)."""


# --- submission ids ---------------------------------------------------------------------
def submission_id(run_id: int, attempt: int) -> str:
    return f"{settings.RLSTUDIO_RAY_JOB_PREFIX}-run-{run_id}-a{attempt}"


def parse_submission_id(value: str) -> tuple[int, int] | None:
    """(run id, attempt number) of one of our submission ids, else None."""
    prefix = re.escape(settings.RLSTUDIO_RAY_JOB_PREFIX)
    match = re.fullmatch(rf"{prefix}-run-(\d+)-a(\d+)", value)
    return (int(match[1]), int(match[2])) if match else None


# --- 1. claim ---------------------------------------------------------------------------
def latest_checkpoint_step(run_id: int) -> int | None:
    """The newest step a trainer of this run registered a checkpoint for."""
    step = Checkpoint.objects.filter(run_id=run_id).aggregate(last=Max("step"))["last"]
    return int(step) if step is not None else None


def claim(run_id: int, dispatched_at: float | None = None) -> RunAttempt | None:
    """QUEUED -> STARTING and a new attempt, atomically; None if the run was not queued
    (someone else claimed it, a user cancelled it). `dispatched_at`: when the queue pass
    that picked the run ran (the attempt's startup timeline, studio.runs.startup)."""
    with transaction.atomic():
        last = RunAttempt.objects.filter(run_id=run_id).aggregate(n=Max("number"))["n"] or 0
        number = last + 1
        if not lifecycle.transition(run_id, {S.QUEUED}, S.STARTING, "submitting to Ray"):
            return None
        return RunAttempt.objects.create(
            run_id=run_id,
            number=number,
            submission_id=submission_id(run_id, number),
            resume_from_step=latest_checkpoint_step(run_id) if number > 1 else None,
            startup=startup.claimed_phases(run_id, number, dispatched_at),
        )


# --- 2. the job -------------------------------------------------------------------------
def dataset_url(run_id: int, split: str) -> str:
    """The studio's URL of a run's rows: the only URL a studio-launched trainer reads."""
    return f"{settings.RLSTUDIO_URL.rstrip('/')}/api/ingest/runs/{run_id}/dataset?split={split}"


@dataclass(frozen=True)
class TrainerLaunch:
    """What a launched trainer receives: its config, and the reward code its reward
    reference names (None: a built-in reward)."""

    config: dict[str, Any]
    reward_code: str | None


def trainer_launch(run: Run, attempt: RunAttempt) -> TrainerLaunch:
    """The run's stored config, its references turned into the paths this launch uses,
    and the reward code its stored reward reference names."""
    refusal = relaunch_refusal(run)
    if refusal is not None:
        raise LaunchRefused(refusal)
    tree: dict[str, Any] = copy.deepcopy(run.config)
    launch = Launch(run, dataset_url)
    try:
        fill_launch_paths(launch, tree)
    except (ModelUnavailable, CheckpointUnavailable, UnresolvedReference) as exc:
        raise LaunchRefused(str(exc)) from None
    if attempt.number > 1:
        tree["checkpoint"]["resume"] = "auto"  # a resume continues from the latest
    if tree.get("reward", {}).get("executor") == "inprocess":
        # Stored before runs were validated for it: refused, never run unsandboxed.
        raise LaunchRefused(INPROCESS_REFUSED)
    return TrainerLaunch(tree, launch.reward_code)


def trainer_config(run: Run, attempt: RunAttempt) -> dict[str, Any]:
    """The run's stored config, its references turned into the paths this launch uses."""
    return trainer_launch(run, attempt).config


def entrypoint() -> str:
    """The job's shell command: the trainer fetches its config, token and reward code from
    the studio with the job's one-time secret, which it reads from a file only it may read
    (studio.runs.bootstrap, studio.runs.handoff), so neither the command line nor the
    job's environment holds anything that opens the run.

    `trainer.warm run` is `trainer run` in a process forked from the node's warm runtime,
    which has imported torch and the trainer already (or, when none answers yet, started
    cold in this process as before): the job, its environment and its secret file are
    the same either way (trainer/warm/__init__.py)."""
    python = shlex.quote(settings.RLSTUDIO_TRAINER_PYTHON)
    workdir = shlex.quote(str(settings.RLSTUDIO_TRAINER_WORKDIR))
    return f"cd {workdir} && exec {python} -m trainer.warm run --from-studio"


def entrypoint_resources(run: Run) -> tuple[float, float, int]:
    """(CPUs, GPUs, memory bytes) Ray reserves for the job's entrypoint process.

    A single-process run trains inside the entrypoint, so it reserves the whole request. A
    distributed run (several workers, or GPUs) trains in Ray actors that reserve the
    request through their own placement group; the entrypoint is only their controller,
    so it takes one CPU. Reserving the request twice would leave the workers unplaceable
    on a cluster sized for the run. The queue still counts the whole request either way.
    """
    if uses_distributed(RunConfig.model_validate(run.config)):
        return 1.0, 0.0, 0
    resources = run.resources
    return (
        float(resources.get("cpus", 0.0)),
        float(resources.get("gpus", 0.0)),
        int(float(resources.get("memory_gb", 0.0)) * 1024**3),
    )


def job_spec(run: Run, attempt: RunAttempt, handoff: SecretHandoff) -> JobSpec:
    trainer_config(run, attempt)  # refused now, not when the trainer asks for it
    env = {
        "RLSTUDIO_URL": settings.RLSTUDIO_URL.rstrip("/"),
        "RLSTUDIO_RUN_ID": str(run.pk),
        "RLSTUDIO_ATTEMPT": str(attempt.number),
        **handoff.job_env(),  # where the secret's file is
        "PYTHONUNBUFFERED": "1",  # the job log ends with the trainer's last lines
    }
    cpus, gpus, memory_bytes = entrypoint_resources(run)
    return JobSpec(
        submission_id=attempt.submission_id,
        entrypoint=entrypoint(),
        runtime_env={"env_vars": env},
        num_cpus=cpus,
        num_gpus=gpus,
        memory_bytes=memory_bytes,
        metadata={
            "rlstudio_run_id": str(run.pk),
            "rlstudio_attempt": str(attempt.number),
            "rlstudio_project": run.project.slug,
        },
    )


# --- 3. submit --------------------------------------------------------------------------
def fail_launch(run_id: int, attempt: RunAttempt, message: str) -> None:
    RunAttempt.objects.filter(pk=attempt.pk).update(exit_message=message[:4000])
    if not lifecycle.transition(run_id, {S.STARTING}, S.FAILED, message[:500], last_error=message):
        # Cancelled meanwhile: the job never ran, so the cancel is complete.
        lifecycle.transition(run_id, {S.CANCELLING}, S.CANCELLED, "cancelled before launch")


def submit_attempt(
    attempt: RunAttempt, jobs: RayJobs, failpoint: Failpoint = _no_failpoint
) -> LaunchOutcome:
    """Submit `attempt` under its own submission id (again, if need be: Ray refuses a
    duplicate). Raises RayUnavailable for the caller to retry."""
    run = Run.objects.select_related("project", "dataset_version", "reward_version").get(
        pk=attempt.run_id
    )
    if run.status != S.STARTING:
        return "not-starting"  # cancelled meanwhile: nothing to submit
    handoff = attempt_handoff(attempt)
    try:
        spec = job_spec(run, attempt, handoff)
        handoff.deliver()  # before Ray has the job: its trainer may start at once
    except LaunchRefused as exc:
        fail_launch(run.pk, attempt, f"Ray did not accept the job: {exc}")
        return "rejected"
    except HandoffRefused as exc:
        fail_launch(run.pk, attempt, str(exc))
        return "rejected"
    failpoint("token-issued")
    try:
        created = jobs.submit(spec)
    except RayRejected as exc:
        handoff.withdraw()
        fail_launch(run.pk, attempt, f"Ray did not accept the job: {exc}")
        return "rejected"
    except RayUnavailable as exc:
        RunAttempt.objects.filter(pk=attempt.pk, ray_status="").update(
            exit_message=f"submitting to Ray failed (will retry): {exc}"[:4000]
        )
        raise
    startup.record(attempt.pk, {"submitted": time.time()})  # a resubmission keeps the first
    failpoint("submitted")
    RunAttempt.objects.filter(pk=attempt.pk, ray_status="").update(
        ray_status="PENDING", exit_message=""
    )
    Run.objects.filter(pk=run.pk, status=S.STARTING).update(
        status_reason=f"submitted to Ray as {attempt.submission_id}; waiting for it to start"
    )
    # A cancel that landed while we submitted found no job to stop: stop it now.
    if Run.objects.filter(pk=run.pk, status__in=[S.CANCELLING, S.CANCELLED]).exists():
        jobs.stop(attempt.submission_id)
    failpoint("recorded")
    logger.info("run %s: %s %s", run.pk, attempt.submission_id, "new" if created else "known")
    return "submitted" if created else "already-submitted"


def unconfirmed_attempt(run_id: int) -> RunAttempt | None:
    """The latest attempt of a STARTING run that may not have reached Ray yet."""
    attempt = RunAttempt.objects.filter(run_id=run_id).order_by("-number").first()
    if attempt is None or attempt.ray_status:
        return None
    if not Run.objects.filter(pk=run_id, status=S.STARTING).exists():
        return None
    return attempt


def launch(
    run_id: int,
    jobs: RayJobs,
    failpoint: Failpoint = _no_failpoint,
    dispatched_at: float | None = None,
) -> LaunchOutcome:
    """Start a queued run; on a redelivery, finish the submission the dead worker began.
    `dispatched_at`: when the queue pass that picked it ran."""
    failpoint("start")
    attempt = claim(run_id, dispatched_at)
    if attempt is None:
        pending = unconfirmed_attempt(run_id)
        return submit_attempt(pending, jobs, failpoint) if pending else "not-queued"
    failpoint("claimed")
    return submit_attempt(attempt, jobs, failpoint)
