"""Alert rules on hand-made metric series, the cooldown, and alerts raised by ingest."""

from __future__ import annotations

import pytest

from studio.telemetry.alerts import rules as alerts
from studio.telemetry.alerts.rules import (
    ENTROPY,
    KL_LOSS,
    PPO_KL,
    RESPONSE_LENGTH,
    REWARD_ERROR_RATE,
    ZERO_SPREAD,
    History,
    evaluate,
)
from studio.telemetry.models import AlertKind, AlertSeverity, IngestedRecord, RunAlert
from tests.telemetry.conftest import Trainer, metrics


def history(series: dict[str, list[float]], first_step: int = 1) -> History:
    """Series given as consecutive steps from `first_step`; baselines are their first
    values, as the database would give them."""
    by_step = {k: {first_step + i: v for i, v in enumerate(vs)} for k, vs in series.items()}
    baselines = {k: vs[: alerts.BASELINE_STEPS] for k, vs in series.items()}
    return History(by_step, baselines)


def kinds(found: list[alerts.Alert]) -> list[tuple[str, int, str]]:
    return [(a.kind, a.step, a.severity) for a in found]


def test_zero_spread_groups_fire_on_the_recent_mean_not_on_one_step() -> None:
    one_bad_step = history({ZERO_SPREAD: [0.1, 0.1, 0.1, 0.1, 0.9]})
    assert evaluate(one_bad_step, [5]) == []
    series = [0.1, 0.2, 0.6, 0.6, 0.7, 0.7, 0.9, 0.9, 0.95, 0.95]
    found = evaluate(history({ZERO_SPREAD: series}), range(1, 11))
    # Steps 2-6 average 0.56 (a warning at step 6); steps 5-9 average 0.83 (critical).
    assert kinds(found) == [
        (AlertKind.ZERO_SPREAD_GROUPS, 6, AlertSeverity.WARNING),
        (AlertKind.ZERO_SPREAD_GROUPS, 9, AlertSeverity.CRITICAL),
    ]
    assert "56% of GRPO groups" in found[0].message and "steps 2-6" in found[0].message
    assert found[0].values["fraction"] == pytest.approx(0.56)


def test_response_length_drift_compares_against_the_first_steps() -> None:
    steady = [20.0] * 5 + [24.0, 26.0, 30.0, 35.0, 38.0]
    assert evaluate(history({RESPONSE_LENGTH: steady}), range(1, 11)) == []
    padding = [20.0] * 5 + [40.0, 44.0, 48.0, 50.0, 52.0]  # recent mean 46.8 = 2.34x
    found = evaluate(history({RESPONSE_LENGTH: padding}), [10])
    assert kinds(found) == [(AlertKind.RESPONSE_LENGTH_DRIFT, 10, AlertSeverity.WARNING)]
    assert "grew to 46.8 tokens" in found[0].message and "2.34x" in found[0].message
    collapse = [30.0] * 5 + [8.0] * 5
    found = evaluate(history({RESPONSE_LENGTH: collapse}), [10])
    assert kinds(found) == [(AlertKind.RESPONSE_LENGTH_DRIFT, 10, AlertSeverity.CRITICAL)]
    assert "shrank" in found[0].message


def test_one_reward_component_rising_alone_is_flagged() -> None:
    both_rise = {
        "reward/format/mean": [0.2] * 5 + [0.9] * 5,
        "reward/correct/mean": [0.1] * 5 + [0.3] * 5,
    }
    assert evaluate(history(both_rise), [10]) == []
    hacked = {
        "reward/format/mean": [0.2] * 5 + [0.9] * 5,
        "reward/correct/mean": [0.1] * 5 + [0.09] * 5,
    }
    found = evaluate(history(hacked), [10])
    assert kinds(found) == [(AlertKind.REWARD_COMPONENT_DOMINANCE, 10, AlertSeverity.WARNING)]
    assert "'format' 0.2 -> 0.9" in found[0].message
    assert "'correct' 0.1 -> 0.09" in found[0].message
    assert evaluate(history({"reward/format/mean": [0.2] * 5 + [0.9] * 5}), [10]) == []


