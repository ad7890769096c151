"""A run is made of the project's resources, end to end in the browser.

A new user uploads a dataset of a task of its own (reversing words, not arithmetic),
writes a reward for it, test-runs it and presses "Train on v1"; the run trains on the
live stack. Every training sample's prompt is from that dataset's training rows and
every validation sample's from its held-out rows; the run's Config tab, the compare page
and the HTML report name that dataset version and reward version.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import TERMINAL, LiveStudio, sign_in
from tests.browser.test_reward_editor import new_dataset, new_reward, run_test, save, type_code
from tests.browser.test_web_foundation import config_field

pytestmark = pytest.mark.browser

# 30 words, none inside another, so a prompt names exactly one row.
WORDS = [
    "apple",
    "brick",
    "cloud",
    "daisy",
    "eagle",
    "flute",
    "grape",
    "house",
    "igloo",
    "jelly",
    "knife",
    "lemon",
    "mango",
    "night",
    "ocean",
    "piano",
    "quilt",
    "river",
    "stone",
    "tiger",
    "umbra",
    "vivid",
    "waltz",
    "xenon",
    "yacht",
    "zebra",
    "amber",
    "bison",
    "cedar",
    "dwarf",
]
CSV = "word,reversed\n" + "".join(f"Reverse the word {w},{w[::-1]}\n" for w in WORDS)
REVERSAL = """def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 1.0 if solution_str.strip().startswith(str(ground_truth).strip()) else 0.0
"""
TRAIN_TIMEOUT_S = 600


def held_out_answers(studio: LiveStudio, version_id: int) -> set[str]:
    """The answers of the version's held-out rows, as the studio picks them."""
    import pyarrow.parquet as pq

    from studio.datasets.heldout import held_out_mask
    from studio.datasets.models import DatasetVersion

    version = DatasetVersion.objects.get(pk=version_id)
    table = pq.read_table(Path(studio.env["MEDIA_ROOT"]) / version.file.name)
    held = held_out_mask(table)
    answers = [str(a) for a in table.column("reversed").to_pylist()]
    connections.close_all()  # see test_web_foundation: the ORM call's connection
    return {answer for answer, out in zip(answers, held, strict=True) if out}


