"""The web app end to end, in a real browser against the live stack: a new user signs
in, creates a GRPO run from the demo preset (after a validation error at the field it
names), watches the reward chart gain points live, sees the run succeed, opens its logs
and checkpoints, clones it with one edit, cancels the clone and compares the two runs.

The `studio` and `page` fixtures (tests/browser/conftest.py) give one shared live stack
and a Playwright page that fails the test on any console error, page error or failed
request (>= 500); `page.shot()` saves a screenshot of every page visited under
var/test-artifacts/browser/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser
REWARD_KEY = "critic/score/mean"
STEPS = 4  # enough steps that some reach the open page live, few enough to stay quick
TRAIN_TIMEOUT_MS = 150_000


def run_id_of(page: Page) -> int:
    match = re.search(r"/runs/(\d+)$", page.url)
    assert match, f"not on a run page: {page.url}"
    return int(match.group(1))


def config_field(page: Page, path: str) -> Any:
    """The generated form's input for a config path, opening its section first. A closed
    section renders no fields, so the input exists only once the section has opened: wait
    for it, or a read that does not wait (its options, say) finds nothing."""
    field = page.locator(f'[data-path="{path}"]')
    if not field.is_visible():
        page.locator("summary", has_text=re.compile(rf"^{path.split('.')[0]}", re.I)).click()
        field.wait_for(state="visible")
    return field


def test_a_new_user_trains_watches_clones_cancels_and_compares_runs(
    studio: Any, page: Any, studio_orm: None
) -> None:
    user = studio.new_user("web")
    slug = user.project_slug
    version = studio.demo_dataset(user)  # the project's data: the demo's arith rows
    # The ORM call ran beside Playwright's event loop, whose context keeps its own database
    # connection: close it now, or it outlives the test and blocks dropping the test database.
    connections.close_all()

    # Signing in: the app sends a visitor to the sign-in form and back where they were.
    page.goto(f"{studio.url}/p/{slug}/runs")
    page.wait_for_url(re.compile(r"/sign-in\?next="))
    page.shot("sign-in")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"**/p/{slug}/runs")
    expect(page.get_by_role("region", name="No runs yet")).to_be_visible()
    page.shot("runs-empty")
    page.shot("runs-empty", narrow=True)

    # A run from the demo preset: a bad value is refused at its field, then fixed.
    expect(page.get_by_role("link", name="Upload your data")).to_be_visible()
    page.get_by_role("link", name="Try the demo run").click()
    expect(page.get_by_role("heading", name="New run")).to_be_visible()
    expect(page.get_by_label("Preset", exact=True)).to_have_value("grpo-tiny-arith")
    page.get_by_label("Run name", exact=True).fill("arith")
    page.get_by_label("Training data", exact=True).select_option(f"v:{version}")
    total_steps = config_field(page, "trainer.total_steps")
    total_steps.fill("0")
    page.get_by_role("button", name="Create run").click()
    expect(total_steps).to_have_attribute("aria-invalid", "true")
    too_small = page.get_by_text("Input should be greater than or equal to 1", exact=True)
    expect(too_small).to_be_visible()
    page.shot("new-run-validation-error")
    total_steps.fill(str(STEPS))
    config_field(page, "trainer.val_before_train").uncheck()
    expect(page.get_by_text("2 changed")).to_be_visible()  # marked as changed from the preset
    page.shot("new-run")
    page.get_by_role("button", name="Create run").click()
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    parent_id = run_id_of(page)

    # The reward chart is drawn once and then extended live while the run trains.
    slot = page.locator(f'[data-chart-slot="{REWARD_KEY}"]')
    slot.scroll_into_view_if_needed(timeout=TRAIN_TIMEOUT_MS)
    chart = page.locator(f'figure[data-metric="{REWARD_KEY}"][data-ready="true"] [data-points]')
    expect(chart).to_be_visible(timeout=TRAIN_TIMEOUT_MS)
    page.shot("run-training")
    expect(page.locator("[data-status]").first).to_have_text("succeeded", timeout=TRAIN_TIMEOUT_MS)
    expect(chart).to_have_attribute("data-points", str(STEPS), timeout=10_000)
    live = int(chart.get_attribute("data-live-points") or 0)
    assert live >= 1, "no point reached the open chart through the run's live stream"
    page.shot("run-succeeded")

    # Wall time on the x axis: the choice is in the URL, and every point has a time to show.
    page.get_by_role("group", name="X axis").get_by_role("button", name="Wall time").click()
    page.wait_for_url(re.compile(r"[?&]axis=time"))
    on_time = page.locator(f'figure[data-metric="{REWARD_KEY}"][data-axis="time"] [data-points]')
    expect(on_time).to_have_attribute("data-points", str(STEPS))
    page.shot("run-wall-time")

    page.get_by_role("tab", name="Logs").click()
    logs = page.get_by_role("region", name="Logs")
    # The trainer logs warnings, resumes and checkpoints, not steps: lines or a clear empty state.
    expect(
        logs.get_by_test_id("log-lines").or_(logs.get_by_text("No log lines", exact=True))
    ).to_be_visible()
    expect(logs.get_by_label("Log level")).to_be_visible()
    page.shot("run-logs")
    page.get_by_role("tab", name="Checkpoints").click()
    checkpoints = page.get_by_role("table", name="Checkpoints")
    expect(checkpoints).to_contain_text(str(STEPS))
    expect(checkpoints.get_by_role("link", name="Download .tar")).to_be_visible()
    page.shot("run-checkpoints")

    # Clone with one edit, then cancel the clone.
    page.get_by_role("link", name="Clone with edits").click()
    expect(page.get_by_role("heading", name="Clone arith")).to_be_visible()
    config_field(page, "rollout.temperature").fill("0.7")
    page.shot("clone-form")
    page.get_by_role("button", name="Create clone").click()
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    clone_id = run_id_of(page)
    assert clone_id != parent_id
    expect(page.get_by_text(f"clone of #{parent_id}")).to_be_visible()
    page.get_by_role("button", name="Cancel run").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel run").click()
    expect(page.locator("[data-status]").first).to_have_text("cancelled", timeout=60_000)
    page.shot("clone-cancelled")

    # Compare: both runs' curves and only the config that differs.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Runs").click()
    page.get_by_role("checkbox", name="Select arith", exact=True).check()
    page.get_by_role("checkbox", name="Select arith-clone").check()
    page.shot("runs-list")
    page.get_by_role("button", name=re.compile(r"^Compare")).click()
    page.wait_for_url(re.compile(r"/compare\?runs="))
    diff = page.get_by_role("table", name="Config differences")
    expect(diff).to_contain_text("rollout.temperature")
    expect(diff).not_to_contain_text("trainer.total_steps")  # the clone kept the parent's steps
    page.locator(f'[data-chart-slot="{REWARD_KEY}"]').scroll_into_view_if_needed()
    expect(page.locator(f'figure[data-metric="{REWARD_KEY}"][data-ready="true"]')).to_be_visible()
    page.shot("compare")
    page.shot("compare", narrow=True)
