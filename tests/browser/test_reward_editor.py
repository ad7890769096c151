"""Datasets and reward functions in the browser, end to end, on the shared live stack.

A new user uploads a CSV with a prompt/answer mapping and sees its stats; a broken file
is refused with its row and column named; a reward function written from a template is
saved with a syntax error (marker on the right line), fixed, test-run on the dataset's
rows and on completions sampled from the demo model (histograms); a second version is
compared with the first on the same rows (the rows that differ first); "Train on this"
opens the run form with both versions chosen. A hostile reward typed in the browser
gives per-row errors while the studio stays responsive.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, StudioUser, sign_in

pytestmark = pytest.mark.browser

SLOW = 180_000  # ms: a test-run that samples from the demo model on a busy 2-core machine
QA_CSV = "id,question,solution\n" + "".join(
    f"{i},What is {i} + {i + 1}?,{2 * i + 1 if i % 2 else 2 * i}\n" for i in range(1, 9)
)
BROKEN_CSV = "question,solution\nWhat is 1 + 1?,2\nWhat is 2 + 2?,\n"
# Version 2: the first integer of the response equals the answer (line 4 unclosed first).
FIRST_INTEGER = """import re

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    match = re.search(r"-?\\d+", solution_str)
    return 1.0 if match and match.group() == str(ground_truth).strip() else 0.0
"""
SYNTAX_ERROR = FIRST_INTEGER.replace("solution_str)\n", "solution_str\n", 1)
# Version 3: the same, but odd answers never score: it disagrees on the odd rows.
EVEN_ONLY = FIRST_INTEGER.replace(
    "    return 1.0 if", "    if int(str(ground_truth)) % 2:\n        return 0.0\n    return 1.0 if"
)
HOSTILE = """import os
import socket

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    kind = str(ground_truth)
    if kind == "loop":
        while True:
            pass
    if kind == "fork":
        while True:
            os.fork()
    socket.create_connection(("203.0.113.1", 80), timeout=1)
    return 1.0
"""


def type_code(page: Any, code: str) -> None:
    """Replace the editor's text (inserted as one input: no auto-indent or brackets)."""
    editor = page.get_by_role("textbox", name="Reward code")
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def upload(page: Any, name: str, content: str) -> None:
    page.get_by_label("File (parquet, JSONL or CSV)").set_input_files(
        {"name": name, "mimeType": "text/csv", "buffer": content.encode()}
    )


def new_dataset(page: Any, studio: LiveStudio, user: StudioUser, name: str) -> None:
    page.goto(f"{studio.url}/p/{user.project_slug}/datasets")
    page.get_by_role("heading", name="Datasets", level=1).wait_for()
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_role("button", name="Create dataset").click()
    page.get_by_role("heading", name=name, level=1).wait_for()


def new_reward(page: Any, studio: LiveStudio, user: StudioUser, name: str, start: str) -> None:
    page.goto(f"{studio.url}/p/{user.project_slug}/reward-functions")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Start from").select_option(start)
    page.get_by_role("button", name="Create").click()
    page.get_by_role("heading", name=name, level=1).wait_for()
    page.get_by_role("textbox", name="Reward code").wait_for()


def save(page: Any, message: str) -> None:
    page.get_by_label("Version message").fill(message)
    page.get_by_role("button", name=re.compile(r"^Save as v\d+$")).click()


def run_test(page: Any, timeout: int = 60_000) -> Any:
    """Start a test-run from the panel and wait for its result (not the previous one's)."""
    panel = page.get_by_role("region", name="Test panel")
    shown = panel.locator("[data-test-run-id]")
    before = shown.get_attribute("data-test-run-id") if shown.count() else ""
    panel.get_by_role("button", name="Run test").click()
    result = panel.locator(f'section[data-test-run-id]:not([data-test-run-id="{before}"])')
    result.wait_for(timeout=timeout)
    return result