def test_a_run_on_an_uploaded_dataset_trains_and_validates_on_it_and_says_so(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    user = studio.new_user("prov")
    connections.close_all()
    sign_in(page, studio, user)

    # A dataset of its own task, and a reward written and tested for it.
    new_dataset(page, studio, user, "reversals")
    page.get_by_label("File (parquet, JSONL or CSV)").set_input_files(
        {"name": "reversals.csv", "mimeType": "text/csv", "buffer": CSV.encode()}
    )
    page.get_by_test_id("detected-columns").wait_for()
    page.get_by_label("Prompt column").select_option("word")
    page.get_by_label("Answer column").select_option("reversed")
    page.get_by_role("button", name="Upload").click()
    page.get_by_role("region", name="Stats").wait_for()
    assert page.get_by_test_id("row-count").inner_text() == "30"
    new_reward(page, studio, user, "exact reversal", "")
    type_code(page, REVERSAL)
    save(page, "starts with the reversed word")
    page.get_by_text("Saved as version 1.").wait_for()
    result = run_test(page)
    assert "0 failed" in result.inner_text()

    # "Train on v1": the form opens with the tested reward and dataset versions chosen.
    page.get_by_role("link", name=re.compile(r"^Train on v1")).click()
    page.wait_for_url(re.compile(r"/runs/new\?reward_version=\d+&dataset_version=\d+"))
    chosen = "s => s.selectedOptions[0] ? s.selectedOptions[0].textContent : ''"
    data = page.get_by_label("Training data", exact=True)
    expect(data).to_have_value(re.compile(r"^v:\d+$"))
    assert "reversals v1" in data.evaluate(chosen)
    assert "v1" in page.get_by_label("Reward version", exact=True).evaluate(chosen)
    expect(page.get_by_label("Run name", exact=True)).not_to_have_value("")  # suggested
    page.get_by_label("Run name", exact=True).fill("reversals")
    config_field(page, "trainer.total_steps").fill("2")
    config_field(page, "rollout.max_new_tokens").fill("8")
    page.shot("provenance-form")
    page.shot("provenance-form", narrow=True)
    page.get_by_role("button", name="Create run").click()
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    run = studio.wait_for_run(user, run_id, TERMINAL, TRAIN_TIMEOUT_S)
    assert run["status"] == "succeeded", run["last_error"]
    version_id = run["dataset_version"]
    assert run["inputs"]["dataset"]["name"] == "reversals"
    assert run["inputs"]["reward"]["name"] == "exact reversal"

    # Every sample's prompt is from this dataset: training rows train, held-out validate.
    api = studio.api(user)
    samples = api.get(
        f"{studio.url}/api/samples/", params={"run": run_id, "page_size": 500}, timeout=30
    ).json()["results"]
    held = held_out_answers(studio, version_id)
    assert len(held) == 3  # 10% of 30 rows
    reversed_words = {w[::-1] for w in WORDS}
    train = [s for s in samples if s["split"] == "train"]
    val = [s for s in samples if s["split"] == "val"]
    assert train and val
    assert {s["ground_truth"] for s in train} <= reversed_words - held
    assert {s["ground_truth"] for s in val} <= held
    for sample in samples:
        assert f"Reverse the word {sample['ground_truth'][::-1]}" in sample["prompt"]

    # The run's Config tab names its inputs.
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/{run_id}")
    page.get_by_role("tab", name="Config").click()
    panel = page.get_by_role("tabpanel")
    # The dataset version links twice: as the training data and as what is held out of it.
    expect(panel.get_by_role("link", name="reversals v1")).to_have_count(2)
    expect(panel.get_by_role("link", name=re.compile(r"exact reversal v1"))).to_be_visible()
    expect(panel.get_by_text("Loading the base config")).to_have_count(0)
    page.shot("provenance-config-tab")
    page.shot("provenance-config-tab", narrow=True)

    # A second run on a second version of the data: compare and the report tell them apart.
    dataset_id = run["inputs"]["dataset"]["dataset"]
    more = CSV + "".join(f"Reverse the word {w},{w[::-1]}\n" for w in ("frost", "glyph"))
    added = api.post(
        f"{studio.url}/api/datasets/{dataset_id}/versions/",
        files={"file": ("reversals.csv", more.encode())},
        data={"prompt_key": "word", "answer_key": "reversed", "message": "two more"},
        timeout=60,
    )
    assert added.status_code == 201, added.text
    second = api.post(
        f"{studio.url}/api/runs/{run_id}/clone/",
        json={"name": "reversals again", "dataset": dataset_id},
        timeout=30,
    )
    assert second.status_code == 201, second.text
    other = second.json()
    api.post(f"{studio.url}/api/runs/{other['id']}/cancel/", json={}, timeout=30)
    page.goto(f"{studio.url}/p/{user.project_slug}/compare?runs={run_id},{other['id']}")
    inputs = page.get_by_role("table", name="Run inputs")
    expect(inputs).to_contain_text("reversals v1")
    expect(inputs).to_contain_text("reversals v2")
    expect(inputs.get_by_text("differs")).to_have_count(2)  # the data, and its held-out rows
    expect(inputs).to_contain_text("exact reversal v1")
    page.shot("provenance-compare")
    page.shot("provenance-compare", narrow=True)
    report = api.get(
        f"{studio.url}/api/runs/report", params={"ids": f"{run_id},{other['id']}"}, timeout=60
    )
    assert report.status_code == 200, report.text[:500]
    html = report.text
    assert "<h2>Inputs</h2>" in html
    assert "reversals v1 (30 rows)" in html and "reversals v2 (32 rows)" in html
    assert "exact reversal v1" in html
