"""Our use of Optuna's samplers (studio.sweeps.study): each trial asked for through a
study rebuilt from the records, as the driver does, on a seeded synthetic objective."""

from __future__ import annotations

import math
import statistics

import pytest

from studio.sweeps.space import parse_space
from studio.sweeps.study import TrialRecord, ask

SPACE = parse_space(
    [
        {"name": "actor.optim.lr", "type": "float", "low": 1e-6, "high": 1e-2, "log": True},
        {"name": "algorithm.kl_ctrl.kl_coef", "type": "float", "low": 0.0, "high": 1.0},
    ]
)


def objective(params: dict[str, float]) -> float:
    """A smooth bowl with its best at lr = 3e-4, kl = 0.2 (higher is better)."""
    lr = math.log10(params["actor.optim.lr"]) - math.log10(3e-4)
    kl = params["algorithm.kl_ctrl.kl_coef"] - 0.2
    return -(lr**2) - 4 * kl**2


def search(method: str, seed: int, trials: int = 40) -> list[float]:
    records: list[TrialRecord] = []
    for number in range(trials):
        params = ask(records, SPACE, method, seed, "maximize")
        records.append(TrialRecord(number, params, "complete", objective(params)))
    return [r.value for r in records if r.value is not None]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tpe_beats_random_on_best_and_on_the_median_of_its_last_20_trials(seed: int) -> None:
    tpe, rand = search("tpe", seed), search("random", seed)
    assert max(tpe) > max(rand)
    assert statistics.median(tpe[-20:]) > statistics.median(rand[-20:])


def test_the_same_history_asks_for_the_same_parameters() -> None:
    records = [
        TrialRecord(0, {"actor.optim.lr": 1e-4, "algorithm.kl_ctrl.kl_coef": 0.5}, "complete", -1.0)
    ]
    for method in ("random", "tpe"):
        assert ask(records, SPACE, method, 3, "maximize") == ask(
            records, SPACE, method, 3, "maximize"
        )
        assert ask(records, SPACE, method, 3, "maximize") != ask(
            records, SPACE, method, 4, "maximize"
        )


def test_a_grid_visits_each_point_once_whatever_the_order_of_asks() -> None:
    space = parse_space(
        [
            {"name": "rollout.n", "type": "int", "low": 2, "high": 8, "step": 2},
            {"name": "rollout.temperature", "type": "choice", "values": [0.7, 1.0]},
        ]
    )
    records: list[TrialRecord] = []
    for number in range(8):
        records.append(TrialRecord(number, ask(records, space, "grid", 0, "maximize"), "running"))
    points = {(r.params["rollout.n"], r.params["rollout.temperature"]) for r in records}
    assert points == {(n, t) for n in (2, 4, 6, 8) for t in (0.7, 1.0)}
