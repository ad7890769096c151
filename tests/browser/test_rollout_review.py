"""Rollout review end to end, on the shared demo run that really trained: the explorer's
step slider and reward filter, a group's sorted scores and zero-spread flag, the
per-token view, one prompt across two steps, a label set with the keyboard, and the
labelled samples exported as a new dataset version."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, TrainedRun, sign_in, wait_for_sample_list


def row_values(page: Any, attribute: str) -> list[str]:
    return page.eval_on_selector_all(
        "[data-sample-id]", f"rows => rows.map(r => r.getAttribute('{attribute}'))"
    )


def run_samples(studio: LiveStudio, run: TrainedRun) -> list[dict[str, Any]]:
    """The run's newest 500 samples (the demo run stores fewer)."""
    response = studio.api(run.owner).get(
        f"{studio.url}/api/samples/", params={"run": run.id, "page_size": 500}, timeout=30
    )
    return list(response.json()["results"])


def wait_for_rows(page: Any) -> None:
    page.wait_for_selector("[data-sample-id]")
    page.wait_for_selector("[data-testid=list-status][data-state=ready]")


def test_a_user_reviews_the_rollouts_of_a_trained_run(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    api = studio.api(trained_run.owner)
    run_api = f"{studio.url}/api/runs/{trained_run.id}/rollouts"
    steps = [s["step"] for s in api.get(f"{run_api}/steps", timeout=30).json()["steps"]]
    assert len(steps) >= 2, steps
    sign_in(page, studio, trained_run.owner)
    base = f"{studio.url}/p/{trained_run.project_slug}/runs/{trained_run.id}/rollouts"

    # The explorer opens on every step; the step slider narrows it to the first step.
    page.goto(base)
    wait_for_rows(page)
    page.shot("explorer")
    page.shot("explorer", narrow=True)
    page.get_by_label("Last step").focus()
    page.keyboard.press("Home")
    page.wait_for_url(re.compile(rf"[?&]step={steps[0]}\b"))
    wait_for_sample_list(page, step_min=steps[0], step_max=steps[0])
    assert set(row_values(page, "data-step")) == {str(steps[0])}

    # A reward range: only samples scoring at least the run's best score stay.
    scores = [s["score"] for s in run_samples(studio, trained_run)]
    best = max(scores)
    page.goto(f"{base}?score_min={best}")
    wait_for_rows(page)
    page.get_by_label("Score from").fill(str(best))
    page.get_by_label("Score from").press("Enter")
    assert all(float(v) >= best for v in row_values(page, "data-score"))
    page.shot("reward-filter")

    # Enter opens the selected sample's group: scores sorted, the zero-spread flag right.
    page.goto(base)
    wait_for_rows(page)
    drawn = page.locator("[data-sample-id][aria-selected=true]")
    expect(drawn).to_have_count(1)  # drawn, not only in the URL: a key acts on what is
    page.get_by_test_id("sample-list").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("[data-sample-id]").nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/rollouts/group/"))
    page.wait_for_selector("[data-testid=group-samples] article")
    group_scores = [
        float(v)
        for v in page.eval_on_selector_all(
            "[data-testid=group-samples] article", "cards => cards.map(c => c.dataset.score)"
        )
    ]
    assert group_scores == sorted(group_scores, reverse=True)
    step, group_id = map(unquote, page.url.rsplit("/group/", 1)[1].split("/"))
    group = api.get(
        f"{studio.url}/api/samples/group/",
        params={"run": trained_run.id, "step": step, "group_id": group_id},
        timeout=30,
    ).json()
    assert len(group_scores) == group["count"]
    flag = "zero-spread" if max(group_scores) == min(group_scores) else "learning-signal"
    assert page.get_by_test_id(flag).is_visible()
    page.shot("group")
    page.shot("group", narrow=True)

    # The per-token view of a sample that recorded token data.
    with_tokens = next(s for s in run_samples(studio, trained_run) if s["has_token_data"])
    detail = api.get(f"{studio.url}/api/samples/{with_tokens['id']}/", timeout=30).json()
    page.goto(f"{base}/samples/{with_tokens['id']}/tokens")
    strip = page.get_by_test_id("token-strip")
    strip.locator("span").first.wait_for()
    shown = strip.locator("span").count()
    assert shown == min(len(detail["token_data"]["token_ids"]), 512)
    strip.locator("span").nth(0).hover()
    assert "logprobs" in page.get_by_test_id("token-details").inner_text()
    page.get_by_label("Colour by").select_option("advantages")
    assert "diverging" in page.get_by_test_id("token-legend").inner_text()
    page.shot("tokens")
    page.shot("tokens", narrow=True)

    # One prompt across two steps, with a word diff of its first and last responses.
    prompts = api.get(f"{run_api}/prompts", timeout=30).json()["prompts"]
    repeated = next(p for p in prompts if p["steps"] >= 2)
    page.goto(f"{base}/samples/{repeated['example_sample']}/timeline")
    page.wait_for_selector("[data-testid=diff]")
    timeline_steps = page.eval_on_selector_all(
        "article[data-step]", "a => a.map(x => x.dataset.step)"
    )
    assert len(set(timeline_steps)) >= 2
    page.shot("timeline")
    page.shot("timeline", narrow=True)

    # A label with the keyboard: key 1 marks the selected sample "good".
    page.goto(base)
    wait_for_rows(page)
    drawn = page.locator("[data-sample-id][aria-selected=true]")
    expect(drawn).to_have_count(1)  # the key acts on the selection the page has drawn
    selected = int(drawn.get_attribute("data-sample-id") or "")
    page.get_by_test_id("sample-list").focus()
    page.keyboard.press("1")
    page.get_by_role("button", name="1 good").and_(page.locator("[aria-pressed=true]")).wait_for()
    labels = api.get(f"{studio.url}/api/samples/{selected}/", timeout=30).json()["labels"]
    assert [(x["label"], x["author"]) for x in labels] == [("good", trained_run.owner.username)]

    # Export the labelled samples as a new version of a dataset, then find it.
    dataset = api.post(
        f"{studio.url}/api/datasets/",
        json={"project": trained_run.project_slug, "name": "reviewed"},
        timeout=30,
    ).json()
    page.reload()
    wait_for_rows(page)
    page.get_by_role("radio", name="New version of an existing dataset").check()
    page.get_by_label("Dataset", exact=True).select_option(str(dataset["id"]))
    page.get_by_role("button", name="Export…").click()
    confirm = page.get_by_role("dialog", name="Confirm the export")
    confirm.filter(has_text="Adds v1 to dataset reviewed").wait_for()
    assert (
        api.get(f"{studio.url}/api/datasets/{dataset['id']}/", timeout=30).json()["version_count"]
        == 0
    )  # the confirmation's preview stores nothing
    confirm.get_by_role("button", name="Confirm").click()
    page.get_by_role("status").filter(has_text="Exported 1 row as reviewed v1.").wait_for()
    page.shot("exported")
    found = api.get(f"{studio.url}/api/datasets/{dataset['id']}/", timeout=30).json()
    assert found["version_count"] == 1
    assert (found["latest_version"]["number"], found["latest_version"]["row_count"]) == (1, 1)
