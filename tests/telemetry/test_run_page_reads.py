"""What the run page reads, fed through the trainer's real ingest endpoint: wall-clock
times of metric points, the log tail and the checkpoints list."""

from __future__ import annotations

from studio.telemetry.series.step_times import interpolate
from tests.telemetry.conftest import T0, Lab, Trainer, checkpoint, log, metrics


def test_metric_points_carry_the_time_their_step_was_emitted_when_asked(lab: Lab, trainer):
    assert trainer.post([metrics(seq, step=seq) for seq in range(1, 6)]).status_code == 200
    client = lab.user_client("viewer")
    query = {"runs": trainer.run.pk, "keys": "critic/score/mean,actor/pg_loss"}

    plain = client.get("/api/metrics/query", query).json()
    timed = client.get("/api/metrics/query", {**query, "times": "true"}).json()

    assert all("times" not in series for series in plain["series"])
    assert len(timed["series"]) == 2
    for series in timed["series"]:
        assert series["steps"] == [1, 2, 3, 4, 5]
        assert series["times"] == [T0 + step for step in series["steps"]]


def test_the_log_tail_and_checkpoints_of_an_ingested_run(lab: Lab, trainer: Trainer):
    records = [log(1, "starting"), log(2, "slow step", "warning"), checkpoint(3, step=2)]
    assert trainer.post(records).status_code == 200
    client = lab.user_client("viewer")
    run = trainer.run.pk

    warnings = client.get(f"/api/runs/{run}/logs/", {"level": "WARNING"}).json()
    after = client.get(f"/api/runs/{run}/logs/", {"after_attempt": 1, "after_seq": 1}).json()
    listed = client.get(f"/api/runs/{run}/checkpoints/").json()

    assert [line["message"] for line in warnings["results"]] == ["slow step"]
    assert [line["seq"] for line in after["results"]] == [2]
    (found,) = listed["results"]
    assert found["step"] == 2 and found["uri"] == "var/checkpoints/x/step-2"
    assert found["reachable"] is False and "var/checkpoints/x/step-2" in found["unreachable_reason"]


def test_times_between_anchor_steps_are_interpolated_and_unknown_outside_them():
    anchors = ([10, 20, 40], [100.0, 200.0, 260.0])
    assert interpolate(anchors, [5, 10, 15, 30, 40, 41]) == [None, 100.0, 150.0, 230.0, 260.0, None]
    assert interpolate(anchors, [30, 15, 20]) == [230.0, 150.0, 200.0]
    assert interpolate(([], []), [1]) == [None]
