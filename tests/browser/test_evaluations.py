"""Evaluating a run's checkpoints, in the browser on the live stack: the run page's
"Evaluate checkpoints" opens the new evaluation, which shows its progress and then the
models side by side and the chart across checkpoints with the base model as a baseline;
its responses open in the rollout explorer; the evaluation's own run page offers neither
clone nor resume (the API refuses both).

The shared demo run is the one evaluated (its checkpoints at steps 2 and 4)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.harness import TERMINAL, LiveStudio, TrainedRun, sign_in


def test_evaluate_a_runs_checkpoints_and_read_the_results(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    slug = trained_run.project_slug
    sign_in(page, studio, trained_run.owner)
    page.goto(f"{studio.url}/p/{slug}/runs/{trained_run.id}")
    page.get_by_role("button", name="Evaluate checkpoints").click()
    page.wait_for_url(re.compile(rf"/p/{slug}/evaluations/(\d+)$"))
    evaluation = int(page.url.rsplit("/", 1)[1])

    # While it runs: its status and a progress bar of the responses scored.
    progress = page.get_by_role("progressbar", name="Responses scored")
    expect(progress).to_be_visible()
    page.shot("evaluation-running")

    done = studio.wait_for_run(trained_run.owner, evaluation, TERMINAL, timeout_s=180)
    assert done["status"] == "succeeded", done.get("last_error")
    pill = page.locator("header:has(h1) [data-status]").first
    expect(pill).to_have_text("succeeded", timeout=20_000)
    expect(progress).to_have_attribute("aria-valuenow", "100")

    # The models side by side: the base model, then each checkpoint, every one scored.
    table = page.get_by_role("table", name="Results by model")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3)
    labels = [rows.nth(i).locator("td").first.inner_text() for i in range(3)]
    assert labels[1:] == ["demo run @ step 2", "demo run @ step 4"], labels
    for i in range(3):
        expect(rows.nth(i).locator("td").nth(2)).to_have_text(re.compile(r"^\d\.\d{3}$"))

    # The chart: the two checkpoints by step, the base model as a dashed baseline.
    chart = page.get_by_test_id("checkpoint-chart")
    expect(chart.locator("circle")).to_have_count(2)
    expect(chart.get_by_test_id("baseline")).to_contain_text(labels[0])
    page.get_by_role("combobox", name="Metric").select_option(label="Length (tokens)")
    expect(chart).to_have_attribute("aria-label", "Length (tokens)")
    page.shot("evaluation-results")
    page.shot("evaluation-results", narrow=True)

    # Its responses in the rollout explorer, the split of the evaluation.
    page.get_by_role("link", name="Responses in the explorer").click()
    page.wait_for_url(re.compile(rf"/runs/{evaluation}/rollouts\?.*split=eval"))
    page.wait_for_selector("[data-testid=list-status][data-state=ready]")
    expect(page.locator("[data-sample-id]").first).to_be_visible()
    page.shot("evaluation-responses")
    page.shot("evaluation-responses", narrow=True)

    # The evaluation's run page: back to its results, no clone or resume.
    page.goto(f"{studio.url}/p/{slug}/runs/{evaluation}")
    expect(page.get_by_role("link", name="Evaluation results")).to_be_visible()
    expect(page.get_by_role("link", name="Clone with edits")).to_have_count(0)
    expect(page.get_by_role("button", name="Resume")).to_have_count(0)
