"""The rough edges a new user hit, each checked in the browser: a missing run or dataset
says so at once; the explorer's keys work as the page loads and "good"/"bad" are one
verdict, toggled by its key; reward syntax errors are marked while typing and the reward
diff has the page's width; a dataset's two versions are compared; and the layout faults,
measured: the sidebar's column runs the page's full height, the compare legend keeps
clear of the axis title.

The runs here are reported through the trainer's ingest endpoint (nothing trains), so
the module needs the live studio but not the shared demo run.
"""

from __future__ import annotations

import io
import re
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import requests
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, StudioUser, sign_in

T0 = 1_732_270_000.0


def sample(i: int, step: int = 1) -> dict[str, Any]:
    return {
        "step": step,
        "group_id": f"g{i // 2}",
        "data_source": "arith",
        "prompt": f"What is {i} + 1?",
        "response": f"The answer is {i + 1}.",
        "ground_truth": str(i + 1),
        "score": float(i % 2),
        "components": {"answer": float(i % 2)},
        "advantage": 0.5 - i % 2,
        "prompt_length": 8,
        "response_length": 6,
        "finish_reason": "stop",
    }


def reported_run(
    studio: LiveStudio, owner: StudioUser, name: str, records: list[tuple[str, dict[str, Any]]]
) -> int:
    """A run whose trainer reported `records` (kind, data) between "running" and
    "succeeded", through the ingest endpoint with the attempt's token."""
    from studio.projects.models import Project
    from studio.runs import lifecycle
    from studio.runs.configs import resolve, resources_of
    from studio.runs.models import Run, RunAttempt, RunStatus
    from studio.runs.tokens import issue_ingest_token

    resolved = resolve(preset="grpo-tiny-arith")
    run = Run.objects.create(
        project=Project.objects.get(slug=owner.project_slug),
        name=name,
        preset="grpo-tiny-arith",
        config=resolved.tree,
        resources=resources_of(resolved.config),
        created_by_id=owner.id,
        status=RunStatus.STARTING,
    )
    lifecycle.record_creation(run, "created", run.created_by)
    attempt = RunAttempt.objects.create(run=run, number=1, submission_id=f"re-{run.pk}-1")
    token = issue_ingest_token(attempt)
    connections.close_all()  # no connection of this thread may outlive the test
    body = [("status", {"status": "running"}), *records, ("status", {"status": "succeeded"})]
    sent = [
        {"seq": i, "kind": kind, "time": T0 + i, "data": data}
        for i, (kind, data) in enumerate(body)
    ]
    response = requests.post(
        f"{studio.url}/api/ingest/runs/{run.pk}/records",
        json={"attempt": 1, "records": sent},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.json()["stored"] == len(sent), response.text
    return int(run.pk)


def answers_to(page: Any, path: str) -> list[int]:
    """The statuses the server gave to the page's requests for `path` (live list)."""
    statuses: list[int] = []
    page.on(
        "response",
        lambda r: statuses.append(r.status) if urlsplit(r.url).path == path else None,
    )
    return statuses


def test_a_missing_run_dataset_or_reward_function_says_so_at_once_without_hydration_warnings(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    """Checked by what the page asked, not by a clock: a 404 is never retried (the query
    client's retry rule). A time bound (1.5 s) failed a CI run on a loaded 2-core VM at
    2.1 s with no retry made (2026-11-30), so the requests are counted instead."""
    owner = studio.new_user("missing")
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    sign_in(page, studio, owner)

    for kind, resource in (
        ("run", "runs"),
        ("dataset", "datasets"),
        ("reward function", "reward-functions"),
    ):
        statuses = answers_to(page, f"/api/{resource}/987654/")
        page.goto(f"{studio.url}/p/{owner.project_slug}/{resource}/987654")
        # With retries the message waits out their back-off (1 + 2 + 4 s, past expect's
        # 5 s): with the retry rule switched off, this test failed here.
        expect(page.get_by_text(f"Could not load {kind} #987654")).to_be_visible()
        # Says what is missing, and offers the way back, not "Try again": asking again
        # gets the same 404.
        expect(page.get_by_text(f"There is no {kind} #987654 in your projects.")).to_be_visible()
        expect(page.get_by_role("button", name="Try again")).to_have_count(0)
        back = page.get_by_role("link", name=f"All {kind}s")
        expect(back).to_have_attribute("href", f"/p/{owner.project_slug}/{resource}")
        # Asked once: by the route's loader. The page mounting on that fresh 404 does not
        # ask again (queryClient's shouldRetryOnMount; without it: [404, 404]).
        assert statuses == [404], statuses
        page.shot(f"missing-{kind.replace(' ', '-')}", narrow=kind != "run")
    assert not [w for w in warnings if "HydrateFallback" in w], warnings


def test_explorer_keys_work_on_load_and_good_or_bad_is_one_toggled_verdict(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    owner = studio.new_user("labels")
    run_id = reported_run(
        studio,
        owner,
        "labelled",
        [("samples", {"step": 1, "samples": [sample(i) for i in range(6)]})],
    )
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/runs/{run_id}/rollouts")
    page.wait_for_selector("[data-testid=list-status][data-state=ready]")
    rows = page.eval_on_selector_all("[data-sample-id]", "rs => rs.map(r => r.dataset.sampleId)")
    # The first row drawn as selected, not only named in the URL: react-router writes the
    # URL at once and renders the new selection in a transition, so a key pressed between
    # the two acts on the page as drawn, where nothing is selected yet, and "j" picks the
    # first row again (docs/operations.md, "Tests").
    expect(page.locator(f"[data-sample-id='{rows[0]}']")).to_have_attribute("aria-selected", "true")

    # Nothing clicked, nothing focused: the keys reach the explorer.
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"[?&]sample={rows[1]}\b"))
    # The page has drawn the move (the URL changes first): the next key acts on this row.
    expect(page.locator(f"[data-sample-id='{rows[1]}']")).to_have_attribute("aria-selected", "true")
    labels = page.get_by_role("group", name="Labels")
    good = labels.get_by_role("button", name=re.compile(r"good$"))
    bad = labels.get_by_role("button", name=re.compile(r"bad$"))
    expect(good).to_have_attribute("aria-pressed", "false")

    page.keyboard.press("1")  # good
    expect(good).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("2")  # bad replaces good
    expect(bad).to_have_attribute("aria-pressed", "true")
    expect(good).to_have_attribute("aria-pressed", "false")
    page.shot("bad-replaced-good")
    page.shot("bad-replaced-good", narrow=True)
    page.keyboard.press("2")  # and the same key takes it off again
    expect(bad).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_label("Who labelled this")).to_have_count(0)
    detail = studio.api(owner).get(f"{studio.url}/api/samples/{rows[1]}/", timeout=30).json()
    assert detail["labels"] == []

    # Typing in a field is typing, not a shortcut.
    search = page.get_by_label("Search prompt and response")
    search.fill("")
    search.press("1")
    expect(search).to_have_value("1")
    expect(good).to_have_attribute("aria-pressed", "false")


