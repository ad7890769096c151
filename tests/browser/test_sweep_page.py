"""A sweep's page in the browser on the live stack: its trials table, the parameters
against the metric in parallel coordinates, the parameter importance, the best trial's
config diff, the metric across steps with a pruned trial marked, and a live update while a
trial runs; the sweeps list and the new-sweep form.

The sweep is seeded in the database (its trials' runs stored, not trained): paused, so the
driver starts no trial of its own, with one trial whose run is running, so the page polls
and the driver follows that run's metric points as a trainer's ingest writes them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, StudioUser, sign_in

SCORE_KEY = "val-core/arith/reward/mean@1"
BASE_CONFIG = {"actor": {"optim": {"lr": 1e-6}}, "rollout": {"n": 4, "temperature": 1.0}}
SPACE = [
    {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True},
    {"name": "rollout.n", "type": "int", "low": 2, "high": 8, "step": 2},
    {"name": "rollout.temperature", "type": "choice", "values": [0.7, 1.0]},
]
# (lr, n, temperature, validation scores by step, state); the last one runs.
TRIALS: list[tuple[float, int, float, dict[int, float], str]] = [
    (1e-5, 2, 0.7, {1: 0.20, 2: 0.28, 3: 0.33, 4: 0.36}, "complete"),
    (3e-4, 8, 1.0, {1: 0.30, 2: 0.52, 3: 0.70, 4: 0.81}, "complete"),
    (1e-3, 4, 0.7, {1: 0.05, 2: 0.08}, "pruned"),
    (5e-5, 6, 1.0, {1: 0.25, 2: 0.40, 3: 0.52, 4: 0.60}, "complete"),
    (2e-4, 4, 0.7, {1: 0.28, 2: 0.45, 3: 0.58, 4: 0.66}, "complete"),
    (8e-4, 2, 1.0, {1: 0.15, 2: 0.22, 3: 0.25, 4: 0.27}, "complete"),
    (1e-4, 8, 0.7, {1: 0.26, 2: 0.44, 3: 0.55, 4: 0.72}, "complete"),
    (6e-5, 6, 0.7, {1: 0.22, 2: 0.31}, "running"),
]
RUNNING = len(TRIALS) - 1


@dataclass
class SeededSweep:
    owner: StudioUser
    id: int
    run_ids: list[int]


def _seed(studio: LiveStudio) -> SeededSweep:
    from django.contrib.auth.models import User
    from django.utils import timezone

    from studio.projects.models import Project
    from studio.runs.models import Run, RunStatus
    from studio.sweeps.models import Sweep, SweepStatus, SweepTrial, TrialState
    from studio.telemetry.models import MetricPoint

    owner = studio.new_user("sweeps")
    user = User.objects.get(pk=owner.id)
    project = Project.objects.get(slug=owner.project_slug)
    base = Run.objects.create(
        project=project, name="arith-base", config=BASE_CONFIG, created_by=user,
        status=RunStatus.SUCCEEDED,
    )  # fmt: skip
    sweep = Sweep.objects.create(
        project=project, name="lr, n and temperature", base_run=base, base_config=BASE_CONFIG,
        space=SPACE, method="tpe", metric="", direction="maximize", max_trials=10,
        parallelism=2, pruner={"kind": "none", "min_steps": 1, "reduction_factor": 2},
        status=SweepStatus.PAUSED, created_by=user,
    )  # fmt: skip
    run_ids = []
    for number, (lr, n, temperature, scores, state) in enumerate(TRIALS):
        config = {"actor": {"optim": {"lr": lr}}, "rollout": {"n": n, "temperature": temperature}}
        status = {
            "complete": RunStatus.SUCCEEDED,
            "pruned": RunStatus.CANCELLED,
            "running": RunStatus.RUNNING,  # no attempt: the reconciler leaves it be
        }[state]
        run = Run.objects.create(
            project=project, name=f"lr-n-t{number}", config=config, created_by=user, status=status
        )
        run_ids.append(run.pk)
        MetricPoint.objects.bulk_create(
            MetricPoint(run=run, attempt=1, seq=step, step=step, key=SCORE_KEY, value=value)
            for step, value in scores.items()
        )
        last = max(scores)
        SweepTrial.objects.create(
            sweep=sweep, number=number, run=run,
            params={"actor.optim.lr": lr, "rollout.n": n, "rollout.temperature": temperature},
            state=state, value=None if state == TrialState.RUNNING else scores[last],
            intermediate={str(step): value for step, value in scores.items()},
            stopped_at_step=last if state == TrialState.PRUNED else None,
            stop_reason=f"pruned by ASHA at step {last}" if state == TrialState.PRUNED else "",
            finished_at=None if state == TrialState.RUNNING else timezone.now(),
        )  # fmt: skip
    return SeededSweep(owner, sweep.pk, run_ids)


@pytest.fixture(scope="module")
def seeded(studio: LiveStudio, django_db_blocker: Any) -> SeededSweep:
    with django_db_blocker.unblock():
        made = _seed(studio)
        connections.close_all()  # see test_web_foundation: the ORM call's connection
    return made


def _report(run_id: int, step: int, value: float, django_db_blocker: Any) -> None:
    """A validation score at `step`, as the trainer's ingest stores it."""
    from studio.telemetry.models import MetricPoint

    with django_db_blocker.unblock():
        MetricPoint.objects.create(
            run_id=run_id, attempt=1, seq=step, step=step, key=SCORE_KEY, value=value
        )
        connections.close_all()


