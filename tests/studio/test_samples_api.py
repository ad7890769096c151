"""Rollout samples: cursor pages, filters, full-text search, groups, labels, export."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studio.datasets.models import Dataset, DatasetVersion
from studio.projects.models import AuditEvent, Project
from studio.rewards.models import RewardFunction, RewardVersion
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample, SampleLabel
from trainer.config.schema import DataConfig
from trainer.data.formats import read_prompt_records

_seq = itertools.count()


def make_run(project: Project, name: str = "run") -> Run:
    return Run.objects.create(project=project, name=name, config={}, created_by=project.created_by)


def make_sample(run: Run, **fields) -> RolloutSample:
    values = {
        "attempt": 1,
        "seq": next(_seq),
        "position": 0,
        "step": 1,
        "group_id": "g0",
        "data_source": "gsm8k",
        "prompt": "What is 2 + 3?",
        "response": "2 + 3 = 5. The answer is 5.",
        "ground_truth": "5",
        "score": 1.0,
    }
    values.update(fields)
    return RolloutSample.objects.create(run=run, **values)


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [sample["id"] for sample in response.json()["results"]]


def listed(client, run: Run, **params) -> list[int]:
    return ids(client.get("/api/samples/", {"run": run.pk, **params}))


@pytest.fixture
def run(world) -> Run:
    return make_run(world.project)


def test_cursor_pagination_is_stable_while_new_samples_are_inserted(world, run):
    originals = [make_sample(run, seq=i, step=i).pk for i in range(25)]
    client = world.client("viewer")
    seen: list[int] = []
    page = client.get("/api/samples/", {"run": run.pk, "page_size": 10}).json()
    while True:
        seen += [sample["id"] for sample in page["results"]]
        make_sample(run, step=1000)  # the run keeps reporting while the user pages
        if not page["next"]:
            break
        page = client.get(page["next"]).json()
    assert seen == sorted(originals, reverse=True)
    oldest_first = listed(client, run, ordering="id", page_size=5)
    assert oldest_first == originals[:5]


def test_page_size_is_clamped_never_unbounded(world, run):
    for i in range(3):
        make_sample(run, seq=i)
    response = world.client("viewer").get("/api/samples/", {"run": run.pk, "page_size": 10**9})
    assert response.status_code == 200
    assert len(response.json()["results"]) == 3


@pytest.fixture
def varied(world, run) -> dict[str, RolloutSample]:
    reward = RewardFunction.objects.create(
        project=world.project, name="exact", created_by=world.owner
    )
    version = RewardVersion.objects.create(
        function=reward,
        number=1,
        code="def compute_score(): ...",
        code_hash="x" * 64,
        author=world.owner,
    )
    return {
        "early": make_sample(run, step=1, score=0.0, data_source="gsm8k"),
        "middle": make_sample(run, step=50, score=0.5, data_source="math", reward_version=version),
        "late": make_sample(run, step=99, score=1.0, data_source="gsm8k", split="val"),
        "broken": make_sample(run, step=60, score=-1.0, error="ZeroDivisionError", group_id="g9"),
        "old": make_sample(run, step=70, score=0.7, superseded=True),
    }


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, {"early", "middle", "late", "broken"}),
        ({"step_min": 50}, {"middle", "late", "broken"}),
        ({"step_max": 50}, {"early", "middle"}),
        ({"step_min": 40, "step_max": 60}, {"middle", "broken"}),
        ({"score_min": 0.5}, {"middle", "late"}),
        ({"score_max": 0.0}, {"early", "broken"}),
        ({"score_min": -0.5, "score_max": 0.6}, {"early", "middle"}),
        ({"data_source": "math"}, {"middle"}),
        ({"split": "val"}, {"late"}),
        ({"has_error": "true"}, {"broken"}),
        ({"has_error": "false"}, {"early", "middle", "late"}),
        ({"group_id": "g9"}, {"broken"}),
    ],
)
def test_each_filter_narrows_the_list(world, run, varied, params, expected):
    got = set(listed(world.client("viewer"), run, **params))
    assert got == {varied[name].pk for name in expected}


def test_reward_version_filter(world, run, varied):
    version = varied["middle"].reward_version
    assert version is not None
    assert listed(world.client("viewer"), run, reward_version=version.pk) == [varied["middle"].pk]
    # People know it as v1: the number filters too, and a sample names it so.
    assert listed(world.client("viewer"), run, reward_version_number=1) == [varied["middle"].pk]
    assert listed(world.client("viewer"), run, reward_version_number=2) == []
    sample = world.client("viewer").get(f"/api/samples/{varied['middle'].pk}/").json()
    assert (sample["reward_function_name"], sample["reward_version_number"]) == ("exact", 1)
    plain = world.client("viewer").get(f"/api/samples/{varied['early'].pk}/").json()
    assert (plain["reward_function_name"], plain["reward_version_number"]) == (None, None)


@pytest.mark.parametrize(
    "params",
    [{}, {"run": "x"}, {"step_min": -1}, {"score_min": "nan"}, {"has_error": "perhaps"}],
)
def test_bad_filters_are_400(world, run, params):
    response = world.client("viewer").get("/api/samples/", {"run": run.pk, **params})
    if not params:
        response = world.client("viewer").get("/api/samples/")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


def test_full_text_search_finds_a_word_in_the_response(world, run):
    apples = make_sample(run, response="She bought three pineapples and ate one.")
    prompt_hit = make_sample(run, prompt="A train leaves the station at noon.")
    make_sample(run, response="Nothing to see here.")
    client = world.client("viewer")
    assert listed(client, run, q="pineapple") == [apples.pk]  # stemmed: pineapples
    assert listed(client, run, q="train station") == [prompt_hit.pk]
    assert listed(client, run, q='"ate one"') == [apples.pk]
    assert set(listed(client, run, q="pineapple or station")) == {apples.pk, prompt_hit.pk}
    assert listed(client, run, q="pineapple -bought") == []
    edited = RolloutSample.objects.get(pk=prompt_hit.pk)
    edited.response = "A kumquat appears."
    edited.save()
    assert listed(client, run, q="kumquat") == [prompt_hit.pk]


def test_bulk_created_samples_are_searchable(world, run):
    RolloutSample.objects.bulk_create(
        RolloutSample(
            run=run,
            attempt=1,
            seq=1000 + i,
            position=0,
            step=i,
            group_id="g",
            data_source="d",
            prompt=f"prompt {i}",
            response=word,
            score=0.0,
        )
        for i, word in enumerate(["zebra crossing", "lion king"])
    )
    assert len(listed(world.client("viewer"), run, q="zebra")) == 1


def test_group_retrieval_returns_every_sample_of_one_prompt_at_one_step(world, run):
    group = [
        make_sample(run, step=3, group_id="p7", position=i, score=float(i % 2)) for i in range(4)
    ]
    make_sample(run, step=4, group_id="p7")
    make_sample(run, step=3, group_id="p8")
    make_sample(run, step=3, group_id="p7", superseded=True)
    response = world.client("viewer").get(
        "/api/samples/group/", {"run": run.pk, "step": 3, "group_id": "p7"}
    )
    assert response.status_code == 200
    body = response.json()
    assert [s["id"] for s in body["samples"]] == [s.pk for s in group]
    assert body["count"] == 4
    assert body["score_mean"] == 0.5
    assert body["score_std"] == 0.5
    theirs = make_run(world.other_project)
    missing = world.client("viewer").get(
        "/api/samples/group/", {"run": theirs.pk, "step": 3, "group_id": "p7"}
    )
    assert missing.status_code == 404


def test_detail_carries_token_data_and_the_list_only_says_it_exists(world, run):
    tokens = {"tokens": ["5"], "logprobs": [-0.1], "advantages": [0.7], "entropy": [0.2]}
    sample = make_sample(run, token_data=tokens)
    client = world.client("viewer")
    (row,) = client.get("/api/samples/", {"run": run.pk}).json()["results"]
    assert row["has_token_data"] is True
    assert "token_data" not in row
    detail = client.get(f"/api/samples/{sample.pk}/")
    assert detail.status_code == 200
    assert detail.json()["token_data"] == tokens


def test_another_projects_samples_are_404_and_never_listed(world, run):
    theirs = make_run(world.other_project)
    secret = make_sample(theirs, response="secret plan")
    mine = make_sample(run, response="secret plan")
    member = world.client("member")
    assert member.get("/api/samples/", {"run": theirs.pk}).status_code == 404
    assert member.get(f"/api/samples/{secret.pk}/").status_code == 404
    assert listed(member, run, q="secret") == [mine.pk]
    response = member.post(f"/api/samples/{secret.pk}/labels/", {"label": "x"}, format="json")
    assert response.status_code == 404


def test_viewer_cannot_label_a_member_can_and_the_label_filter_finds_it(world, run):
    sample = make_sample(run)
    other = make_sample(run)
    url = f"/api/samples/{sample.pk}/labels/"
    viewer = world.client("viewer")
    denied = viewer.post(url, {"label": "reward-hacking"}, format="json")
    assert denied.status_code == 403
    assert not SampleLabel.objects.exists()

    member = world.client("member")
    body = {"label": "reward-hacking", "note": "answer copied from the prompt"}
    created = member.post(url, body, format="json")
    assert created.status_code == 201
    assert created.json()["author"] == "member"
    assert created.json()["created_at"]
    renoted = member.post(url, {"label": "reward-hacking", "note": "see step 3"}, format="json")
    assert renoted.status_code == 200
    assert SampleLabel.objects.get().note == "see step 3"
    event = AuditEvent.objects.filter(action="sample.label").first()
    assert event is not None
    assert event.actor == world.member
    assert event.detail["sample"] == sample.pk

    assert listed(viewer, run, label="reward-hacking") == [sample.pk]
    assert listed(viewer, run, label="good") == []
    (row,) = viewer.get(f"/api/samples/{sample.pk}/").json()["labels"]
    assert row["label"] == "reward-hacking"
    assert other.pk not in listed(viewer, run, label="reward-hacking")

    bad = member.post(url, {"label": "no,commas"}, format="json")
    assert bad.status_code == 400
    assert viewer.delete(f"{url}?label=reward-hacking").status_code == 403
    assert member.delete(url).status_code == 400  # which label?
    assert member.delete(f"{url}?label=reward-hacking").status_code == 204
    assert member.delete(f"{url}?label=reward-hacking").status_code == 404
    assert listed(viewer, run, label="reward-hacking") == []
    assert AuditEvent.objects.filter(action="sample.unlabel", actor=world.member).exists()


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def dataset(world) -> Dataset:
    return Dataset.objects.create(
        project=world.project, name="hard-prompts", created_by=world.owner
    )


def label(sample: RolloutSample, name: str, author) -> None:
    SampleLabel.objects.create(sample=sample, label=name, author=author)


def test_export_creates_a_dataset_version_whose_parquet_round_trips(world, run, dataset, media):
    first = make_sample(run, prompt="What is 6 * 7?", ground_truth="42", split="train")
    same_prompt = make_sample(run, prompt="What is 6 * 7?", ground_truth="42", position=1)
    second = make_sample(run, prompt="Name a prime.", ground_truth="7", data_source="math")
    make_sample(run, prompt="Not exported")  # unlabelled
    for sample in (first, same_prompt, second):
        label(sample, "hard", world.member)
    label(second, "good", world.owner)

    url = f"/api/runs/{run.pk}/export-labelled"
    response = world.client("member").post(url, {"dataset": dataset.pk}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["number"] == 1
    assert body["row_count"] == 2
    version = DatasetVersion.objects.get(pk=body["id"])
    path = Path(default_storage.path(version.file.name))
    assert path.is_relative_to(media)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == version.checksum == body["checksum"]
    assert version.size_bytes == path.stat().st_size
    assert version.data_format == "verl"
    assert version.created_by == world.member

    records = read_prompt_records(path, DataConfig(format="verl"))
    assert [r.messages for r in records] == [
        [{"role": "user", "content": "What is 6 * 7?"}],
        [{"role": "user", "content": "Name a prime."}],
    ]
    assert [r.ground_truth for r in records] == ["42", "7"]
    assert [r.data_source for r in records] == ["gsm8k", "math"]
    assert records[0].extra_info == {
        "split": "train",
        "index": 0,
        "source_run": run.pk,
        "source_sample": first.pk,
        "label": "hard",
        "from_sample_text": True,  # stored without its dataset row: the shown prompt
    }
    assert records[1].extra_info["label"] == "good,hard"
    assert version.stats["data_sources"] == [
        {"name": "gsm8k", "count": 1},
        {"name": "math", "count": 1},
    ]
    assert AuditEvent.objects.filter(action="dataset.export_labelled", actor=world.member).exists()

    only_good = world.client("owner").post(
        url, {"dataset": dataset.pk, "label": "good"}, format="json"
    )
    assert only_good.status_code == 201
    assert only_good.json()["number"] == 2
    path = Path(default_storage.path(DatasetVersion.objects.get(number=2).file.name))
    (record,) = read_prompt_records(path, DataConfig(format="verl"))
    assert record.extra_info["source_sample"] == second.pk
    assert record.extra_info["label"] == "good"


def test_export_refuses_viewers_other_projects_and_empty_selections(world, run, dataset, media):
    sample = make_sample(run)
    label(sample, "hard", world.member)
    url = f"/api/runs/{run.pk}/export-labelled"
    assert (
        world.client("viewer").post(url, {"dataset": dataset.pk}, format="json").status_code == 403
    )
    assert world.client("outsider").post(url, {"dataset": 1}, format="json").status_code == 404
    foreign = Dataset.objects.create(
        project=world.other_project, name="theirs", created_by=world.outsider
    )
    member = world.client("member")
    response = member.post(url, {"dataset": foreign.pk}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("dataset:")
    empty = member.post(url, {"dataset": dataset.pk, "label": "good"}, format="json")
    assert empty.status_code == 400
    assert "no live samples with the label 'good'" in empty.json()["error"]["message"]
    assert not DatasetVersion.objects.exists()
    assert not any(media.rglob("*.parquet"))


def test_an_exported_version_reads_back_through_the_dataset_api(world, run, dataset, media):
    label(make_sample(run, prompt="What is 6 * 7?", ground_truth="42"), "good", world.owner)
    client = world.client("member")
    exported = client.post(
        f"/api/runs/{run.pk}/export-labelled", {"dataset": dataset.pk}, format="json"
    )
    assert exported.status_code == 201, exported.content
    detail = client.get(f"/api/datasets/{dataset.pk}/")
    assert detail.status_code == 200, detail.content[:300]
    assert detail.json()["latest_version"]["stats"]["upload"]["size_bytes"] > 0
    assert client.get(f"/api/datasets/{dataset.pk}/versions/").status_code == 200


def test_a_page_of_samples_costs_the_same_queries_however_many_samples_it_holds(world, run):
    """The list defers each sample's token data and annotates whether it is recorded:
    reading the column per row (a query per sample) made a page of 100 cost 100 more."""
    client = world.client("viewer")
    make_sample(run, token_data={"logprobs": [-0.5]})
    listed(client, run)  # warm the session and permission lookups
    with CaptureQueriesContext(connection) as one:
        [first] = client.get("/api/samples/", {"run": run.pk}).json()["results"]
    for i in range(20):
        make_sample(run, token_data={"logprobs": [-0.5]} if i % 2 else None)
    with CaptureQueriesContext(connection) as many:
        page = client.get("/api/samples/", {"run": run.pk}).json()["results"]
    assert len(page) == 21
    assert len(many.captured_queries) == len(one.captured_queries)
    assert first["has_token_data"] is True
    assert sorted(s["has_token_data"] for s in page) == [False] * 10 + [True] * 11