def test_a_user_uploads_data_writes_tests_and_compares_a_reward_then_trains_on_it(
    page: Any, studio: LiveStudio
) -> None:
    user = studio.new_user("rw")
    sign_in(page, studio, user)

    # What a new project shows before anything is made.
    page.goto(f"{studio.url}/p/{user.project_slug}/datasets")
    page.get_by_role("region", name="No datasets yet").wait_for()
    page.shot("datasets-empty")
    page.goto(f"{studio.url}/p/{user.project_slug}/reward-functions")
    page.get_by_role("region", name="No reward functions yet").wait_for()
    page.shot("reward-functions-empty", narrow=True)

    # A CSV whose columns are mapped in the browser, then its stats.
    new_dataset(page, studio, user, "sums")
    upload(page, "sums.csv", QA_CSV)
    detected = page.get_by_test_id("detected-columns")
    detected.wait_for()
    assert "id, question, solution" in detected.inner_text()
    page.get_by_label("Prompt column").select_option("question")
    page.get_by_label("Answer column").select_option("solution")
    page.get_by_label("Message", exact=True).fill("eight sums")
    page.get_by_role("button", name="Upload").click()
    page.get_by_role("region", name="Stats").wait_for()
    assert page.get_by_test_id("row-count").inner_text() == "8"
    page.get_by_test_id("bins-chart").locator(".main-svg").first.wait_for()
    assert "What is 1 + 2?" in page.get_by_test_id("preview-rows").inner_text()
    page.shot("dataset-uploaded")
    page.shot("dataset-uploaded", narrow=True)

    # A broken file: refused, naming the row and the column.
    upload(page, "broken.csv", BROKEN_CSV)
    detected.wait_for()
    page.get_by_role("button", name="Upload").click()
    error = page.get_by_test_id("upload-error")
    error.wait_for()
    assert "row 2" in error.inner_text() and "column 'solution'" in error.inner_text()
    page.shot("dataset-broken-file")

    # A reward function from a template; a save with a syntax error marks line 4.
    new_reward(page, studio, user, "first integer", "arith")
    page.shot("editor-from-template")
    type_code(page, SYNTAX_ERROR)
    save(page, "first integer, unclosed")
    problems = page.get_by_role("list", name="Problems")
    problems.wait_for()
    assert "Line 4" in problems.inner_text()
    fourth_line = page.locator(".cm-content .cm-line").nth(3)
    fourth_line.locator(".cm-lintRange-error").wait_for()
    page.shot("editor-syntax-error")
    type_code(page, FIRST_INTEGER)
    save(page, "first integer")
    page.get_by_text("Saved as version 2.").wait_for()

    # Test-run on the dataset's reference answers: every row scores 1.
    result = run_test(page)
    result.get_by_test_id("bins-chart").locator(".main-svg").first.wait_for()
    assert "8 scored · 0 failed" in result.inner_text()
    page.shot("test-run-references")

    # And on completions sampled from the demo model.
    panel = page.get_by_role("region", name="Test panel")
    panel.get_by_label("What to score").select_option("demo_model")
    panel.get_by_label("Rows", exact=True).fill("2")
    panel.get_by_label("Samples per prompt").fill("2")
    shown = panel.locator("[data-test-run-id]").get_attribute("data-test-run-id")
    panel.get_by_role("button", name="Run test").click()
    panel.get_by_role("progressbar").first.wait_for()
    page.shot("test-run-sampling")
    result = panel.locator(f'section[data-test-run-id]:not([data-test-run-id="{shown}"])')
    result.wait_for(timeout=SLOW)
    result.get_by_test_id("bins-chart").locator(".main-svg").first.wait_for()
    assert "4 scored" in result.inner_text() or "failed" in result.inner_text()
    page.shot("test-run-demo-model")

    # A second version, test-run on the same rows, compared with version 2.
    type_code(page, EVEN_ONLY)
    save(page, "even answers only")
    page.get_by_text("Saved as version 3.").wait_for()
    panel.get_by_label("What to score").select_option("references")
    panel.get_by_label("Rows", exact=True).fill("8")
    run_test(page)
    compare = page.get_by_role("region", name="Compare versions")
    compare.get_by_label("Compare with version").select_option(label="v2 — first integer")
    compare.get_by_role("button", name="Compare").click()
    summary = compare.get_by_test_id("ab-summary")
    summary.wait_for(timeout=60_000)
    assert "4 of 8 rows score differently" in summary.inner_text()
    first_row = compare.get_by_test_id("ab-rows").locator("tbody tr").first
    assert "+1.000" in first_row.inner_text()  # v3 -> v2 on an odd answer: 0 -> 1
    page.shot("ab-comparison")
    page.shot("ab-comparison", narrow=True)

    # The diff between versions 2 and 3, side by side.
    versions = page.get_by_role("region", name="Versions")
    versions.get_by_label("Diff from").select_option("2")
    versions.get_by_role("button", name="Show diff").click()
    page.get_by_test_id("reward-diff").locator(".cm-mergeView").wait_for()
    page.shot("version-diff")

    # Train on the tested version with the tested dataset: the run form opens with both
    # chosen, and creating the run lands on its page.
    page.get_by_role("link", name=re.compile(r"^Train on v3")).click()
    page.wait_for_url(re.compile(r"/runs/new\?reward_version=\d+&dataset_version=\d+"))
    # Each picker's options load on their own: wait for each choice to show, not for the
    # first select on the page.
    reward = page.get_by_label("Reward version", exact=True)
    expect(reward.locator("option:checked")).to_contain_text("v3")
    dataset = page.get_by_label("Training data", exact=True)
    expect(dataset.locator("option:checked")).to_contain_text("sums v1")
    page.get_by_label("Run name").fill("trained on v3")
    page.shot("train-on-this")
    page.get_by_role("button", name="Create run").click()
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    page.get_by_role("heading", name="trained on v3").wait_for()
    page.shot("run-page")
    # Not trained here: the shared stack's CPUs are for the other tests.
    studio.api(user).post(f"{studio.url}/api/runs/{run_id}/cancel/", json={}, timeout=30)