def _trial_row(page: Any, number: int) -> Any:
    table = page.get_by_role("table", name="Trials")
    return table.locator("tbody tr").filter(has=page.locator(f"td:first-child:text-is('{number}')"))


def test_the_sweep_page_shows_trials_parameters_importance_and_the_best_trial_live(
    page: Any, studio: LiveStudio, seeded: SeededSweep, django_db_blocker: Any
) -> None:
    sign_in(page, studio, seeded.owner)
    slug = seeded.owner.project_slug
    page.goto(f"{studio.url}/p/{slug}/sweeps")
    sweeps = page.get_by_role("table", name="Sweeps")
    expect(sweeps).to_contain_text("6 complete")
    expect(sweeps).to_contain_text("1 pruned")
    page.shot("sweeps-list")
    page.shot("sweeps-list", narrow=True)
    sweeps.get_by_role("link", name="lr, n and temperature").click()

    # The trials, best first; a pruned trial says where it stopped.
    table = page.get_by_role("table", name="Trials")
    expect(table.locator("tbody tr")).to_have_count(len(TRIALS))
    first = table.locator("tbody tr").first
    expect(first).to_contain_text("lr-n-t1")
    expect(first).to_contain_text("0.81")
    expect(_trial_row(page, 2)).to_contain_text("at step 2")
    expect(first.get_by_role("link", name="lr-n-t1")).to_have_attribute(
        "href", f"/p/{slug}/runs/{seeded.run_ids[1]}"
    )

    best = page.get_by_role("region", name="Best trial")
    expect(best.get_by_test_id("best-value")).to_have_text("0.81")
    diff = best.get_by_role("table")
    expect(diff).to_contain_text("actor.optim.lr")
    expect(diff).to_contain_text("1e-6")
    expect(diff).to_contain_text("3e-4")

    # Optuna's importance, with its method named: one bar per parameter.
    importance = page.get_by_role("region", name="Parameter importance")
    expect(importance).to_contain_text("PED-ANOVA")
    expect(importance.get_by_role("listitem")).to_have_count(len(SPACE))

    # Parallel coordinates (SVG): an axis per parameter and the metric's, a line per trial
    # with a value, the best one among them.
    chart = page.get_by_test_id("parcoords-chart")
    axes = chart.locator("[data-axis]")
    expect(axes).to_have_count(len(SPACE) + 1)
    expect(axes.last).to_have_attribute("data-axis", "validation score")
    lines = chart.locator("polyline")
    expect(lines).to_have_count(len(TRIALS) - 1)  # the running trial has no value yet
    expect(chart.locator("polyline[data-trial='1']")).to_have_attribute("stroke-width", "3.5")

    # Every trial across steps, the pruned one marked where it stopped.
    steps = page.get_by_test_id("steps-plot")
    traces = steps.evaluate("el => el.data.map(t => t.name)")
    assert "pruned here" in traces and "#1 (best)" in traces, traces
    expect(page.get_by_role("link", name="Compare")).to_have_attribute(
        "href",
        f"/p/{slug}/compare?runs={seeded.run_ids[1]},{seeded.run_ids[6]},{seeded.run_ids[4]}",
    )
    page.shot("sweep")
    page.shot("sweep", narrow=True)

    # Live: the running trial's run reports step 3; the page (polling every ~2 s) shows it.
    running = _trial_row(page, RUNNING)
    steps_cell = running.locator("td").nth(4)  # #, run, state, metric, steps
    expect(steps_cell).to_have_text("2")
    _report(seeded.run_ids[RUNNING], 3, 0.47, django_db_blocker)
    expect(steps_cell).to_have_text("3", timeout=20_000)
    page.wait_for_function(
        "n => document.querySelector('[data-testid=steps-plot]').data"
        ".some(t => t.name === '#' + n && t.x.length === 3)",
        arg=RUNNING,
        timeout=20_000,
    )
    page.shot("sweep-live")

    # A trial's run page names its sweep, and leads back to it.
    sweep_url = page.url
    first.get_by_role("link", name="lr-n-t1").click()
    back = page.get_by_role("link", name=re.compile(r"trial 1 of sweep"))
    expect(back).to_have_attribute("href", urlsplit(sweep_url).path)
    back.click()
    expect(page.get_by_role("table", name="Trials")).to_be_visible()

    # Stop: its running trial is cancelled; the page says the sweep stopped.
    page.get_by_role("button", name="Stop").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Stop sweep").click()
    expect(page.locator("header [data-status]").first).to_have_text("stopped")
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)

    # Ended, it can be deleted with its trials' runs: the list is empty again.
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Delete sweep").click()
    expect(page.get_by_role("region", name="No sweeps yet")).to_be_visible(timeout=20_000)


