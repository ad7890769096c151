"""The downloadable HTML reports (run, compare, evaluation) hand plotly only text: a run's
or a model's name with markup is shown as typed in a chart's legend, never drawn as a
live link (studio/reports/plotly_text.py, the rules of frontend/src/lib/plotly.ts)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import escape
from typing import Any

import pytest
from rest_framework.test import APIClient

from studio.model_registry.models import RegisteredModel
from studio.paths import REPO_ROOT
from studio.projects.models import Project
from studio.runs.models import Run
from studio.telemetry.models import MetricPoint, RolloutSample
from tests.studio.conftest import media, member  # noqa: F401  (fixtures)
from tests.studio.test_evaluations_api import evaluate_checkpoints, run_with_checkpoints
from tests.studio.test_run_inputs import upload
from tests.verl_data import counting_answers, verl_rows

CASES = json.loads((REPO_ROOT / "frontend/src/lib/plotly-text-cases.json").read_text())
LINK = '<a href="https://x">x</a>'
MARKUP = f"{LINK} <b>bold</b>"
CHART_CALL = re.compile(r"Plotly\.newPlot\(\s*(?=\")")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_reports_escape_chart_text_by_the_apps_rules(case):
    """The same table frontend/src/lib/plotly.test.ts checks the app's charts against."""
    from studio.reports.plotly_text import text_only

    assert text_only(case["input"]) == case["output"]


def figures(html: str) -> list[tuple[Any, Any]]:
    """(data, layout) of every chart: each `Plotly.newPlot("id", data, layout, config)`
    call the page makes (plotly.js itself, embedded, mentions newPlot too)."""
    decoder, found = json.JSONDecoder(), []
    for call in CHART_CALL.finditer(html):
        values, at = [], call.end()
        for _ in range(3):  # the id, the data, the layout
            at = len(html) - len(html[at:].lstrip(" \n,"))
            value, at = decoder.raw_decode(html, at)
            values.append(value)
        found.append((values[1], values[2]))
    return found


def plotly_strings(value: Any) -> Iterator[str]:
    """Every string in a figure (the reports write no templates of their own)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            yield from plotly_strings(item)


def legend_names(html: str) -> list[str]:
    charts = figures(html)
    assert charts, "no chart in the report"
    for data, layout in charts:
        drawn = [*plotly_strings(data), *plotly_strings(layout)]
        assert not [s for s in drawn if "<" in s or ">" in s], drawn
    return [trace["name"] for data, _ in charts for trace in data]


def charted_run(project: Project, name: str) -> Run:
    run = Run.objects.create(project=project, name=name, config={}, created_by=project.created_by)
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=key, value=step / 10)
        for step in range(1, 6)
        for key in ("critic/score/mean", "reward/<b>part</b>")
    )
    return run


def report(client: APIClient, url: str, **params: str) -> str:
    response = client.get(url, params, HTTP_ACCEPT="text/html")
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def test_a_run_report_charts_a_names_markup_as_text(world):
    run = charted_run(world.project, MARKUP)

    html = report(world.client("viewer"), f"/api/runs/{run.pk}/report")

    assert set(legend_names(html)) == {f"#{run.pk} {escape(MARKUP, quote=False)}"}


def test_a_compare_report_charts_names_markup_as_text(world):
    first = charted_run(world.project, MARKUP)
    second = charted_run(world.project, f"second {LINK}")

    html = report(world.client("viewer"), "/api/runs/report", ids=f"{first.pk},{second.pk}")

    assert set(legend_names(html)) == {
        f"#{first.pk} {escape(MARKUP, quote=False)}",
        f"#{second.pk} second {escape(LINK, quote=False)}",
    }


def test_an_evaluation_report_charts_a_models_markup_as_text(world, member, media):  # noqa: F811
    """The chart across checkpoints names the baseline, the project's model, in its legend."""
    version = upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)
    trained = run_with_checkpoints(member, version, media)
    assert trained.model is not None
    RegisteredModel.objects.filter(pk=trained.model.pk).update(name=MARKUP)
    Run.objects.filter(pk=trained.pk).update(name=f"run {LINK}")
    created = evaluate_checkpoints(member, trained, name=f"eval {LINK}")
    assert created.status_code == 201, created.json()
    evaluation = Run.objects.get(pk=created.json()["id"])
    for step in (1, 2, 3):  # the base model and both checkpoints, scored
        RolloutSample.objects.create(
            run=evaluation, attempt=1, seq=step, position=0, step=step, split="eval",
            group_id="0:0", data_source="counting", prompt="q", response="a", score=1.0,
            response_length=4,
        )  # fmt: skip

    html = report(member, f"/api/evaluations/{evaluation.pk}/report/")

    names = legend_names(html)
    assert f"pass@1: {escape(MARKUP, quote=False)}" in names
    assert MARKUP not in html and LINK not in html  # the tables escape it too
