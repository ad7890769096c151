"""A resumed attempt supersedes what earlier attempts reported past the resume step."""

from __future__ import annotations

from studio.runs import lifecycle
from studio.runs.models import Run, RunStatus
from studio.telemetry.alerts.rules import REWARD_ERROR_RATE
from studio.telemetry.models import (
    IngestedRecord,
    LogLine,
    MetricPoint,
    MetricTile,
    RolloutSample,
    RunAlert,
)
from tests.telemetry.conftest import Lab, Trainer, checkpoint, log, metrics, samples


def first_attempt_reports_six_steps(trainer: Trainer) -> None:
    records = []
    for step in range(1, 7):
        records += [metrics(len(records), step), samples(len(records) + 1, step)]
    records += [checkpoint(len(records), 3), log(len(records) + 1, "boom")]
    assert trainer.post(records).status_code == 200


def relaunch(run: Run) -> None:
    lifecycle.transition(run.pk, {RunStatus.STARTING}, RunStatus.FAILED, "lost")
    lifecycle.resume(run.pk)
    lifecycle.transition(run.pk, {RunStatus.QUEUED}, RunStatus.STARTING, "launch")


def live_steps(model: type, run: Run, attempt: int = 1) -> set[int]:
    rows = model.objects.filter(run=run, attempt=attempt, superseded=False)
    return set(rows.values_list("step", flat=True))


def test_a_launcher_set_resume_step_supersedes_at_once(lab: Lab, trainer: Trainer) -> None:
    first_attempt_reports_six_steps(trainer)
    relaunch(trainer.run)
    lab.start_attempt(trainer.run, number=2, resume_from_step=2)  # issues the token
    assert live_steps(MetricPoint, trainer.run) == {1, 2}
    assert live_steps(RolloutSample, trainer.run) == {1, 2}
    assert live_steps(IngestedRecord, trainer.run) == {1, 2, None}  # the log line has no step
    assert LogLine.objects.filter(run=trainer.run).count() == 1  # logs are kept
    # The tiles (downsampled charts) follow: only steps 1-2 of attempt 1 are counted.
    tile = MetricTile.objects.get(run=trainer.run, key="critic/score/mean", size=16, tile=0)
    assert (tile.n, tile.max_step) == (2, 2)


def test_without_a_resume_step_the_latest_checkpoint_is_the_resume_point(
    lab: Lab, trainer: Trainer
) -> None:
    first_attempt_reports_six_steps(trainer)
    relaunch(trainer.run)
    second = lab.start_attempt(trainer.run, number=2)
    assert live_steps(MetricPoint, trainer.run) == set(range(1, 7))  # nothing known yet
    assert second.post([metrics(0, 4)], attempt=2).status_code == 200
    assert live_steps(MetricPoint, trainer.run) == {1, 2, 3}  # checkpoint at step 3
    assert live_steps(MetricPoint, trainer.run, attempt=2) == {4}


def test_a_fresh_start_supersedes_everything_earlier(lab: Lab, trainer: Trainer) -> None:
    trainer.post([metrics(0, 1), metrics(1, 2)])
    relaunch(trainer.run)
    second = lab.start_attempt(trainer.run, number=2)
    second.post([metrics(0, 1)], attempt=2)
    assert live_steps(MetricPoint, trainer.run) == set()
    series = MetricPoint.objects.filter(run=trainer.run, superseded=False)
    assert list(series.values_list("attempt", "step")) == [(2, 1), (2, 1)]


def test_alerts_past_the_resume_step_are_dropped_and_raised_again(
    lab: Lab, trainer: Trainer
) -> None:
    trainer.post([metrics(i, i + 1, {REWARD_ERROR_RATE: 0.3}) for i in range(4)])
    trainer.post([checkpoint(4, 1)])
    assert list(RunAlert.objects.values_list("step", flat=True)) == [1]
    relaunch(trainer.run)
    second = lab.start_attempt(trainer.run, number=2, resume_from_step=0)
    assert not RunAlert.objects.exists()
    second.post([metrics(0, 1, {REWARD_ERROR_RATE: 0.3})], attempt=2)
    assert list(RunAlert.objects.values_list("attempt", "step")) == [(2, 1)]