def test_the_new_sweep_form_counts_a_grid_and_refuses_a_float_range_in_one(
    page: Any, studio: LiveStudio, seeded: SeededSweep
) -> None:
    sign_in(page, studio, seeded.owner)
    page.goto(f"{studio.url}/p/{seeded.owner.project_slug}/sweeps/new")
    add = page.get_by_label("Add a parameter")
    add.select_option("rollout.n")
    add.select_option("rollout.temperature")
    add.select_option("actor.optim.lr")
    page.get_by_label("Search method").select_option("grid")
    # Both floats of the preset start as ranges: the form says a grid can't take them.
    expect(
        page.get_by_role("alert").filter(
            has_text="rollout.temperature, actor.optim.lr are float ranges"
        )
    ).to_be_visible()
    page.shot("new-sweep-float-grid")
    page.get_by_role("button", name="Remove actor.optim.lr").click()
    # rollout.n is 8 in the preset: 4 to 16 by 1, 13 values; the temperature as 2 choices.
    temperature = page.get_by_role("group", name="Parameter rollout.temperature")
    temperature.get_by_label("Search").select_option("choice")
    temperature.get_by_label("Values").fill("0.7, 1.0")
    expect(page.get_by_test_id("grid-size")).to_contain_text("The grid makes 13 × 2 = 26 trials.")
    page.evaluate("window.scrollTo(0, 0)")  # filling a field scrolled: the shot starts at the top
    page.shot("new-sweep-grid")
    page.shot("new-sweep-grid", narrow=True)
