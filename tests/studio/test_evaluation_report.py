"""An evaluation's shareable report, over the API and `rlstudio eval report`: the models
side by side, scores per data source, the chart across checkpoints with its data, and
what the evaluation used; user text escaped; readable by the project's members only."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from studio.cli.main import main
from studio.projects.models import ApiToken
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample
from tests.studio.conftest import World
from tests.studio.test_ask_checkpoints import ask, sample_of
from tests.studio.test_evaluations_api import evaluate_checkpoints, run_with_checkpoints
from tests.studio.test_run_inputs import upload
from tests.verl_data import counting_answers, verl_rows


@pytest.fixture
def evaluation(world: World, member: APIClient, media: Path) -> Run:
    """The checkpoints of a run evaluated: the base model scores 0.25, step 2 0.5, step 4
    0.75 on four prompts; the name carries markup."""
    version = upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)
    trained = run_with_checkpoints(member, version, media)
    body = evaluate_checkpoints(member, trained, name="<b>ckpts</b>").json()
    run = Run.objects.get(pk=body["id"])
    for step, passing in ((1, 1), (2, 2), (3, 3)):
        for i in range(4):
            RolloutSample.objects.create(
                run=run,
                attempt=1,
                seq=step,
                position=i,
                step=step,
                split="eval",
                group_id=f"0:{i}",
                data_source="counting",
                prompt="q",
                response="a",
                score=1.0 if i < passing else 0.0,
                response_length=4,
            )
    return run


def report(client: APIClient, run: Run):
    return client.get(f"/api/evaluations/{run.pk}/report/", HTTP_ACCEPT="text/html")


def test_the_report_holds_the_results_the_chart_data_and_the_provenance(member, evaluation):
    response = report(member, evaluation)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert f'filename="report-evaluation-{evaluation.pk}.html"' in response["Content-Disposition"]
    html = response.content.decode()
    assert "&lt;b&gt;ckpts&lt;/b&gt;" in html and "<b>ckpts</b>" not in html
    # The models side by side and their scores, as the API's results give them.
    for label in ("demo-model", "demo @ step 2", "demo @ step 4"):
        assert label in html
    assert "0.250" in html and "0.500" in html and "0.750" in html
    assert "By data source" in html and "counting" in html
    # The chart across checkpoints (plotly embedded once) and its data.
    assert "Across checkpoints" in html and "Chart data" in html
    assert html.count("plotly.js v") == 1
    assert "checkpoint of run #" in html
    # What it used: the prompts, dataset version, reward, and the sampling.
    assert "2 held-out rows of counting v1 (25 rows)" in html  # 10% of its rows
    assert "greedy" in html and "Max new tokens" in html and "Resolved config" in html


def test_outsiders_get_404_and_viewers_read_it(world, evaluation):
    assert report(world.client("outsider"), evaluation).status_code == 404
    assert report(world.client("viewer"), evaluation).status_code == 200


def test_rlstudio_eval_report_and_ask(live_server, world, evaluation, tmp_path, capsys):
    key = ApiToken.issue(world.member, "cli")[1]
    server = ["--url", str(live_server.url), "--token", key]
    output = tmp_path / "eval.html"
    assert main(["eval", "report", str(evaluation.pk), "-o", str(output), *server]) == 0
    assert "wrote" in capsys.readouterr().out
    assert "demo @ step 4" in output.read_text()
    trained = Run.objects.get(kind="train")
    sample = sample_of(trained)
    assert main(["eval", "ask", str(sample.pk), *server]) == 0
    assert "created evaluation" in capsys.readouterr().out
    asked = Run.objects.filter(question__sample=sample).get()
    html = report(world.client("member"), asked).content.decode()
    assert "The sample asked" in html and f"#{sample.pk}" in html
    assert "one row (0:7) of the training rows of counting v1" in html
    assert ask(world.client("member"), sample).status_code == 201  # asked again: a new one
