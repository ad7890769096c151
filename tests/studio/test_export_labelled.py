"""Exporting a run's labelled samples: to a new dataset (the default) or as a new version
of an existing one, with a dry run that says what would be stored and stores nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.files.storage import default_storage

from studio.datasets.heldout import held_out_mask
from studio.datasets.models import Dataset, DatasetVersion
from studio.projects.models import AuditEvent
from studio.runs.models import Run
from tests.studio.test_samples_api import label, make_run, make_sample
from trainer.config.schema import DataConfig
from trainer.data.formats import read_prompt_records


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def run(world) -> Run:
    """A run with three labelled prompts (good, good, bad) and one unlabelled sample."""
    run = make_run(world.project, name="gsm8k-grpo")
    label(make_sample(run, prompt="What is 6 * 7?", ground_truth="42"), "good", world.member)
    label(make_sample(run, prompt="Name a prime.", ground_truth="7"), "good", world.member)
    label(make_sample(run, prompt="What is 1 / 0?", ground_truth="none"), "bad", world.member)
    make_sample(run, prompt="Not labelled")
    return run


@pytest.fixture
def dataset(world, media) -> Dataset:
    """An existing dataset whose v1 holds the one-row export of another run."""
    dataset = Dataset.objects.create(project=world.project, name="gsm8k", created_by=world.owner)
    other = make_run(world.project, name="earlier")
    label(make_sample(other, prompt="Earlier prompt", ground_truth="1"), "good", world.owner)
    response = world.client("owner").post(
        f"/api/runs/{other.pk}/export-labelled", {"dataset": dataset.pk}, format="json"
    )
    assert response.status_code == 201, response.content
    return dataset


def url(run: Run) -> str:
    return f"/api/runs/{run.pk}/export-labelled"


def stored(media: Path) -> tuple[int, int, int, int]:
    """Datasets, versions, audit events and stored files: what a dry run must not add."""
    files = len(list(media.rglob("*.parquet")))
    return (
        Dataset.objects.count(),
        DatasetVersion.objects.count(),
        AuditEvent.objects.count(),
        files,
    )


def test_exporting_to_a_new_dataset_creates_it_holding_the_rows_as_its_v1(world, run, media):
    response = world.client("member").post(
        url(run), {"new_dataset": "gsm8k-grpo-labelled"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    created = Dataset.objects.get(project=world.project, name="gsm8k-grpo-labelled")
    assert (body["dataset"], body["number"], body["row_count"]) == (created.pk, 1, 3)
    assert created.created_by == world.member
    version = created.versions.get()
    records = read_prompt_records(
        Path(default_storage.path(str(version.file.name))), DataConfig(format="verl")
    )
    assert sorted(r.extra_info["label"] for r in records) == ["bad", "good", "good"]
    assert AuditEvent.objects.filter(action="dataset.create", actor=world.member).exists()
    event = AuditEvent.objects.get(action="dataset.export_labelled")
    assert event.actor == world.member


def test_exporting_to_an_existing_dataset_adds_its_next_version(world, run, dataset):
    response = world.client("member").post(
        url(run), {"dataset": dataset.pk, "label": "good"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["dataset"], body["number"], body["row_count"]) == (dataset.pk, 2, 2)
    assert dataset.versions.order_by("-number").first().row_count == 2
    assert Dataset.objects.filter(project=world.project).count() == 1


def test_a_dry_run_to_a_new_dataset_says_what_it_would_hold_and_stores_nothing(world, run, media):
    before = stored(media)
    response = world.client("member").post(
        url(run), {"new_dataset": "fresh", "dry_run": True}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    examples = body.pop("examples")
    assert body == {
        "rows": 3,
        "samples": 3,
        "labels": [{"name": "good", "count": 2}, {"name": "bad", "count": 1}],
        "from_text": 3,  # stored without their dataset row
        "new_dataset": True,
        "dataset": None,
        "name": "fresh",
        "number": 1,
        "latest_number": None,
        "latest_rows": None,
    }
    assert examples[0] == {
        "data_source": "gsm8k",
        "prompt": [{"role": "user", "content": "What is 6 * 7?"}],
        "ground_truth": "42",
        "label_names": "good",
    }
    assert len(examples) == 3
    assert stored(media) == before
    assert not Dataset.objects.filter(name="fresh").exists()


def test_a_dry_run_to_an_existing_dataset_names_the_version_it_would_become(
    world, run, dataset, media
):
    before = stored(media)
    response = world.client("member").post(
        url(run), {"dataset": dataset.pk, "label": "bad", "dry_run": True}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert [e["label_names"] for e in body.pop("examples")] == ["bad"]
    assert body == {
        "rows": 1,
        "samples": 1,
        "labels": [{"name": "bad", "count": 1}],
        "from_text": 1,
        "new_dataset": False,
        "dataset": dataset.pk,
        "name": "gsm8k",
        "number": 2,
        "latest_number": 1,
        "latest_rows": 1,
    }
    assert stored(media) == before


def test_a_dry_run_refuses_what_the_export_would_refuse(world, run, dataset):
    member = world.client("member")
    empty = member.post(
        url(run), {"dataset": dataset.pk, "label": "meh", "dry_run": True}, format="json"
    )
    assert empty.status_code == 400
    assert list(empty.json()["error"]["fields"]) == ["label"]
    taken = member.post(url(run), {"new_dataset": "gsm8k", "dry_run": True}, format="json")
    assert taken.status_code == 400
    assert list(taken.json()["error"]["fields"]) == ["new_dataset"]


def test_another_projects_dataset_is_refused_like_a_missing_one(world, run, media):
    foreign = Dataset.objects.create(
        project=world.other_project, name="theirs", created_by=world.outsider
    )
    missing = foreign.pk + 1000
    member = world.client("member")
    answers = [
        member.post(url(run), {"dataset": pk, **extra}, format="json")
        for pk in (foreign.pk, missing)
        for extra in ({}, {"dry_run": True})
    ]
    assert {a.status_code for a in answers} == {400}
    assert len({a.content for a in answers}) == 1
    assert answers[0].json()["error"]["fields"] == {
        "dataset": ["No such dataset in project 'alpha'."]
    }
    assert not foreign.versions.exists()
    assert not DatasetVersion.objects.exists()


def test_a_taken_new_dataset_name_is_refused_at_new_dataset(world, run, dataset, media):
    before = stored(media)
    response = world.client("member").post(url(run), {"new_dataset": "gsm8k"}, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["new_dataset"]
    assert "already exists" in fields["new_dataset"][0]
    assert stored(media) == before


def test_an_export_names_exactly_one_target(world, run, dataset):
    member = world.client("member")
    neither = member.post(url(run), {"label": "good"}, format="json")
    assert neither.status_code == 400
    assert list(neither.json()["error"]["fields"]) == ["new_dataset"]
    both = member.post(url(run), {"dataset": dataset.pk, "new_dataset": "x"}, format="json")
    assert both.status_code == 400
    assert list(both.json()["error"]["fields"]) == ["dataset"]


def test_a_failed_export_to_a_new_dataset_leaves_no_empty_dataset(world, run, media):
    response = world.client("member").post(
        url(run), {"new_dataset": "nothing", "label": "absent"}, format="json"
    )
    assert response.status_code == 400
    assert not Dataset.objects.filter(name="nothing").exists()


def test_viewers_may_neither_export_nor_preview(world, run, media):
    viewer = world.client("viewer")
    for extra in ({}, {"dry_run": True}):
        response = viewer.post(url(run), {"new_dataset": "mine", **extra}, format="json")
        assert response.status_code == 403
    assert not Dataset.objects.exists()


def _version_of_rows(world, media) -> DatasetVersion:
    """A CSV-like version: prompt and answer columns plus a `difficulty` column (its
    rows' own extra info); one of its ten rows is held out (chosen by hash)."""
    from studio.datasets.normalise import ColumnMapping
    from studio.datasets.versions import add_version
    from tests.verl_data import parquet_bytes

    rows = [
        {
            "prompt": f"max({i},{20 - i})=",
            "answer": str(max(i, 20 - i)),
            "difficulty": "hard" if i % 2 else "easy",
        }
        for i in range(10)
    ]
    source = media / "larger.parquet"
    source.write_bytes(parquet_bytes(rows))
    dataset = Dataset.objects.create(project=world.project, name="larger", created_by=world.owner)
    return add_version(
        dataset, source, "larger.parquet", ColumnMapping(), message="", user=world.owner
    )


def test_an_export_copies_each_samples_dataset_row_untemplated_with_its_own_extra_info(
    world, media
):
    version = _version_of_rows(world, media)
    run = make_run(world.project, name="larger-run")
    run.dataset_version, run.validation = version, "held_out"
    run.save()
    with version.file.open("rb") as handle:
        held_out = held_out_mask(pq.read_table(handle))
    training = [i for i, held in enumerate(held_out) if not held]
    validating = [i for i, held in enumerate(held_out) if held]
    assert len(validating) == 1
    # The trainer reports a row of the file it read: the training rows, or the held-out
    # ones. Two samples of one GRPO group share a row.
    trained, checked = training[4], validating[0]
    templated = "<|im_start|>user\nmax({i},{j})=<|im_end|>\n<|im_start|>assistant\n"
    for position in (0, 1):
        sample = make_sample(
            run,
            prompt=templated.format(i=trained, j=20 - trained),
            source_row=4,
            position=position,
        )
        label(sample, "good", world.member)
    held = make_sample(
        run, prompt=templated.format(i=checked, j=20 - checked), source_row=0, split="val"
    )
    label(held, "bad", world.member)
    old = make_sample(run, prompt="an old sample's prompt", ground_truth="9")
    label(old, "good", world.member)

    client = world.client("member")
    preview = client.post(url(run), {"new_dataset": "x", "dry_run": True}, format="json").json()
    assert (preview["rows"], preview["samples"], preview["from_text"]) == (3, 4, 1)
    assert preview["labels"] == [{"name": "good", "count": 3}, {"name": "bad", "count": 1}]
    first = f"max({trained},{20 - trained})="
    second = f"max({checked},{20 - checked})="
    assert preview["examples"][0]["prompt"] == [{"role": "user", "content": first}]

    response = client.post(url(run), {"new_dataset": "larger-labelled"}, format="json")
    assert response.status_code == 201, response.content
    exported = Dataset.objects.get(name="larger-labelled").versions.get()
    records = read_prompt_records(
        Path(default_storage.path(str(exported.file.name))), DataConfig(format="verl")
    )
    by_prompt = {r.messages[0]["content"]: r for r in records}
    assert set(by_prompt) == {first, second, "an old sample's prompt"}
    for row, prompt in ((trained, first), (checked, second)):
        record = by_prompt[prompt]
        assert record.messages == [{"role": "user", "content": prompt}]  # templated once
        assert record.ground_truth == str(max(row, 20 - row))
        assert record.extra_info["difficulty"] == ("hard" if row % 2 else "easy")
    assert (by_prompt[first].extra_info["label"], by_prompt[first].extra_info["split"]) == (
        "good",
        "train",
    )
    assert by_prompt[second].extra_info["split"] == "val"
    assert by_prompt["an old sample's prompt"].extra_info["from_sample_text"] is True
