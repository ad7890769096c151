"""The trainer's startup marks (trainer.reporting.startup): the first time of each phase,
kept until a sink is attached, then sent on as they happen."""

from __future__ import annotations

import pytest

from trainer.reporting import startup


@pytest.fixture(autouse=True)
def no_process_timeline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_current", None)


def test_the_first_time_of_a_phase_counts_and_a_sink_gets_the_marks_so_far_then_each_new_one():
    timeline = startup.begin(100.0)
    startup.mark("bootstrap_done")
    first = timeline.marks["bootstrap_done"]
    startup.mark("bootstrap_done")  # reached again: nothing changes
    sent: list[dict[str, float]] = []

    startup.attach(sent.append)
    startup.mark("imports_done")
    startup.mark("imports_done")

    assert sent[0] == {"process_started": 100.0, "bootstrap_done": first}
    assert list(sent[1]) == ["imports_done"] and len(sent) == 2
    assert timeline.marks["imports_done"] >= first


def test_a_process_that_began_no_timeline_marks_and_sends_nothing():
    sent: list[dict[str, float]] = []
    startup.attach(sent.append)
    startup.mark("first_step")
    assert sent == []
    assert startup.current() is None


def test_the_phases_are_split_between_the_studio_and_the_trainer_without_overlap():
    assert set(startup.TRAINER_PHASES) | set(startup.STUDIO_PHASES) == set(startup.PHASES)
    assert not set(startup.TRAINER_PHASES) & set(startup.STUDIO_PHASES)
    assert startup.PHASES[0] == "created" and startup.PHASES[-1] == "first_metric_stored"
