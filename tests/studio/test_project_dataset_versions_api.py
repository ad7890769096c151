"""A project's dataset versions in one list (`/api/dataset-versions/?project=`): the data
pickers' one request, scoped to the caller's projects."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from tests.verl_data import counting_answers, parquet_bytes, verl_rows


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


def upload(dataset: Dataset, tmp_path: Path) -> DatasetVersion:
    source = tmp_path / f"{dataset.name}-{dataset.versions.count() + 1}.parquet"
    source.write_bytes(parquet_bytes(verl_rows(counting_answers(2))))
    return add_version(
        dataset, source, source.name, ColumnMapping(), message="", user=dataset.created_by
    )


def test_it_lists_every_version_of_the_projects_datasets_by_name_newest_first(world, tmp_path):
    arith = Dataset.objects.create(project=world.project, name="arith", created_by=world.owner)
    words = Dataset.objects.create(project=world.project, name="words", created_by=world.owner)
    theirs = Dataset.objects.create(
        project=world.other_project, name="arith", created_by=world.outsider
    )
    for dataset in (words, arith, arith, theirs):
        upload(dataset, tmp_path)

    body = world.client("viewer").get("/api/dataset-versions/", {"project": "alpha"}).json()
    assert [(v["dataset"], v["number"]) for v in body] == [
        (arith.pk, 2),
        (arith.pk, 1),
        (words.pk, 1),
    ]
    assert body[0]["row_count"] == 2


def test_it_lists_nothing_of_a_project_you_are_not_in(world, tmp_path):
    upload(
        Dataset.objects.create(project=world.project, name="a", created_by=world.owner), tmp_path
    )
    outsider = world.client("outsider")
    assert outsider.get("/api/dataset-versions/", {"project": "alpha"}).json() == []
    assert [v["dataset"] for v in outsider.get("/api/dataset-versions/").json()] == []
