"""A reward test-run's life: queued, claimed once, ended once.

- `create` stores a queued test-run; `enqueue` sends `workers.test_reward` after commit.
- `take` claims it for one executor with a conditional UPDATE (queued -> running), so a
  redelivered task never runs a test-run twice, and sets its `deadline`.
- `execute` produces the rows (`sources`), scores them (`testrun`), writes progress as it
  goes, and ends the test-run succeeded or failed with a message.
- `fail_stale` fails running test-runs past their deadline (the executor was killed or
  lost) and queued ones no worker took; the beat task `workers.sweep_reward_test_runs`
  calls it every minute and every claim (`take`) calls it first. The API's reads never
  write, so a stale test-run shows as running until the next sweep.

The synchronous endpoint runs small inputs through the same `create` + `take` +
`execute`, inside the request (`run_inline`).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studio.datasets.models import DatasetVersion
from studio.rewards import limits
from studio.rewards.errors import TestRunError
from studio.rewards.models import RewardTestRun, RewardVersion
from studio.rewards.sources import (
    SampledSource,
    rows_from_completions,
    rows_from_model,
    rows_from_references,
)
from studio.rewards.testrun import TrialRow, run_trial
from studio.runs.checkpoints import CheckpointUnavailable, checkpoint_folder
from studio.runs.models import Checkpoint
from trainer.config.sampling import SamplingParams
from trainer.rewards import SandboxUnavailableError

logger = logging.getLogger(__name__)

Status = RewardTestRun.Status
Source = RewardTestRun.Source
Phase = RewardTestRun.Phase
TERMINAL = frozenset({Status.SUCCEEDED, Status.FAILED})
SAMPLED = frozenset({Source.DEMO_MODEL, Source.CHECKPOINT})
TASK_NAME = "workers.test_reward"


# A test-run's sampling is seeded (the API's default seed is 0): a rerun repeats it.
TEST_RUN_SAMPLING = SamplingParams(seed=0)


@dataclass(frozen=True)
class Params:
    """What a test-run was asked to do (stored as `RewardTestRun.params`)."""

    rows: int = 20  # dataset rows (prompts, for sampled sources)
    offset: int = 0
    solution_template: str = "{ground_truth}"  # references only
    timeout_s: float = 2.0  # per reward call
    budget_s: float = 30.0  # for scoring every row
    sampling: SamplingParams = TEST_RUN_SAMPLING
    kwargs: dict[str, Any] = field(default_factory=dict)  # the reward's keyword arguments

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Params:
        return cls(**{**data, "sampling": SamplingParams.from_json(data["sampling"])})


def create(
    version: RewardVersion,
    source: str,
    params: Params,
    user: Any,
    *,
    dataset_version: DatasetVersion | None = None,
    checkpoint: Checkpoint | None = None,
    completions: list[dict[str, Any]] | None = None,
) -> RewardTestRun:
    """A queued test-run; the caller has checked the objects belong to the version's
    project and that the parameters fit together."""
    return RewardTestRun.objects.create(
        version=version,
        source=source,
        params=params.to_json(),
        dataset_version=dataset_version,
        checkpoint=checkpoint,
        completions=completions,
        created_by=user,
    )


def enqueue(test_run_id: int) -> None:
    """Send the task once the row is committed, so the worker can read it."""
    transaction.on_commit(lambda: _send(test_run_id))


def _send(test_run_id: int) -> None:
    from kombu.exceptions import OperationalError

    from workers.celery_app import app  # the broker settings live with the app

    try:
        app.send_task(TASK_NAME, args=[test_run_id])
    except OperationalError as exc:
        logger.warning("reward test-run %s not enqueued: %s", test_run_id, exc)
        fail(test_run_id, "queue_unavailable", f"The task queue is unreachable: {exc}")


@dataclass(frozen=True)
class Claim:
    """The outcome of `take`: the test-run to execute, or why not (and when to look again)."""

    test_run: RewardTestRun | None
    note: str
    retry_in_s: float | None = None  # running elsewhere: look again when it may be stale


def take(test_run_id: int, limit_s: float) -> Claim:
    """Claim a queued test-run for this executor, which promises to end it within
    `limit_s` (its deadline adds `limits.STALE_MARGIN_S`)."""
    now = timezone.now()
    fail_stale(now)
    deadline = now + timedelta(seconds=limit_s + limits.STALE_MARGIN_S)
    claimed = RewardTestRun.objects.filter(pk=test_run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, phase=Phase.READING, started_at=now, deadline=deadline
    )
    if claimed == 1:
        return Claim(_load(test_run_id), "claimed")
    current = RewardTestRun.objects.filter(pk=test_run_id).values("status", "deadline").first()
    if current is None:
        return Claim(None, f"test-run {test_run_id} no longer exists")
    if current["status"] in TERMINAL:
        return Claim(None, f"test-run {test_run_id} already {current['status']}")
    wait = ((current["deadline"] or now) - now).total_seconds() + 1.0
    return Claim(None, f"test-run {test_run_id} is running elsewhere", retry_in_s=max(1.0, wait))


def _load(test_run_id: int) -> RewardTestRun:
    return RewardTestRun.objects.select_related(
        "version__function__project", "dataset_version__dataset", "checkpoint"
    ).get(pk=test_run_id)


def fail(test_run_id: int, code: str, message: str) -> bool:
    """End an unfinished test-run as failed; False when it had already ended."""
    changed = RewardTestRun.objects.filter(
        pk=test_run_id, status__in=[Status.QUEUED, Status.RUNNING]
    ).update(
        status=Status.FAILED,
        phase=Phase.DONE,
        error=message,
        error_code=code,
        finished_at=timezone.now(),
    )
    return changed == 1


def fail_stale(now: Any = None) -> int:
    """Fail every running test-run past its deadline (its executor is gone), and every
    queued one no worker took within `limits.QUEUED_STALE_S` (its message was lost)."""
    now = now or timezone.now()
    lost = RewardTestRun.objects.filter(status=Status.RUNNING, deadline__lt=now).update(
        status=Status.FAILED,
        phase=Phase.DONE,
        error_code="worker_lost",
        error="The test-run stopped without finishing: its worker was killed or lost "
        "(time limit or crash). Start it again.",
        finished_at=now,
    )
    waited = now - timedelta(seconds=limits.QUEUED_STALE_S)
    never = RewardTestRun.objects.filter(status=Status.QUEUED, created_at__lt=waited).update(
        status=Status.FAILED,
        phase=Phase.DONE,
        error_code="not_started",
        error=f"No worker started the test-run within {limits.QUEUED_STALE_S / 60:g} "
        "minutes; check that a Celery worker is running, then start it again.",
        finished_at=now,
    )
    return lost + never


def run_inline(test_run: RewardTestRun) -> RewardTestRun:
    """Claim and execute a test-run in this process (the synchronous endpoint)."""
    claim = take(test_run.pk, limits.inline_limit_s())
    if claim.test_run is None:
        raise RuntimeError(f"a new test-run could not be claimed: {claim.note}")
    try:
        return execute(claim.test_run)
    except Exception as exc:  # recorded for the user, then the request fails with it
        fail(test_run.pk, "internal", f"Internal error: {type(exc).__name__}: {exc}")
        raise


def execute(test_run: RewardTestRun) -> RewardTestRun:
    """Produce, score and store the rows of a claimed (running) test-run; end it.

    Expected failures (unusable dataset or model, sampling, no sandbox) end it failed
    with a message; anything else propagates for the caller to record."""
    pk = test_run.pk
    params = Params.from_json(test_run.params)
    try:
        rows = _rows(test_run, params)
        _progress(pk, Phase.SCORING, 0, len(rows))
        report = run_trial(
            test_run.version.code,
            test_run.version.entrypoint,
            rows,
            timeout_s=min(params.timeout_s, params.budget_s),
            budget_s=params.budget_s,
            require_full_isolation=settings.RLSTUDIO_SANDBOX_REQUIRE_FULL_ISOLATION,
            on_progress=lambda done: _progress(pk, Phase.SCORING, done, len(rows)),
            kwargs=params.kwargs,
        )
    except TestRunError as exc:
        fail(pk, exc.code, str(exc))
    except SandboxUnavailableError as exc:
        fail(pk, "sandbox_unavailable", f"The reward sandbox can't start here: {exc}")
    else:
        result = {
            "rows": report.rows,
            "summary": report.summary,
            "isolation": report.isolation,
            "load_error": report.load_error,
            "elapsed_ms": report.elapsed_ms,
            "budget_s": params.budget_s,
        }
        failed = bool(report.load_error)
        RewardTestRun.objects.filter(pk=pk, status=Status.RUNNING).update(
            status=Status.FAILED if failed else Status.SUCCEEDED,
            phase=Phase.DONE,
            progress_done=len(rows),
            progress_total=len(rows),
            result=result,
            error=f"The reward code failed to load: {report.load_error}" if failed else "",
            error_code="load_failed" if failed else "",
            finished_at=timezone.now(),
        )
    return _load(pk)


def _progress(pk: int, phase: str, done: int, total: int) -> None:
    RewardTestRun.objects.filter(pk=pk, status=Status.RUNNING).update(
        phase=phase, progress_done=done, progress_total=total
    )


def _rows(test_run: RewardTestRun, params: Params) -> list[TrialRow]:
    if test_run.source == Source.COMPLETIONS:
        return rows_from_completions(test_run.completions or [])
    dataset = test_run.dataset_version
    if dataset is None:
        raise TestRunError("dataset_unreadable", "The dataset version was deleted.")
    if test_run.source == Source.REFERENCES:
        return rows_from_references(dataset, params.offset, params.rows, params.solution_template)
    source = SampledSource(
        model_dir=_model_dir(test_run),
        settings=params.sampling,
        time_limit_s=limits.sample_limit_s(),
    )
    pk = test_run.pk
    return rows_from_model(
        dataset,
        params.offset,
        params.rows,
        source,
        on_progress=lambda done, total: _progress(pk, Phase.SAMPLING, done, total),
    )


def _model_dir(test_run: RewardTestRun) -> str:
    """The folder the sampler loads, as this worker sees it."""
    if test_run.source == Source.DEMO_MODEL:
        folder = Path(settings.RLSTUDIO_DEMO_MODEL_DIR)
        if not (folder / "config.json").is_file():
            raise TestRunError(
                "model_unavailable",
                f"The demo model is not built on this server (expected in {folder}); "
                "build it with `rlstudio make-demo-model`.",
            )
        return str(folder)
    checkpoint = test_run.checkpoint
    if checkpoint is None:
        raise TestRunError("model_unavailable", "The checkpoint was deleted.")
    try:
        # Only inside its own run's checkpoint folder: the uri came from a trainer.
        return str(checkpoint_folder(checkpoint))
    except CheckpointUnavailable as exc:
        raise TestRunError("model_unavailable", str(exc)) from None