def test_a_hostile_reward_gives_per_row_errors_and_the_studio_stays_responsive(
    page: Any, studio: LiveStudio
) -> None:
    user = studio.new_user("hostile")
    sign_in(page, studio, user)
    new_reward(page, studio, user, "hostile", "")
    type_code(page, HOSTILE)
    save(page, "loops, forks and dials out")
    page.get_by_text("Saved as version 1.").wait_for()

    panel = page.get_by_role("region", name="Test panel")
    panel.get_by_label("What to score").select_option("completions")
    pasted = [{"solution_str": "x", "ground_truth": kind} for kind in ("loop", "fork", "net")]
    panel.get_by_label(re.compile("Completions")).fill(str(pasted).replace("'", '"'))
    panel.get_by_role("button", name="Run test").click()
    # While it runs, the studio answers: the API and a page of the app.
    health = requests.get(f"{studio.url}/api/health", timeout=10)
    assert health.status_code in (200, 503), health.text
    result = panel.get_by_role("region", name="Test-run result")
    result.wait_for(timeout=60_000)
    panel.get_by_label("Show rows").select_option("errors")
    rows = panel.get_by_test_id("test-rows").locator("tbody tr")
    assert rows.count() == 3
    text = panel.get_by_test_id("test-rows").inner_text()
    assert "timeout" in text
    assert re.search(r"PermissionError|Network|network|OSError", text), text
    page.shot("hostile-reward-errors")
    page.goto(f"{studio.url}/p/{user.project_slug}/reward-functions")
    page.get_by_role("link", name="hostile").wait_for()


# verl's DAPO scorer's return shape, with a keyword argument (verl's reward_kwargs).
DAPO_STYLE = """import re

def compute_score(data_source, solution_str, ground_truth, extra_info=None, wrong=-1.0,
                  **kwargs):
    found = re.findall(r"Answer:\\s*(\\S+)", solution_str)
    pred = found[-1] if found else None
    acc = pred == str(ground_truth)
    return {"score": 1.0 if acc else wrong, "acc": acc, "pred": pred, "tried": found}
"""


def test_a_verl_style_rewards_extra_info_shows_in_the_test_panel(
    page: Any, studio: LiveStudio
) -> None:
    user = studio.new_user("extras")
    sign_in(page, studio, user)
    new_reward(page, studio, user, "dapo style", "")
    type_code(page, DAPO_STYLE)
    save(page, "dapo-style dict return")
    page.get_by_text("Saved as version 1.").wait_for()

    panel = page.get_by_role("region", name="Test panel")
    panel.get_by_label("What to score").select_option("completions")
    pasted = [
        {"solution_str": "6 * 7\nAnswer: 42", "ground_truth": "42"},
        {"solution_str": "Answer: 41", "ground_truth": "42"},
    ]
    panel.get_by_label(re.compile("Completions")).fill(str(pasted).replace("'", '"'))
    panel.get_by_label(re.compile("Keyword arguments")).fill('{"wrong": -0.5}')
    panel.get_by_role("button", name="Run test").click()
    result = panel.get_by_role("region", name="Test-run result")
    result.wait_for(timeout=60_000)
    rows = panel.get_by_test_id("test-rows").locator("tbody tr")
    assert rows.count() == 2
    right, wrong = rows.nth(0).inner_text(), rows.nth(1).inner_text()
    assert "1.000" in right and "acc=1.00" in right
    assert "-0.500" in wrong and "acc=0.00" in wrong  # the keyword argument's score
    extra = panel.get_by_label("Extra info of row 0")
    assert "pred" in extra.inner_text() and "42" in extra.inner_text()
    assert '["42"]' in extra.inner_text()
    assert "41" in panel.get_by_label("Extra info of row 1").inner_text()
    page.shot("test-panel-extra-info")