def test_kl_spikes_need_a_jump_over_the_median_and_an_absolute_floor() -> None:
    tiny = [0.0001] * 10 + [0.002]  # 20x, but far below the floor: noise
    assert evaluate(history({PPO_KL: tiny}), [11]) == []
    spike = [0.004, 0.005, 0.006, 0.004, 0.005, 0.02, 0.005, 0.004, 0.005, 0.006, 0.05]
    found = evaluate(history({PPO_KL: spike, KL_LOSS: [0.06] * 11}), [11])
    assert kinds(found) == [(AlertKind.KL_SPIKE, 11, AlertSeverity.WARNING)]
    assert "actor/ppo_kl = 0.05, 10.0x its median 0.005" in found[0].message
    blow_up = [0.01] * 10 + [0.5]
    found = evaluate(history({KL_LOSS: blow_up}), [11])
    assert kinds(found) == [(AlertKind.KL_SPIKE, 11, AlertSeverity.CRITICAL)]


def test_entropy_jumps_and_collapses_are_flagged() -> None:
    assert evaluate(history({ENTROPY: [1.0, 1.1, 0.9, 1.0, 1.05, 1.3]}), [6]) == []
    found = evaluate(history({ENTROPY: [1.0, 1.1, 0.9, 1.0, 1.05, 0.2]}), [6])
    assert kinds(found) == [(AlertKind.ENTROPY_SPIKE, 6, AlertSeverity.CRITICAL)]
    assert "collapsed" in found[0].message
    found = evaluate(history({ENTROPY: [1.0, 1.1, 0.9, 1.0, 1.05, 2.5]}), [6])
    assert kinds(found) == [(AlertKind.ENTROPY_SPIKE, 6, AlertSeverity.WARNING)]
    assert "jumped" in found[0].message


def test_reward_errors_warn_at_5_percent_and_are_critical_at_25() -> None:
    found = evaluate(history({REWARD_ERROR_RATE: [0.0, 0.04, 0.1, 0.3]}), [1, 2, 3, 4])
    assert kinds(found) == [
        (AlertKind.REWARD_ERRORS, 3, AlertSeverity.WARNING),
        (AlertKind.REWARD_ERRORS, 4, AlertSeverity.CRITICAL),  # escalation beats cooldown
    ]
    assert "failed for 10% of responses at step 3" in found[0].message


def test_a_persisting_condition_is_reported_once_per_cooldown() -> None:
    rate = [0.1] * 50
    found = evaluate(history({REWARD_ERROR_RATE: rate}), range(1, 51))
    assert [a.step for a in found] == [1, 1 + alerts.COOLDOWN_STEPS, 1 + 2 * alerts.COOLDOWN_STEPS]
    earlier = history({REWARD_ERROR_RATE: rate})
    earlier.last_alerts[AlertKind.REWARD_ERRORS] = (5, AlertSeverity.WARNING)  # stored before
    assert [a.step for a in evaluate(earlier, range(6, 30))] == [25]


def test_ingest_raises_and_stores_alerts_once(trainer: Trainer) -> None:
    records = [metrics(i, i + 1, {REWARD_ERROR_RATE: 0.5}) for i in range(3)]
    response = trainer.post(records)
    assert response.status_code == 200
    alert = RunAlert.objects.get(run=trainer.run)
    assert (alert.kind, alert.step, alert.severity) == ("reward_errors", 1, "critical")
    assert (alert.attempt, alert.seq) == (1, 0)  # the record that carried step 1
    assert trainer.post(records).json()["duplicates"] == 3
    assert RunAlert.objects.filter(run=trainer.run).count() == 1
    assert IngestedRecord.objects.filter(run=trainer.run).count() == 3
