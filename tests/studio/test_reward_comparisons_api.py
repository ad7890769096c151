"""A/B of two reward versions on the same rows: the second test-run scores the first
one's responses again; the comparison puts the rows that disagree first."""

from __future__ import annotations

import pytest

from studio.rewards import lifecycle
from studio.rewards.models import RewardTestRun, RewardVersion
from tests.rewards.conftest import needs_full_sandbox
from tests.rewards.studio_objects import make_dataset_version, make_reward_version

pytestmark = needs_full_sandbox()
URL = "/api/reward-comparisons/"
# Version 2 only accepts even answers: it disagrees with version 1 on rows 1 and 3.
EVEN_ONLY = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
    "    right = solution_str.strip() == str(ground_truth).strip()\n"
    "    return float(right and int(ground_truth) % 2 == 0)\n"
)


@pytest.fixture
def versions(world, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    dataset = make_dataset_version(world.project, world.owner, tmp_path, ["1", "2", "3", "4"])
    v1 = make_reward_version(world.project, world.owner)
    v2 = RewardVersion.objects.create(
        function=v1.function, number=2, code=EVEN_ONLY, code_hash="1" * 64, author=world.owner
    )
    return dataset, v1, v2


def scored(world, version, dataset) -> int:
    url = f"/api/reward-functions/{version.function_id}/versions/{version.number}/test/"
    body = {"dataset_version": dataset.pk, "rows": 4}
    response = world.client("member").post(url, body, format="json")
    assert response.status_code == 200, response.json()
    return int(response.json()["test_run"])


def test_scoring_a_test_runs_rows_with_another_version_puts_disagreements_first(world, versions):
    dataset, v1, v2 = versions
    base = scored(world, v1, dataset)
    started = world.client("member").post(
        URL, {"base_test_run": base, "reward_version": v2.pk}, format="json"
    )
    assert started.status_code == 202, started.json()
    again = RewardTestRun.objects.get(pk=started.json()["id"])
    assert again.source == "completions" and again.version_id == v2.pk
    assert [c["extra_info"]["index"] for c in again.completions] == [0, 1, 2, 3]
    lifecycle.run_inline(again)  # what the worker does

    body = world.client("viewer").get(URL, {"a": base, "b": again.pk}).json()
    assert body["differing"] == 2 and body["same_inputs"] is True
    assert [(r["index"], r["differs"]) for r in body["rows"]] == [
        (0, True),
        (2, True),
        (1, False),
        (3, False),
    ]
    first = body["rows"][0]
    assert (first["score_a"], first["score_b"], first["delta"]) == (1.0, 0.0, -1.0)


def test_a_test_run_that_has_not_finished_cannot_be_compared(world, versions):
    dataset, v1, v2 = versions
    base = scored(world, v1, dataset)
    started = world.client("member").post(
        URL, {"base_test_run": base, "reward_version": v2.pk}, format="json"
    )
    response = world.client("member").get(URL, {"a": base, "b": started.json()["id"]})
    assert response.status_code == 400
    assert "has not succeeded (it is queued)" in response.json()["error"]["message"]


def test_viewers_compare_but_cannot_start_and_outsiders_see_nothing(world, versions):
    dataset, v1, v2 = versions
    base = scored(world, v1, dataset)
    body = {"base_test_run": base, "reward_version": v2.pk}
    assert world.client("viewer").post(URL, body, format="json").status_code == 403
    assert world.client("outsider").post(URL, body, format="json").status_code == 404
    assert world.client("outsider").get(URL, {"a": base, "b": base}).status_code == 404


def test_a_version_of_another_project_is_refused_by_name(world, versions, tmp_path):
    dataset, v1, _ = versions
    base = scored(world, v1, dataset)
    foreign = make_reward_version(world.other_project, world.outsider)
    response = world.client("member").post(
        URL, {"base_test_run": base, "reward_version": foreign.pk}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["reward_version"]
