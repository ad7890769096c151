"""Evaluating a run's checkpoints, in the browser on the live stack: the run page's
"Evaluate checkpoints" opens the new evaluation, which shows its progress and then the
models side by side and the chart across checkpoints with the base model as a baseline;
its responses open in the rollout explorer; the evaluation's own run page offers neither
clone nor resume (the API refuses both). "Ask the checkpoints" on a training sample of
the run answers its prompt with the base model and each checkpoint, a column per step,
given the very prompt text the sample was generated from; its report downloads.

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
    # One model's responses, by its label (its step in the evaluation).
    page.get_by_role("combobox", name="Model").select_option(label="demo run @ step 4")
    page.wait_for_url(re.compile(r"[?&]step=3(&|$)"))
    expect(page.locator("[data-sample-id]").first).to_have_attribute("data-step", "3")
    expect(page.locator("[data-sample-id]:not([data-step='3'])")).to_have_count(0)
    page.shot("evaluation-responses")
    page.shot("evaluation-responses", narrow=True)

    # The evaluation's run page: back to its results, no clone or resume.
    page.goto(f"{studio.url}/p/{slug}/runs/{evaluation}")
    expect(page.get_by_role("link", name="Evaluation results")).to_be_visible()
    expect(page.get_by_role("link", name="Clone with edits")).to_have_count(0)
    expect(page.get_by_role("button", name="Resume")).to_have_count(0)


def test_ask_the_checkpoints_from_a_sample_of_the_run(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    slug, owner = trained_run.project_slug, trained_run.owner
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{slug}/runs/{trained_run.id}/rollouts?split=train")
    page.wait_for_selector("[data-testid=list-status][data-state=ready]")
    detail = page.get_by_role("region", name=re.compile(r"^Sample \d+$"))
    sample = int((detail.get_attribute("aria-label") or "").split()[1])
    ask = detail.get_by_role("button", name="Ask the checkpoints")
    ask.focus()
    page.keyboard.press("Enter")  # a button like any other: the keyboard asks too
    page.wait_for_url(re.compile(rf"/p/{slug}/evaluations/(\d+)$"))
    evaluation = int(page.url.rsplit("/", 1)[1])

    # While it runs: the question, and a column per step waiting for its answer.
    answers = page.get_by_role("region", name="Answers by step")
    expect(answers).to_be_visible()
    expect(page.get_by_role("link", name=f"Sample #{sample}")).to_be_visible()
    page.shot("ask-checkpoints-waiting")

    done = studio.wait_for_run(owner, evaluation, TERMINAL, timeout_s=180)
    assert done["status"] == "succeeded", done.get("last_error")
    columns = answers.get_by_test_id("answer-column")
    expect(columns).to_have_count(3)
    titles = [columns.nth(i).get_by_role("heading").inner_text() for i in range(3)]
    assert titles == ["Base model", "Step 2", "Step 4"], titles
    for i in range(3):
        expect(columns.nth(i).get_by_test_id("answer")).to_have_count(1, timeout=20_000)
    expect(page.get_by_text("answered another prompt")).to_have_count(0)
    expect(page.get_by_test_id("asked-answer")).to_be_visible()
    page.shot("ask-checkpoints-answers")
    page.shot("ask-checkpoints-answers", narrow=True)
    answers.focus()  # one tab stop; its arrow keys scroll the columns
    expect(answers).to_be_focused()

    # Each model was given the sample's own prompt text, once, under the sample's prompt id.
    api = studio.api(owner)
    asked = api.get(f"{studio.url}/api/samples/{sample}/").json()
    given = api.get(
        f"{studio.url}/api/samples/", params={"run": evaluation, "split": "eval"}
    ).json()["results"]
    assert sorted(a["step"] for a in given) == [1, 2, 3]
    assert {(a["prompt"], a["group_id"]) for a in given} == {(asked["prompt"], asked["group_id"])}

    with page.expect_download() as download:
        page.get_by_role("link", name="Download report").click()
    assert download.value.suggested_filename == f"report-evaluation-{evaluation}.html"
