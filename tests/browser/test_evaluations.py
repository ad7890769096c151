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


LARGER_V1 = """def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return float(str(ground_truth) in solution_str)
"""
LARGER_V2 = """def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip().startswith(str(ground_truth)) else 0.0
"""


def test_an_evaluation_on_a_users_data_scores_with_the_reward_chosen_in_the_form(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    from tests.verl_data import verl_parquet

    owner, slug = trained_run.owner, trained_run.project_slug
    api = studio.api(owner)
    # Data no built-in scorer knows: its evaluation needs a reward, chosen in the form.
    answers = [str(max(i, 5)) for i in range(12)]
    dataset = api.post(
        f"{studio.url}/api/datasets/", json={"project": slug, "name": "larger"}, timeout=30
    )
    assert dataset.status_code == 201, dataset.text
    uploaded = api.post(
        f"{studio.url}/api/datasets/{dataset.json()['id']}/versions/",
        files={"file": ("larger.parquet", verl_parquet(answers, "max_task", "max({i}, 5)="))},
        timeout=60,
    )
    assert uploaded.status_code == 201, uploaded.text
    function = api.post(
        f"{studio.url}/api/reward-functions/",
        json={"project": slug, "name": "larger", "code": LARGER_V1},
        timeout=30,
    )
    assert function.status_code == 201, function.text
    second = api.post(
        f"{studio.url}/api/reward-functions/{function.json()['id']}/versions/",
        json={"code": LARGER_V2, "message": "the answer first"},
        timeout=30,
    )
    assert second.status_code == 201, second.text

    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{slug}/evaluations")
    page.get_by_role("button", name="New evaluation").first.click()
    form = page.get_by_role("form", name="New evaluation")
    form.get_by_role("group", name="Models").get_by_role("checkbox").first.check()
    form.get_by_role("combobox", name="Prompts").select_option(label="Dataset larger v1")
    form.get_by_role("button", name="Start evaluation").click()
    refusal = form.get_by_role("alert").filter(has_text="no built-in scorer knows")
    expect(refusal.first).to_contain_text("'max_task' (12 rows)")
    page.shot("evaluation-needs-a-reward")
    form.get_by_role("combobox", name="Reward function").select_option(label="larger")
    expect(form.get_by_role("combobox", name="Reward version")).to_have_value(
        str(second.json()["id"])
    )
    page.shot("evaluation-reward-chosen", narrow=True)
    form.get_by_role("button", name="Start evaluation").click()
    page.wait_for_url(re.compile(rf"/p/{slug}/evaluations/(\d+)$"))
    evaluation = int(page.url.rsplit("/", 1)[1])
    expect(page.locator("header:has(h1)")).to_contain_text("reward larger v2")
    expect(page.locator("header:has(h1)")).to_contain_text("on larger v1")
    done = studio.wait_for_run(owner, evaluation, TERMINAL, timeout_s=180)
    assert done["status"] == "succeeded", done.get("last_error")
    assert done["inputs"]["reward"]["number"] == 2

    # Each response was scored by v2, and says so as people know it: "larger v2".
    page.get_by_role("link", name="Responses in the explorer").click()
    page.wait_for_selector("[data-testid=list-status][data-state=ready]")
    page.locator("[data-sample-id]").first.click()
    detail = page.get_by_role("region", name=re.compile(r"^Sample \d+$"))
    expect(detail).to_contain_text("larger v2")
    page.shot("evaluation-sample-reward-version")
