"""POST /api/ingest/runs/{id}/records: tokens, idempotency, validation, status records."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from studio.datasets.models import Dataset
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from studio.runs import lifecycle
from studio.runs.models import Checkpoint, IngestToken, Run, RunAttempt, RunStatus
from studio.telemetry.ingest.records import MAX_BODY_BYTES, MAX_RECORDS
from studio.telemetry.models import IngestedRecord, LogLine, MetricPoint, RolloutSample
from tests.telemetry.conftest import (
    Lab,
    Trainer,
    checkpoint,
    log,
    metrics,
    sample,
    samples,
    status,
)
from tests.verl_data import counting_answers, parquet_bytes, verl_rows


def stored_counts(run: Run) -> tuple[int, int, int, int]:
    return (
        IngestedRecord.objects.filter(run=run).count(),
        MetricPoint.objects.filter(run=run).count(),
        RolloutSample.objects.filter(run=run).count(),
        LogLine.objects.filter(run=run).count(),
    )


def a_batch() -> list[dict]:
    return [status(0, "running"), metrics(1, 1), samples(2, 1), log(3), checkpoint(4, 1)]


def test_it_stores_every_kind_of_record_and_answers_with_counts(trainer: Trainer) -> None:
    response = trainer.post(a_batch())
    assert response.status_code == 200, response.json()
    assert response.json() == {"stored": 5, "duplicates": 0, "last_seq": 4}
    run = trainer.run
    assert stored_counts(run) == (5, 2, 2, 1)
    points = dict(MetricPoint.objects.filter(run=run).values_list("key", "value"))
    assert points == {"critic/score/mean": 0.1, "actor/pg_loss": -1.0}
    stored = RolloutSample.objects.filter(run=run).order_by("position")
    assert [s.score for s in stored] == [1.0, 0.0]
    assert {s.reward_version_id for s in stored} == {run.reward_version_id}
    assert stored[0].search is not None  # the search trigger ran on this insert path
    assert Checkpoint.objects.get(run=run).uri == "var/checkpoints/x/step-1"
    assert LogLine.objects.get(run=run).at.timestamp() == pytest.approx(1_732_270_003.0)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert RunAttempt.objects.get(pk=trainer.attempt.pk).started_at is not None


def test_the_same_batch_twice_is_stored_once(trainer: Trainer) -> None:
    assert trainer.post(a_batch()).json()["stored"] == 5
    before = stored_counts(trainer.run)
    again = trainer.post(a_batch())
    assert again.json() == {"stored": 0, "duplicates": 5, "last_seq": 4}
    assert stored_counts(trainer.run) == before
    overlapping = trainer.post([metrics(4, 9), metrics(5, 2), log(6)])
    assert overlapping.json() == {"stored": 2, "duplicates": 1, "last_seq": 6}
    # The seq is the key: a "different" record under a stored seq is a duplicate.
    assert not MetricPoint.objects.filter(run=trainer.run, step=9).exists()


def test_rows_written_outside_ingest_under_a_fresh_seq_do_not_fail_the_batch(
    trainer: Trainer,
) -> None:
    MetricPoint.objects.create(run=trainer.run, attempt=1, seq=0, step=1, key="loss", value=9.0)
    response = trainer.post([metrics(0, 1, {"loss": 1.0, "acc": 0.5}), samples(1, 1)])
    assert response.json() == {"stored": 2, "duplicates": 0, "last_seq": 1}
    points = MetricPoint.objects.filter(run=trainer.run).values_list("key", "value")
    assert sorted(points) == [("acc", 0.5), ("loss", 9.0)]  # the existing row is kept
    assert RolloutSample.objects.filter(run=trainer.run).count() == 2


def test_a_seq_repeated_inside_one_request_is_stored_once(trainer: Trainer) -> None:
    response = trainer.post([metrics(0, 1), metrics(0, 2), metrics(1, 3)])
    assert response.json() == {"stored": 2, "duplicates": 1, "last_seq": 1}
    assert set(MetricPoint.objects.filter(run=trainer.run).values_list("step", flat=True)) == {1, 3}


def test_non_finite_metric_values_are_not_stored(trainer: Trainer) -> None:
    body = (
        b'{"attempt": 1, "records": [{"seq": 0, "kind": "metrics", "time": 1.0, "data": '
        b'{"step": 1, "values": {"a": 1.5, "b": null, "c": NaN, "d": Infinity}}}]}'
    )
    assert trainer.post_raw(body).status_code == 200
    assert dict(MetricPoint.objects.filter(run=trainer.run).values_list("key", "value")) == {
        "a": 1.5
    }


def test_a_sample_without_a_score_is_stored_as_nan_and_nul_characters_are_replaced(
    trainer: Trainer,
) -> None:
    item = sample(1, score=None, response="bad\x00byte", components={"x": None})
    assert trainer.post([samples(0, 1, [item])]).status_code == 200
    stored = RolloutSample.objects.get(run=trainer.run)
    assert math.isnan(stored.score)
    assert stored.response == "bad\ufffdbyte"
    assert stored.components == {"x": None}


@pytest.mark.parametrize(
    ("records", "field"),
    [
        ([metrics(0, 1), metrics(1, -1)], "records[1].data.step"),
        ([metrics(0, 1), metrics(1, 1, {"loss": "0.5"})], "records[1].data.values.loss"),
        ([metrics(0, 1), {"seq": 1, "kind": "bogus", "time": 1.0, "data": {}}], "records[1].kind"),
        ([log(0), {**log(1), "seq": -3}], "records[1].seq"),
        ([log(0), {**log(1), "time": "yesterday"}], "records[1].time"),
        ([samples(0, 1, [sample(1, group="g" * 101)])], "records[0].data.samples[0].group_id"),
        ([samples(0, 1, [sample(1, split="test")])], "records[0].data.samples[0].split"),
        ([metrics(0, 1, {"a\x00b": 1.0})], "records[0].data.values.(key)"),
        ([metrics(0, 1, {"k" * 201: 1.0})], "records[0].data.values.(key)"),
        ([status(0, "exploded")], "records[0].data.status"),
        ([log(0, "x" * 70_000)], "records[0].data.message"),
    ],
)
def test_a_bad_record_is_named_and_nothing_of_its_batch_is_stored(
    trainer: Trainer, records: list[dict], field: str
) -> None:
    response = trainer.post([*records, log(100)])  # valid records around the bad one
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == [field], error
    assert error["message"].startswith(f"{field}: ")
    assert stored_counts(trainer.run) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{not json", "body"),
        (b"[]", "body"),
        (b'{"records": []}', "attempt"),
        (
            json.dumps(
                {"attempt": 1, "records": [log(i) for i in range(MAX_RECORDS + 1)]}
            ).encode(),
            "records",
        ),
    ],
)
def test_a_malformed_body_is_refused(trainer: Trainer, body: bytes, field: str) -> None:
    response = trainer.post_raw(body)
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]
    assert stored_counts(trainer.run) == (0, 0, 0, 0)


def test_a_body_over_8_mib_is_refused_with_413(trainer: Trainer) -> None:
    body = json.dumps({"attempt": 1, "records": [log(0, "x" * 60_000)] * 140}).encode()
    assert len(body) > MAX_BODY_BYTES
    response = trainer.post_raw(body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert stored_counts(trainer.run) == (0, 0, 0, 0)


def test_a_token_cannot_write_to_another_run(lab: Lab, trainer: Trainer) -> None:
    other = lab.new_run("other")
    response = trainer.post([metrics(0, 1)], run_id=other.pk)
    assert response.status_code == 403
    assert f"run {trainer.run.pk}" in response.json()["error"]["message"]
    assert not IngestedRecord.objects.exists() and not MetricPoint.objects.exists()


def test_a_token_cannot_write_another_attempt(trainer: Trainer) -> None:
    response = trainer.post([metrics(0, 1)], attempt=2)
    assert response.status_code == 403
    assert "attempt 1" in response.json()["error"]["message"]
    assert not IngestedRecord.objects.exists()


@pytest.mark.parametrize("header", ["", "Bearer rli_not-a-token", "Token rli_x"])
def test_without_a_valid_ingest_token_it_is_401(trainer: Trainer, header: str) -> None:
    trainer.token = header.removeprefix("Bearer ")
    response = trainer.client.post(
        f"/api/ingest/runs/{trainer.run.pk}/records",
        json.dumps({"attempt": 1, "records": [log(0)]}),
        content_type="application/json",
        **({"HTTP_AUTHORIZATION": header} if header else {}),
    )
    assert response.status_code == 401
    assert not IngestedRecord.objects.exists()


def test_a_personal_token_is_not_an_ingest_token(lab: Lab, trainer: Trainer) -> None:
    client = lab.user_client("owner")
    response = client.post(
        f"/api/ingest/runs/{trainer.run.pk}/records",
        {"attempt": 1, "records": [log(0)]},
        format="json",
    )
    assert response.status_code == 401


def test_the_token_is_revoked_when_the_run_ends_and_then_gets_401(trainer: Trainer) -> None:
    assert trainer.post([status(0, "running"), status(1, "succeeded", "done")]).status_code == 200
    run = Run.objects.get(pk=trainer.run.pk)
    assert run.status == RunStatus.SUCCEEDED
    assert IngestToken.objects.get(attempt=trainer.attempt).revoked_at is not None
    late = trainer.post([log(2)])
    assert late.status_code == 401
    assert "revoked" in late.json()["error"]["message"]
    assert not LogLine.objects.filter(run=run).exists()


def test_every_path_to_a_terminal_state_revokes_the_token(lab: Lab) -> None:
    trainer = lab.start_attempt(lab.new_run())
    lifecycle.transition(trainer.run.pk, {RunStatus.STARTING}, RunStatus.FAILED, "ray refused")
    assert IngestToken.objects.get(attempt=trainer.attempt).revoked_at is not None
    queued = lab.start_attempt(lab.new_run("q", RunStatus.QUEUED))
    lifecycle.cancel(queued.run.pk)
    assert IngestToken.objects.get(attempt=queued.attempt).revoked_at is not None
    assert queued.post([log(0)]).status_code == 401


def test_a_run_ended_without_revocation_still_refuses_its_token(trainer: Trainer) -> None:
    Run.objects.filter(pk=trainer.run.pk).update(status=RunStatus.CANCELLED)  # bypasses hooks
    assert trainer.post([log(0)]).status_code == 401


def test_a_new_attempts_token_revokes_the_earlier_ones(lab: Lab, trainer: Trainer) -> None:
    second = lab.start_attempt(trainer.run, number=2)
    assert trainer.post([log(0)]).status_code == 401
    assert second.post([log(0)], attempt=2).status_code == 200


def test_failed_status_stores_the_trainers_error(trainer: Trainer) -> None:
    detail = "Traceback (most recent call last):\n  ...\nRuntimeError: reward error rate 0.9"
    trainer.post([status(0, "running"), status(1, "failed", detail)])
    run = Run.objects.get(pk=trainer.run.pk)
    assert run.status == RunStatus.FAILED
    assert run.last_error == detail
    assert run.status_reason == "RuntimeError: reward error rate 0.9"
    assert RunAttempt.objects.get(pk=trainer.attempt.pk).exit_message == detail


def test_a_trainer_reporting_cancelled_goes_through_cancelling(trainer: Trainer) -> None:
    trainer.post([status(0, "running"), status(1, "cancelled", "SIGTERM")])
    history = list(trainer.run.status_history.values_list("to_status", flat=True))
    assert history[-3:] == ["running", "cancelling", "cancelled"]


def test_a_status_report_does_not_revive_a_run_a_user_cancelled(trainer: Trainer) -> None:
    lifecycle.cancel(trainer.run.pk)  # starting -> cancelling
    trainer.post([status(0, "running")])
    assert Run.objects.get(pk=trainer.run.pk).status == RunStatus.CANCELLING


def test_the_dataset_endpoint_needs_the_runs_token(lab: Lab, trainer: Trainer) -> None:
    response = trainer.client.get(
        f"/api/ingest/runs/{trainer.run.pk}/dataset",
        {"split": "train"},
        HTTP_AUTHORIZATION=f"Bearer {trainer.token}",
    )
    assert response.status_code == 404  # this run has no dataset version
    assert "no dataset" in response.json()["error"]["message"]
    other = lab.new_run("other")
    refused = trainer.client.get(
        f"/api/ingest/runs/{other.pk}/dataset", HTTP_AUTHORIZATION=f"Bearer {trainer.token}"
    )
    assert refused.status_code == 403


def rows_of(response) -> list[int]:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return [
        row["index"] for row in pq.read_table(io.BytesIO(body)).column("extra_info").to_pylist()
    ]


@pytest.mark.parametrize(
    ("splits", "train", "val"),
    [
        (["train", "test", "train", "validation", None], [0, 2, 4], [1, 3]),
        ([None, None], [0, 1], None),  # no labels: every row trains, no val rows
    ],
)
def test_the_dataset_is_served_by_split(
    lab: Lab, trainer: Trainer, settings, tmp_path: Path, splits, train, val
) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    source = tmp_path / "data.parquet"
    answers = counting_answers(len(splits))
    source.write_bytes(parquet_bytes(verl_rows(answers, splits=splits)))
    dataset = Dataset.objects.create(project=lab.project, name="arith", created_by=lab.owner)
    version = add_version(
        dataset, source, "data.parquet", ColumnMapping(), message="", user=lab.owner
    )
    Run.objects.filter(pk=trainer.run.pk).update(dataset_version=version)
    path = f"/api/ingest/runs/{trainer.run.pk}/dataset"
    auth = {"HTTP_AUTHORIZATION": f"Bearer {trainer.token}"}
    assert rows_of(trainer.client.get(path, {"split": "train"}, **auth)) == train
    held_out = trainer.client.get(path, {"split": "val"}, **auth)
    if val is None:
        assert held_out.status_code == 404
        assert "no val rows" in held_out.json()["error"]["message"]
    else:
        assert rows_of(held_out) == val
    bad = trainer.client.get(path, {"split": "everything"}, **auth)
    assert bad.status_code == 400
    assert list(bad.json()["error"]["fields"]) == ["split"]


def test_a_checkpoint_notice_measures_the_runs_files(
    trainer: Trainer, settings, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    folder = tmp_path / "checkpoints" / f"run-{trainer.run.pk}" / "step-1"
    folder.mkdir(parents=True)
    (folder / "actor.pt").write_bytes(b"w" * 4096)
    with django_capture_on_commit_callbacks(execute=True):
        assert trainer.post([checkpoint(0, 1)]).status_code == 200
    # The figure the project's storage sums (studio.runs.quota).
    assert Run.objects.get(pk=trainer.run.pk).storage_bytes == 4096
