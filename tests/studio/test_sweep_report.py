"""The sweep's HTML report: self-contained, with its trials, best trial, importance and
charts, and every user string escaped; the endpoint and `rlstudio sweeps report`."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

from studio.cli.main import main
from studio.projects.models import ApiToken, Project
from studio.reports.sweep_html import parcoords_figure, steps_figure
from studio.runs.models import Run, RunStatus
from studio.sweeps.models import Sweep, SweepTrial, TrialState
from tests.studio.test_reports import HOSTILE, REMOTE, download

ESCAPED = escape(HOSTILE)
SPACE = [
    {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True},
    {"name": "rollout.n", "type": "int", "low": 2, "high": 8, "step": 2},
    {"name": "algorithm.adv_estimator", "type": "choice", "values": [HOSTILE, "grpo"]},
]
# (number, lr, n, estimator, state, value, intermediate)
TRIALS = [
    (0, 1e-4, 4, "grpo", TrialState.COMPLETE, 0.8, {"2": 0.5, "4": 0.8}),
    (1, 5e-4, 2, HOSTILE, TrialState.COMPLETE, 0.6, {"2": 0.4, "4": 0.6}),
    (2, 2e-5, 8, "grpo", TrialState.COMPLETE, 0.7, {"2": 0.45, "4": 0.7}),
    (3, 3e-4, 6, HOSTILE, TrialState.COMPLETE, 0.65, {"2": 0.42, "4": 0.65}),
    (4, 9e-4, 2, HOSTILE, TrialState.PRUNED, None, {"2": 0.1}),
]


def make_sweep(project: Project, name: str = f"sweep {HOSTILE}") -> Sweep:
    base = {"actor": {"optim": {"lr": 1e-6}}, "rollout": {"n": 4}, "algorithm": {}}
    sweep = Sweep.objects.create(
        project=project,
        name=name,
        preset="grpo-tiny-arith",
        base_request={"overrides": ["trainer.total_steps=4"], "inputs": {"dataset_version": 3}},
        base_config=base,
        space=SPACE,
        method="tpe",
        max_trials=6,
        parallelism=2,
        pruner={"kind": "asha", "min_steps": 2, "reduction_factor": 2},
        created_by=project.created_by,
    )
    for number, lr, n, estimator, state, value, points in TRIALS:
        run = Run.objects.create(
            project=project,
            name=f"trial {number} {HOSTILE}",
            config={
                "actor": {"optim": {"lr": lr}},
                "rollout": {"n": n},
                "algorithm": {"adv_estimator": estimator},
            },
            status=RunStatus.SUCCEEDED if state == TrialState.COMPLETE else RunStatus.CANCELLED,
            created_by=project.created_by,
        )
        pruned = state == TrialState.PRUNED
        SweepTrial.objects.create(
            sweep=sweep,
            number=number,
            run=run,
            params={"actor.optim.lr": lr, "rollout.n": n, "algorithm.adv_estimator": estimator},
            state=state,
            value=value,
            intermediate=points,
            stopped_at_step=2 if pruned else None,
            stop_reason="pruned by ASHA at step 2" if pruned else "",
        )
    return sweep


def test_a_sweep_report_is_self_contained_and_holds_trials_best_and_importance(world):
    sweep = make_sweep(world.project)

    html = download(world.client("viewer"), f"/api/sweeps/{sweep.pk}/report/")

    assert not REMOTE.search(html), REMOTE.search(html)
    assert html.count("* plotly.js v") == 1  # plotly.js inlined, once
    assert html.count('class="plotly-graph-div"') == 2  # two charts
    assert '"parcoords"' in html
    assert HOSTILE not in html  # the name, the runs' names, a choice's values
    assert html.count(ESCAPED) >= 5
    # Settings: base, space, method, metric, pruner, budget.
    assert "preset grpo-tiny-arith" in html and "trainer.total_steps=4" in html
    assert "<code>actor.optim.lr</code>" in html and "1e-05 to 0.001, log" in html
    assert "2 to 8, step 2" in html and "tpe" in html
    assert "maximize validation score" in html
    assert "asha, from step 2, 1 in 2 goes on at a rung" in html
    assert "6 trials, 2 at once" in html
    # The trials, the best one and its config diff, the importance's method.
    assert "<h2>Trials (5)</h2>" in html
    assert "pruned at step 2" in html and "pruned by ASHA at step 2" in html
    assert escape(f"#{sweep.trials.get(number=0).run_id} trial 0 {HOSTILE}") in html
    assert "<tr class=best>" in html
    best = re.search(r"<h2>Best trial</h2>(.*?)<h2>", html, re.S)
    assert best and "<td>#0</td>" in best.group(1) and "<td>0.8</td>" in best.group(1)
    assert "<code>actor.optim.lr</code></td><td>1e-06</td><td>0.0001</td>" in best.group(1)
    assert "By PED-ANOVA over the" in html
    assert "<h3>Its inputs</h3>" in best.group(1)


def test_the_charts_give_each_trial_an_axis_value_and_mark_where_pruned_ones_stopped(world):
    from studio.sweeps.serializers import SweepDetailSerializer

    detail = dict(SweepDetailSerializer(make_sweep(world.project)).data)
    parcoords = parcoords_figure(detail)
    assert parcoords is not None
    dims = {d["label"]: d for d in parcoords["data"][0]["dimensions"]}
    assert list(dims) == [
        "actor.optim.lr (log)", "rollout.n", "algorithm.adv_estimator", "validation score",
    ]  # fmt: skip
    assert dims["actor.optim.lr (log)"]["ticktext"] == ["1e-5", "1e-4", "1e-3"]
    assert dims["algorithm.adv_estimator"]["values"] == [1, 0, 1, 0]  # the 4 with a value
    assert dims["validation score"]["values"] == [0.8, 0.6, 0.7, 0.65]
    steps = steps_figure(detail)
    assert steps is not None
    marks = steps["data"][-1]
    assert marks["name"] == "pruned here" and (marks["x"], marks["y"]) == ([2], [0.1])
    assert steps["data"][0]["name"] == "#0 complete (best)"


def test_a_sweep_with_no_trials_yet_has_a_report_and_others_projects_sweeps_are_404(world):
    sweep = Sweep.objects.create(
        project=world.project, name="empty", space=SPACE[:1], method="random", max_trials=2,
        created_by=world.owner,
    )  # fmt: skip
    html = download(world.client("viewer"), f"/api/sweeps/{sweep.pk}/report/")
    assert "No trial has a value yet." in html and "No trial has completed" in html
    assert "plotly.js" not in html and not REMOTE.search(html)
    assert world.client("outsider").get(f"/api/sweeps/{sweep.pk}/report/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_rlstudio_sweeps_report_writes_the_html_file(live_server, world, tmp_path: Path, capsys):
    sweep = make_sweep(world.project)
    key = ApiToken.issue(world.viewer, "cli")[1]
    output = tmp_path / "sweep.html"
    argv = ["sweeps", "report", str(sweep.pk), "-o", str(output)]
    assert main([*argv, "--url", live_server.url, "--token", key]) == 0
    assert f"wrote {output}" in capsys.readouterr().out
    html = output.read_text()
    assert "<h2>Trials (5)</h2>" in html and not REMOTE.search(html)