LONG_LINE = "    reasons = " + repr(["the answer is right"] * 12) + "  # end-of-line-marker"


def test_reward_syntax_errors_are_marked_while_typing_and_the_diff_is_full_width(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    owner = studio.new_user("reward")
    api = studio.api(owner)
    created = api.post(
        f"{studio.url}/api/reward-functions/",
        json={"project": owner.project_slug, "name": "exact", "from_template": "exact_match"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    function = created.json()["id"]
    first = api.get(f"{studio.url}/api/reward-functions/{function}/versions/1/", timeout=30).json()
    longer = (
        first["code"].rstrip("\n") + "\n\n\ndef explain():\n" + LONG_LINE + "\n    return reasons\n"
    )
    saved = api.post(
        f"{studio.url}/api/reward-functions/{function}/versions/",
        json={"code": longer, "message": "a long line"},
        timeout=30,
    )
    assert saved.status_code == 201, saved.text

    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/reward-functions/{function}")
    editor = page.locator(".cm-content").first
    editor.click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.insert_text("\n\ndef broken(:\n    pass\n")
    # No save: the check runs once typing pauses, and marks the line.
    page.locator(".cm-lintRange-error").first.wait_for(timeout=5_000)
    problems = page.get_by_role("list", name="Problems")
    expect(problems).to_contain_text("Line")
    page.shot("live-syntax-error")

    versions = page.get_by_role("region", name="Versions")
    versions.get_by_role("button", name="Show diff").click()
    diff = page.get_by_test_id("reward-diff")
    expect(diff.locator(".cm-mergeViewEditor").first).to_be_visible()
    diff_box = diff.bounding_box()
    page_box = page.locator("#main > div").bounding_box()
    assert diff_box is not None and page_box is not None
    assert diff_box["width"] > 0.85 * page_box["width"], (diff_box, page_box)
    # The long line's end is reachable: its side scrolls sideways instead of cutting it.
    newer = diff.locator(".cm-mergeViewEditor").nth(1)
    reached = newer.evaluate(
        """pane => {
          const scrolling = [pane, ...pane.querySelectorAll('.cm-scroller')]
            .find(e => e.scrollWidth > e.clientWidth + 1);
          if (!scrolling) return 'nothing scrolls sideways';
          scrolling.scrollLeft = scrolling.scrollWidth;
          const walker = document.createTreeWalker(pane, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode()) && !node.data.includes('end-of-line-marker'));
          if (!node) return 'the long line is not drawn';
          const range = document.createRange();
          range.selectNodeContents(node);
          const text = range.getBoundingClientRect();
          const box = scrolling.getBoundingClientRect();
          return text.right <= box.right + 1
            ? 'reached' : `hidden past ${box.right}: text ends at ${text.right}`;
        }"""
    )
    assert reached == "reached", reached
    page.evaluate("window.scrollTo(0, 0)")  # a full-page shot from the top
    page.shot("full-width-diff")
    page.shot("full-width-diff", narrow=True)


def version_parquet(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def arith_rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "data_source": "arith",
            "prompt": [{"role": "user", "content": f"What is {i} + 1?"}],
            "reward_model": {"style": "rule", "ground_truth": str(i + 1)},
            "extra_info": {"index": i},
        }
        for i in range(count)
    ]


def test_two_dataset_versions_are_compared_and_the_sidebar_runs_the_full_page(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    owner = studio.new_user("diff")
    api = studio.api(owner)
    dataset = api.post(
        f"{studio.url}/api/datasets/",
        json={"project": owner.project_slug, "name": "arith"},
        timeout=30,
    ).json()["id"]
    first = arith_rows(30)
    second = [row for row in first if row["extra_info"]["index"] != 3]
    second[0] = {**second[0], "reward_model": {"style": "rule", "ground_truth": "one"}}
    second += arith_rows(32)[30:]  # two new rows
    for number, rows in enumerate([first, second], start=1):
        sent = api.post(
            f"{studio.url}/api/datasets/{dataset}/versions/",
            files={"file": (f"v{number}.parquet", version_parquet(rows))},
            timeout=60,
        )
        assert sent.status_code == 201, sent.text

    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/datasets/{dataset}")
    compare = page.get_by_role("region", name="Compare versions")
    counts = compare.get_by_test_id("diff-counts")
    expect(counts).to_contain_text("2 added")
    expect(counts).to_contain_text("1 removed")
    expect(counts).to_contain_text("1 changed")
    changed = compare.locator("[data-testid=diff-row][data-change=changed]")
    expect(changed).to_contain_text("index 0")
    expect(changed).to_contain_text('"ground_truth":"one"')
    compare.get_by_label("Rows to show").select_option("removed")
    expect(compare.get_by_test_id("diff-row")).to_have_count(1)
    expect(compare.get_by_test_id("diff-row")).to_contain_text("index 3")
    compare.get_by_label("Rows to show").select_option("")
    expect(compare.get_by_test_id("diff-row")).to_have_count(4)

    # A page taller than the window: the sidebar's column reaches the page's bottom.
    page.set_viewport_size({"width": 1440, "height": 600})
    geometry = page.evaluate(
        """() => {
          const element = document.querySelector('[data-testid=sidebar-column]');
          const column = element.getBoundingClientRect();
          const bar = document.querySelector('header').getBoundingClientRect();
          return { top: column.top + scrollY, bottom: column.bottom + scrollY, bar: bar.bottom,
                   page: document.documentElement.scrollHeight, window: innerHeight,
                   background: getComputedStyle(element).backgroundColor };
        }"""
    )
    assert geometry["page"] > 1.5 * geometry["window"], geometry
    assert abs(geometry["bottom"] - geometry["page"]) <= 1, geometry
    assert abs(geometry["top"] - geometry["bar"]) <= 1, geometry
    assert geometry["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), geometry
    page.set_viewport_size({"width": 1440, "height": 900})
    page.evaluate("window.scrollTo(0, 0)")  # a full-page shot from the top
    page.shot("dataset-diff")
    page.shot("dataset-diff", narrow=True)


def boxes_intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_compare_legend_keeps_clear_of_the_axis_title(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    owner = studio.new_user("compare")

    def metrics(rate: float) -> list[tuple[str, dict[str, Any]]]:
        return [
            ("metrics", {"step": step, "values": {"critic/score/mean": rate * step}})
            for step in range(1, 6)
        ]

    runs = [
        reported_run(studio, owner, name, metrics(rate))
        for name, rate in (("baseline", 0.1), ("longer name run", 0.15))
    ]
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/compare?runs={runs[0]},{runs[1]}")
    chart = page.locator(".js-plotly-plot", has=page.locator("g.legend")).first
    chart.locator("g.legend .traces").first.wait_for()
    legend = chart.locator("g.legend .bg").bounding_box()
    title = chart.locator(".g-xtitle text").bounding_box()
    ticks = [tick.bounding_box() for tick in chart.locator(".xtick text").all()]
    assert legend is not None and title is not None and ticks and None not in ticks
    assert not boxes_intersect(legend, title), (legend, title)
    # Nor does the axis title land on the tick labels (plotly squeezes a plot whose legend
    # has no room until it does).
    for tick in ticks:
        assert not boxes_intersect(legend, tick), (legend, tick)
        assert not boxes_intersect(title, tick), (title, tick)
    page.evaluate("window.scrollTo(0, 0)")  # a full-page shot from the top
    page.shot("compare-legend")
    page.shot("compare-legend", narrow=True)
