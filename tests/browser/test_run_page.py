"""The run page leads with what a user watches, in the browser on the live stack: the
headline charts above the other groups, the Samples tab (the explorer, latest step
first), the Logs tab of a run whose reward failed pointing at the user's line, and a
confirmation before a run is cancelled.

One module, one live studio (the package's), the shared demo run, and two short runs of
its own started at once so they train while the demo run's tests look."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.conftest import DEMO_RUN_OVERRIDES
from tests.browser.harness import (
    TERMINAL,
    LiveStudio,
    StudioUser,
    TrainedRun,
    sign_in,
    wait_for_sample_list,
)

# Loads fine (the checks are static), raises on line 4 when the trainer loads it.
FAILING_REWARD = """def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0

LIMIT = 1 / 0
"""
FAILING_LINE = 4
# Raises on about a quarter of the demo's rows (below reward.max_error_rate, 0.5): the
# run trains on and succeeds, and must still say its reward failed.
PARTIAL_REWARD = """def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if int(ground_truth) % 4 == 0:
        raise ValueError("no multiples of four")
    return 1.0 if solution_str.strip().startswith(str(ground_truth)) else 0.0
"""
PARTLY_FAILING_LINE = 3


@dataclass
class OwnRuns:
    owner: StudioUser
    failing: int
    to_cancel: int
    partly_failing: int


def _new_run(studio: LiveStudio, owner: StudioUser, name: str, **inputs: Any) -> int:
    response = studio.api(owner).post(
        f"{studio.url}/api/runs/",
        json={
            "project": owner.project_slug,
            "name": name,
            "preset": "grpo-tiny-arith",
            "overrides": DEMO_RUN_OVERRIDES,
            **inputs,
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


@pytest.fixture(scope="module")
def own_runs(studio: LiveStudio, django_db_blocker: Any) -> OwnRuns:
    """A run whose reward raises while loading, and a run to cancel (queued behind it)."""
    with django_db_blocker.unblock():
        owner = studio.new_user("runpage")
        dataset = studio.demo_dataset(owner)
        connections.close_all()  # see test_web_foundation: the ORM call's connection
    failing = _new_run(
        studio,
        owner,
        "fails",
        dataset_version=dataset,
        reward_version=_reward_version(studio, owner, "divides by zero", FAILING_REWARD),
    )
    partly_failing = _new_run(
        studio,
        owner,
        "partly fails",
        dataset_version=dataset,
        reward_version=_reward_version(studio, owner, "no fours", PARTIAL_REWARD),
    )
    to_cancel = _new_run(studio, owner, "to cancel", dataset_version=dataset, priority=-10)
    return OwnRuns(owner, failing, to_cancel, partly_failing)


def _reward_version(studio: LiveStudio, owner: StudioUser, name: str, code: str) -> int:
    api = studio.api(owner)
    function = api.post(
        f"{studio.url}/api/reward-functions/",
        json={"project": owner.project_slug, "name": name},
        timeout=30,
    )
    assert function.status_code == 201, function.text
    version = api.post(
        f"{studio.url}/api/reward-functions/{function.json()['id']}/versions/",
        json={"code": code, "message": "first"},
        timeout=30,
    )
    assert version.status_code == 201, version.text
    return int(version.json()["id"])


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box  # type: ignore[no-any-return]


def test_the_run_page_leads_with_headline_charts_and_has_a_samples_tab(
    page: Any, studio: LiveStudio, own_runs: OwnRuns, trained_run: TrainedRun
) -> None:
    sign_in(page, studio, trained_run.owner)
    run_page = f"{studio.url}/p/{trained_run.project_slug}/runs/{trained_run.id}"
    page.goto(run_page)

    # Headline first: reward (with its spread), validation, length, KL, entropy.
    headline = page.get_by_role("group", name="Headline charts")
    headline.locator("[data-ready=true]").first.wait_for()
    pinned = headline.locator("[data-chart-slot]").evaluate_all(
        "cells => cells.map(c => c.getAttribute('data-chart-slot'))"
    )
    assert pinned[0] == "critic/score/mean", pinned
    assert any(k.startswith("val-core/") for k in pinned), pinned
    assert "response_length/mean" in pinned and "actor/entropy" in pinned, pinned
    # Above every other group, and the first chart's top row is the page's first chart.
    first_group_title = page.locator("h3", has_text=re.compile(r"^(reward|actor|critic)$")).first
    assert _box(page, "[aria-label='Headline charts']")["y"] < first_group_title.bounding_box()["y"]
    reward_chart = page.locator("[data-chart-slot='critic/score/mean'] figure[data-ready=true]")
    reward_chart.wait_for()
    assert "Reward (mean, min–max)" in reward_chart.inner_text()
    # The spread: two band traces drawn before the raw and smoothed lines.
    traces = reward_chart.evaluate("f => f.querySelector('.js-plotly-plot').data.length")
    assert traces == 4, traces
    # The reward group holds the reward's metrics, not the error rate alone.
    reward_group = page.locator("h3", has_text=re.compile(r"^reward$")).locator("xpath=..")
    keys = reward_group.locator("[data-chart-slot]").evaluate_all(
        "cells => cells.map(c => c.getAttribute('data-chart-slot'))"
    )
    assert "reward/error_rate" in keys and "critic/score/max" in keys, keys
    page.shot("headline")
    page.shot("headline", narrow=True)

    # The Samples tab: the explorer of this run, every step, the newest first.
    steps = studio.api(trained_run.owner).get(
        f"{studio.url}/api/runs/{trained_run.id}/rollouts/steps", timeout=30
    )
    latest = max(s["step"] for s in steps.json()["steps"])
    page.get_by_role("tab", name="Samples").click()
    page.wait_for_url(re.compile(rf"/runs/{trained_run.id}/samples\?.*step_max={latest}\b"))
    wait_for_sample_list(page, step_max=latest, step_min=None)
    rows = page.eval_on_selector_all(
        "[data-sample-id]", "rows => rows.map(r => Number(r.getAttribute('data-step')))"
    )
    # Every step up to the newest (no lower bound, no single step), the newest first.
    assert "step_min=" not in page.url and not re.search(r"[?&]step=", page.url), page.url
    assert rows and rows[0] == latest and rows == sorted(rows, reverse=True), rows
    expect(page.get_by_role("tab", name="Samples")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("heading", name="demo run")).to_be_visible()  # the run's header
    page.shot("samples-tab")
    page.shot("samples-tab", narrow=True)
    page.get_by_role("tab", name="Charts").click()
    page.wait_for_url(re.compile(rf"/runs/{trained_run.id}$"))
    headline.wait_for()


def test_the_timeline_tab_shows_where_the_seconds_before_the_first_chart_went(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    sign_in(page, studio, trained_run.owner)
    page.goto(f"{studio.url}/p/{trained_run.project_slug}/runs/{trained_run.id}?tab=timeline")

    startup = page.get_by_role("region", name="Startup")
    table = startup.get_by_role("table", name="Startup phases of attempt 1")
    expect(table).to_be_visible()
    expect(startup.get_by_text(re.compile(r"^Create to first metric: [\d.]+ s$"))).to_be_visible()
    reached = table.locator("tr[data-reached=true]").evaluate_all(
        "rows => rows.map(r => r.dataset.phase)"
    )
    # Marked by the studio (queue, claim, Ray) and by the trainer, every one of them.
    assert reached[0] == "created", reached
    assert set(reached) == {
        "created",
        "dispatched",
        "claimed",
        "submitted",
        "process_started",
        "bootstrap_done",
        "imports_done",
        "model_loaded",
        "data_loaded",
        "first_validation",  # the demo run validates before training
        "first_rollout",
        "first_step",
        "first_metric_reported",
        "first_metric_stored",
    }, reached
    # A row per phase, named by its header cell, with what it took and when since Create.
    model = table.get_by_role("row", name=re.compile("^Model loaded"))
    expect(model).to_contain_text(re.compile(r"[\d.]+ s"))
    assert table.get_by_role("rowheader").count() == len(reached)
    page.shot("startup")
    page.shot("startup", narrow=True)


def test_cancel_asks_first_escape_keeps_the_run_and_enter_cancels_it(
    page: Any, studio: LiveStudio, own_runs: OwnRuns
) -> None:
    sign_in(page, studio, own_runs.owner)
    page.goto(f"{studio.url}/p/{own_runs.owner.project_slug}/runs/{own_runs.to_cancel}")
    cancel = page.get_by_role("button", name="Cancel run")
    cancel.click()
    dialog = page.get_by_role("alertdialog", name=f"Cancel run #{own_runs.to_cancel}?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel run")).to_be_focused()
    page.shot("cancel-dialog")
    page.shot("cancel-dialog", narrow=True)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(cancel).to_be_focused()  # the focus is back where it was
    run = studio.api(own_runs.owner).get(f"{studio.url}/api/runs/{own_runs.to_cancel}/", timeout=30)
    assert run.json()["status"] not in {"cancelling", "cancelled"}, run.json()["status"]

    cancel.click()
    expect(dialog).to_be_visible()
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    page.get_by_text("Cancelling the run.").wait_for()
    done = studio.wait_for_run(own_runs.owner, own_runs.to_cancel, {"cancelling", *TERMINAL}, 30)
    assert done["status"] in {"cancelling", "cancelled"}, done["status"]


def test_the_logs_of_a_failed_run_point_at_the_line_of_the_users_reward(
    page: Any, studio: LiveStudio, own_runs: OwnRuns
) -> None:
    run = studio.wait_for_run(own_runs.owner, own_runs.failing, TERMINAL, timeout_s=300)
    assert run["status"] == "failed", run
    sign_in(page, studio, own_runs.owner)
    page.goto(f"{studio.url}/p/{own_runs.owner.project_slug}/runs/{own_runs.failing}?tab=logs")
    logs = page.get_by_test_id("log-lines")
    logs.wait_for()
    error = logs.locator("[data-level=error]")
    expect(error).to_contain_text("ZeroDivisionError: division by zero")
    # The traceback line naming the user's code is marked, and that line of code is shown.
    marked = logs.locator(f"mark[data-user-frame='{FAILING_LINE}']")
    expect(marked.first).to_be_visible()
    panel = page.get_by_role("tabpanel")
    source = panel.get_by_role("figure", name=f"reward.py, line {FAILING_LINE}")
    expect(source.locator("[data-current=true]")).to_have_text(f"{FAILING_LINE}LIMIT = 1 / 0")
    page.shot("failed-logs")
    page.shot("failed-logs", narrow=True)

    # Above the tabs, the failure in short: the user's line, the traceback one click away.
    page.get_by_role("tab", name="Charts").click()
    failed = page.get_by_role("region", name="Why the run failed")
    expect(failed.locator("[data-current=true]")).to_have_text(f"{FAILING_LINE}LIMIT = 1 / 0")
    expect(failed.locator("pre").last).to_be_hidden()  # collapsed
    page.shot("failed-header")


def test_a_run_whose_reward_fails_on_some_rows_says_so_where_people_look(
    page: Any, studio: LiveStudio, own_runs: OwnRuns
) -> None:
    run = studio.wait_for_run(own_runs.owner, own_runs.partly_failing, TERMINAL, timeout_s=300)
    assert run["status"] == "succeeded", run
    rate = run["reward_error_rate"]
    assert 0.05 < rate < 0.5, rate
    badge = re.compile(r"^reward errors: \d+% of rows$")
    sign_in(page, studio, own_runs.owner)
    slug = own_runs.owner.project_slug
    page.goto(f"{studio.url}/p/{slug}/runs")
    row = page.get_by_role("row").filter(has_text="partly fails")
    expect(row.get_by_text(badge)).to_be_visible()
    page.shot("runs-reward-errors")
    page.goto(f"{studio.url}/p/{slug}/runs/{own_runs.partly_failing}?tab=logs")
    header = page.locator("header").filter(has=page.get_by_role("heading", name="partly fails"))
    expect(header.get_by_text(badge)).to_be_visible()
    errors = page.get_by_role("region", name="Reward errors")
    expect(errors.get_by_role("heading")).to_contain_text("% of scored rows")
    expect(errors).to_contain_text("ValueError: no multiples of four")
    marked = errors.locator(f"mark[data-user-frame='{PARTLY_FAILING_LINE}']")
    expect(marked.first).to_be_visible()
    source = errors.get_by_role("figure", name=f"reward.py, line {PARTLY_FAILING_LINE}").first
    expect(source.locator("[data-current=true]")).to_contain_text("raise ValueError")
    lines = page.get_by_test_id("log-lines")
    expect(lines).to_contain_text("reward errors at step ")
    expect(lines).to_contain_text(re.compile(r"reward errors in \d+ of 4 steps"))
    page.shot("partly-failed-logs")
    page.shot("partly-failed-logs", narrow=True)
    errors.get_by_role("link", name="Open the failing samples").click()
    page.wait_for_url(re.compile(r"/rollouts\?.*errors=1"))
