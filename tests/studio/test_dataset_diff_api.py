"""The diff of two dataset versions: rows matched by extra_info.index (else by a hash of
the prompt), added, removed and changed, the schema's changes, paged, and only for
those who may read the dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from tests.verl_data import counting_answers, parquet_bytes, verl_rows


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


def upload(dataset: Dataset, rows: list[dict[str, Any]], tmp_path: Path) -> DatasetVersion:
    source = tmp_path / f"v{dataset.versions.count() + 1}.parquet"
    source.write_bytes(parquet_bytes(rows))
    return add_version(
        dataset, source, source.name, ColumnMapping(), message="", user=dataset.created_by
    )


@pytest.fixture
def dataset(world) -> Dataset:
    return Dataset.objects.create(project=world.project, name="arith", created_by=world.owner)


def test_rows_are_matched_by_their_index_and_paged(world, dataset, tmp_path):
    first = verl_rows(counting_answers(6))
    upload(dataset, first, tmp_path)
    second = [dict(row) for row in first if row["extra_info"]["index"] != 2]  # row 2 removed
    second[0] = {**second[0], "reward_model": {"style": "rule", "ground_truth": "one"}}
    second.append({**first[0], "extra_info": {"index": 99}})  # same prompt, a new index
    upload(dataset, second, tmp_path)

    viewer = world.client("viewer")
    body = viewer.get(f"/api/datasets/{dataset.pk}/diff/", {"from": 1, "to": 2}).json()
    assert body["counts"] == {"added": 1, "removed": 1, "changed": 1, "unchanged": 4}
    assert [(r["key"], r["change"]) for r in body["rows"]] == [
        ("index 0", "changed"),
        ("index 99", "added"),
        ("index 2", "removed"),
    ]
    changed = body["rows"][0]
    assert changed["columns"] == ["reward_model"]
    assert changed["before"]["reward_model"]["ground_truth"] == "1"
    assert changed["after"]["reward_model"]["ground_truth"] == "one"
    assert body["rows"][2]["after"] is None and body["columns"] == []

    page = viewer.get(
        f"/api/datasets/{dataset.pk}/diff/", {"from": 1, "to": 2, "offset": 1, "limit": 1}
    ).json()
    assert (page["total"], [r["key"] for r in page["rows"]]) == (3, ["index 99"])
    only = viewer.get(f"/api/datasets/{dataset.pk}/diff/", {"change": "removed"}).json()
    assert (only["from_number"], only["to_number"], only["total"]) == (1, 2, 1)


def test_rows_without_an_index_are_matched_by_prompt_and_schema_changes_are_listed(
    world, dataset, tmp_path
):
    def rows(answers: list[str]) -> list[dict[str, Any]]:
        return [
            {"prompt": [{"role": "user", "content": f"q{i}"}], "data_source": "x", "answer": a}
            for i, a in enumerate(answers)
        ]

    upload(dataset, [{**r, "answer": int(r["answer"])} for r in rows(["1", "2", "3"])], tmp_path)
    newer = [{**r, "level": 1} for r in rows(["1", "2", "4"])]
    upload(dataset, newer, tmp_path)

    body = world.client("member").get(f"/api/datasets/{dataset.pk}/diff/?from=1&to=2").json()
    assert {(c["name"], c["change"]) for c in body["columns"]} == {
        ("answer", "type_changed"),
        ("level", "added"),
    }
    assert body["counts"]["added"] == 0 and body["counts"]["removed"] == 0
    assert body["counts"]["changed"] == 3  # every row: a new column, a retyped answer
    assert all(r["key"].startswith("prompt ") for r in body["rows"])


def test_bad_or_missing_versions_and_other_projects(world, dataset, tmp_path):
    upload(dataset, verl_rows(counting_answers(2)), tmp_path)
    member = world.client("member")
    url = f"/api/datasets/{dataset.pk}/diff/"
    first_only = member.get(url)
    assert first_only.status_code == 400
    assert "first" in first_only.json()["error"]["message"]
    assert member.get(url, {"from": 1, "to": 7}).status_code == 404
    assert member.get(url, {"from": 0, "to": 1}).status_code == 400
    assert member.get(url, {"from": 1, "to": 1}).json()["counts"]["unchanged"] == 2
    assert world.client("outsider").get(url, {"from": 1, "to": 1}).status_code == 404
    assert world.client(None).get(url, {"from": 1, "to": 1}).status_code in (401, 403)
