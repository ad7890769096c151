"""A run's startup timeline through ingest: the trainer's phases arrive as `startup`
records (untrusted: names from the fixed list, bounded times, repeats ignored), the first
metric row marks itself, and the run's API shows the phases with their durations."""

from __future__ import annotations

from typing import Any

import pytest

from studio.runs import startup
from studio.runs.models import RunAttempt
from tests.telemetry.conftest import T0, Lab, Trainer, metrics
from tests.telemetry.sse import parse


def startup_record(seq: int, phases: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "kind": "startup", "time": T0 + seq, "data": {"phases": phases}}


def marks(trainer: Trainer) -> dict[str, float]:
    return dict(RunAttempt.objects.get(pk=trainer.attempt.pk).startup)


def test_the_trainers_phases_are_kept_once_and_replayed_to_streams(
    lab: Lab, trainer: Trainer
) -> None:
    startup.record(trainer.attempt.pk, {"created": T0 - 5, "claimed": T0 - 4.5})
    sent = trainer.post(
        [
            startup_record(0, {"process_started": T0 - 3, "bootstrap_done": T0 - 2.5}),
            startup_record(1, {"imports_done": T0}),
        ]
    )
    assert sent.status_code == 200, sent.json()
    # A repeat (a second process of the same attempt, say) changes nothing.
    assert trainer.post([startup_record(2, {"process_started": T0 + 50})]).status_code == 200

    assert marks(trainer) == {
        "created": T0 - 5,
        "claimed": T0 - 4.5,
        "process_started": T0 - 3,
        "bootstrap_done": T0 - 2.5,
        "imports_done": T0,
    }
    events = parse(
        lab.user_client("viewer")
        .get(f"/api/runs/{trainer.run.pk}/events", HTTP_LAST_EVENT_ID="0:0")
        .content.decode()
    )
    replayed = [e.data for e in events if e.event == "startup"]
    assert [e["phases"] for e in replayed] == [
        {"process_started": T0 - 3, "bootstrap_done": T0 - 2.5},
        {"imports_done": T0},
        {"process_started": T0 + 50},  # the record as sent; the attempt kept the first
    ]


@pytest.mark.parametrize(
    ("phases", "problem"),
    [
        ({"claimed": T0}, "'claimed' is marked by the studio"),
        ({"first_metric_stored": T0}, "is marked by the studio"),
        ({"warp_drive_engaged": T0}, "unknown startup phase 'warp_drive_engaged'"),
        ({"imports_done": "1732270000"}, "valid number"),
        ({"imports_done": True}, "valid number"),
        ({"imports_done": -1.0}, "greater than or equal to 0"),
        ({"imports_done": 1e12}, "less than or equal to"),
        ({}, "at least 1 item"),
    ],
)
def test_startup_records_are_untrusted_input(trainer: Trainer, phases: dict, problem: str) -> None:
    response = trainer.post([metrics(0, 1), startup_record(1, phases)])
    assert response.status_code == 400
    [(field, [message])] = response.json()["error"]["fields"].items()
    assert field.startswith("records[1].data.phases"), field
    assert problem in message, message
    assert marks(trainer) == {}  # nothing of the request is stored


def test_too_many_phases_in_one_record_are_refused(trainer: Trainer) -> None:
    phases = {"imports_done": T0, **{f"x{i}": T0 for i in range(20)}}
    assert trainer.post([startup_record(0, phases)]).status_code == 400


def test_the_first_metric_marks_when_it_was_reported_and_stored_and_later_ones_do_not(
    trainer: Trainer,
) -> None:
    assert trainer.post([metrics(0, 0, {"val-core/arith/reward/mean@1": 0.5})]).status_code == 200
    first = marks(trainer)
    assert first["first_metric_reported"] == T0  # the record's emit time (trainer's clock)
    assert first["first_metric_stored"] >= first["first_metric_reported"]

    assert trainer.post([metrics(1, 1)]).status_code == 200
    assert marks(trainer) == first


def test_a_metrics_record_with_no_finite_value_is_not_the_first_metric(trainer: Trainer) -> None:
    assert trainer.post([metrics(0, 1, {"loss": None})]).status_code == 200
    assert marks(trainer) == {}


def test_the_run_shows_each_phase_with_its_duration_in_the_order_they_happened(
    lab: Lab, trainer: Trainer
) -> None:
    startup.record(trainer.attempt.pk, {"created": T0, "dispatched": T0 + 0.5, "claimed": T0 + 1})
    trainer.post(
        [
            startup_record(0, {"process_started": T0 + 2, "bootstrap_done": T0 + 3}),
            startup_record(1, {"first_validation": T0 + 8}),
            metrics(2, 0, {"val-core/arith/reward/mean@1": 0.5}),  # emitted at T0 + 2
            startup_record(3, {"first_step": T0 + 20}),
        ]
    )
    shown = lab.user_client("viewer").get(f"/api/runs/{trainer.run.pk}/").json()
    timeline = shown["attempts"][0]["startup"]
    names = [p["name"] for p in timeline["phases"]]
    reached = [p for p in timeline["phases"] if p["at"] is not None]
    # In the order they happened: the metric record's emit time sorts between the others.
    assert [p["name"] for p in reached][:5] == [
        "created",
        "dispatched",
        "claimed",
        "process_started",
        "first_metric_reported",
    ]
    assert reached[0]["seconds"] is None and reached[0]["offset_s"] == 0
    by_name = {p["name"]: p for p in timeline["phases"]}
    assert by_name["bootstrap_done"]["seconds"] == pytest.approx(1.0)
    assert by_name["first_step"]["offset_s"] == pytest.approx(20.0)
    # Phases not reached come last, unreached; every phase is listed once.
    unreached = {"name": "submitted", "at": None, "seconds": None, "offset_s": None}
    assert by_name["submitted"] == unreached
    assert sorted(names) == sorted(startup.PHASES)
    stored = by_name["first_metric_stored"]["at"]
    assert timeline["total_s"] == pytest.approx(stored - T0)


def test_an_attempt_from_before_the_timeline_shows_none(lab: Lab, trainer: Trainer) -> None:
    shown = lab.user_client("viewer").get(f"/api/runs/{trainer.run.pk}/").json()
    assert shown["attempts"][0]["startup"] is None
