"""The shareable HTML report: self-contained, escaped, scoped; the endpoint and the CLI."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

from studio.cli.main import main
from studio.projects.models import ApiToken, Project
from studio.reports.html import config_differences, flatten, pick_keys
from studio.runs.models import Run
from studio.telemetry.models import MetricPoint, RolloutSample, RunAlert

HOSTILE = "<script>alert('x')</script>"
# A script or stylesheet fetched from the network: the report must open offline.
REMOTE = re.compile(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?(https?:)?//", re.I)


def make_run(project: Project, name: str, lr: float) -> Run:
    run = Run.objects.create(
        project=project,
        name=name,
        config={"actor": {"optim": {"lr": lr}}, "rollout": {"n": 4}},
        created_by=project.created_by,
    )
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=key, value=step * lr)
        for step in range(1, 30)
        for key in ("critic/score/mean", f"custom/{run.pk}")
    )
    RunAlert.objects.create(
        run=run, attempt=1, seq=9, step=9, kind="kl_spike", severity="critical", message=HOSTILE
    )
    for i, score in enumerate((0.0, 0.5, 1.0, float("nan"))):
        RolloutSample.objects.create(
            run=run, attempt=1, seq=100 + i, position=0, step=i, group_id="g", data_source="d",
            prompt=f"prompt {i}", response=f"response {i} {HOSTILE}", score=score,
        )  # fmt: skip
    return run


def download(client, url: str, **params) -> str:
    response = client.get(url, params, HTTP_ACCEPT="text/html")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return response.content.decode()


def test_a_run_report_is_self_contained_and_holds_config_metrics_alerts_and_samples(world):
    run = make_run(world.project, f"run {HOSTILE}", lr=0.000123)

    html = download(world.client("viewer"), f"/api/runs/{run.pk}/report")

    assert not REMOTE.search(html), REMOTE.search(html)
    assert len(html) > 1_000_000 and "Plotly.newPlot" in html  # plotly.js is in the file
    assert HOSTILE not in html  # escaped everywhere: name, alert message, samples
    assert html.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") >= 3
    assert escape('"lr": 0.000123') in html
    assert "critic/score/mean" in html and f"custom/{run.pk}" in html
    assert "response 2" in html and "response 0" in html  # best and worst
    assert "response 3" not in html  # a NaN reward is neither


def test_a_compare_report_overlays_runs_and_lists_the_config_keys_that_differ(world):
    first = make_run(world.project, "first", lr=0.001)
    second = make_run(world.project, "second", lr=0.002)

    html = download(world.client("viewer"), "/api/runs/report", ids=f"{first.pk},{second.pk}")

    assert "What differs (1 keys)" in html and "<code>actor.optim.lr</code>" in html
    assert f"custom/{first.pk}" in html and f"custom/{second.pk}" in html
    assert escape('"lr": 0.001') in html and escape('"lr": 0.002') in html
    assert not REMOTE.search(html)


def test_a_report_gives_each_runs_reward_error_share(world):
    failing = make_run(world.project, "failing", lr=0.001)
    healthy = make_run(world.project, "healthy", lr=0.002)
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key="reward/error_rate", value=v)
        for run, values in ((failing, (0.25, 0.25)), (healthy, (0.0, 0.0)))
        for step, v in enumerate(values, start=1)
    )
    html = download(world.client("viewer"), "/api/runs/report", ids=f"{failing.pk},{healthy.pk}")
    assert "<th>Reward errors</th>" in html
    assert "<td>25% of rows</td>" in html and "<td>none</td>" in html


def test_reports_of_other_projects_runs_are_404(world):
    mine = make_run(world.project, "mine", lr=0.1)
    theirs = make_run(world.other_project, "theirs", lr=0.1)
    client = world.client("owner")
    assert client.get(f"/api/runs/{theirs.pk}/report").status_code == 404
    both = client.get("/api/runs/report", {"ids": f"{mine.pk},{theirs.pk}"})
    assert both.status_code == 404
    assert both.json()["error"]["message"] == f"No run {theirs.pk} in your projects."
    assert client.get("/api/runs/report", {"ids": "x"}).status_code == 400


def test_a_compare_report_shows_how_the_reward_code_differs(world):
    from studio.rewards.models import RewardFunction, RewardVersion

    function = RewardFunction.objects.create(
        project=world.project, name="larger", created_by=world.owner
    )
    code = "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
    versions = [
        RewardVersion.objects.create(
            function=function, number=n, code=code + body, author=world.owner
        )
        for n, body in (
            (1, "    return 1.0\n"),
            (2, "    return 0.5 if '<' in solution_str else 1.0\n"),
        )
    ]
    first, second = make_run(world.project, "v1", 0.001), make_run(world.project, "v2", 0.001)
    for run, version in ((first, versions[0]), (second, versions[1])):
        run.reward_version = version  # the code is what its stored reference names
        run.config = {
            **run.config,
            "reward": {"custom_path": f"resource:reward-version/{version.pk}"},
        }
        run.save()
    html = download(world.client("viewer"), "/api/runs/report", ids=f"{first.pk},{second.pk}")
    assert "<h2>Reward code</h2>" in html
    assert "<span class='removed'>-    return 1.0</span>" in html
    added = escape("+    return 0.5 if '<' in solution_str else 1.0")
    assert f"<span class='added'>{added}</span>" in html
    assert "larger v1" in html and "larger v2" in html
    alone = download(world.client("viewer"), f"/api/runs/{first.pk}/report")
    assert "Reward code" not in alone


def test_a_run_report_charts_its_validation_score_and_reward_components(world):
    run = make_run(world.project, "many metrics", lr=0.001)
    keys = [f"timing_s/{i}" for i in range(30)] + [
        "val-core/arith/reward/mean@1", "reward/format/mean", "actor/entropy",
    ]  # fmt: skip
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=100 + step, step=step, key=key, value=0.5)
        for step in range(1, 4)
        for key in keys
    )
    html = download(world.client("viewer"), f"/api/runs/{run.pk}/report")
    captions = re.findall(r"<figcaption>([^<]+)</figcaption>", html)
    assert captions[:4] == [
        "critic/score/mean",
        "val-core/arith/reward/mean@1",
        "actor/entropy",
        "reward/format/mean",
    ], captions


def test_a_report_leads_with_the_run_pages_headline_charts():
    logged = [f"timing_s/{i}" for i in range(40)] + [
        "actor/entropy", "actor/pg_loss", "actor/kl_loss", "actor/ppo_kl",
        "critic/score/mean", "response_length/mean", "reward/error_rate",
        "reward/format/mean", "reward/answer/mean", "val-core/arith/reward/mean@1",
    ]  # fmt: skip
    assert pick_keys(logged)[:8] == [
        "critic/score/mean",
        "val-core/arith/reward/mean@1",
        "response_length/mean",
        "actor/kl_loss",
        "actor/entropy",
        "reward/answer/mean",
        "reward/format/mean",
        "actor/pg_loss",
    ]
    assert len(pick_keys(logged)) == 24


def test_config_differences_keep_only_keys_whose_values_differ():
    a = {"id": 1, "config": {"a": {"b": 1, "c": [1, 2]}, "d": "x"}}
    b = {"id": 2, "config": {"a": {"b": 1, "c": [1, 3]}, "e": True}}
    assert flatten(a["config"]) == {"a.b": 1, "a.c": [1, 2], "d": "x"}
    assert config_differences([a, b]) == {  # type: ignore[list-item]
        "a.c": [[1, 2], [1, 3]],
        "d": ["x", None],
        "e": [None, True],
    }


@pytest.mark.django_db(transaction=True)
def test_rlstudio_report_writes_the_html_file(live_server, world, tmp_path: Path, capsys):
    first = make_run(world.project, "first", lr=0.001)
    second = make_run(world.project, "second", lr=0.002)
    key = ApiToken.issue(world.viewer, "cli")[1]
    output = tmp_path / "report.html"
    argv = ["report", str(first.pk), str(second.pk), "-o", str(output)]

    assert main([*argv, "--url", live_server.url, "--token", key]) == 0

    html = output.read_text()
    assert "<code>actor.optim.lr</code>" in html and not REMOTE.search(html)
    theirs = make_run(world.other_project, "theirs", lr=0.1)
    refused = ["report", str(theirs.pk), "-o", str(tmp_path / "no.html")]
    capsys.readouterr()
    assert main([*refused, "--url", live_server.url, "--token", key]) == 1
    assert f"rlstudio report: 404 not_found: No run {theirs.pk}" in capsys.readouterr().err
    assert not (tmp_path / "no.html").exists()
