"""What raised an alert, in the terms the run page and the rollout viewer filter by.

An alert is raised by metric series over a window of steps (studio.telemetry.alerts.rules);
its evidence names those steps (as the samples list's `step_min`/`step_max`), the
metric keys that fired, and, for a dominating reward component, the component's name.
It is derived from the stored alert (kind, step, values), so alerts stored before a
rule recorded its window still get one: the alert's own step.
"""

from __future__ import annotations

from typing import Any, TypedDict

from studio.telemetry.alerts.rules import (
    COMPONENT_PREFIX,
    COMPONENT_SUFFIX,
    ENTROPY,
    KL_LOSS,
    PPO_KL,
    RESPONSE_LENGTH,
    REWARD_ERROR_RATE,
    ZERO_SPREAD,
)
from studio.telemetry.models import AlertKind

# The series each kind reads, when it is a fixed one.
_METRICS: dict[str, tuple[str, ...]] = {
    AlertKind.ZERO_SPREAD_GROUPS: (ZERO_SPREAD,),
    AlertKind.RESPONSE_LENGTH_DRIFT: (RESPONSE_LENGTH,),
    AlertKind.ENTROPY_SPIKE: (ENTROPY,),
    AlertKind.REWARD_ERRORS: (REWARD_ERROR_RATE,),
}


class Evidence(TypedDict):
    step_min: int
    step_max: int
    metric_keys: list[str]
    component: str | None


def evidence_of(kind: str, step: int, values: dict[str, Any]) -> Evidence:
    """The steps, metric keys and reward component behind an alert."""
    from_step = values.get("from_step")
    first = from_step if isinstance(from_step, int) and 0 <= from_step <= step else step
    component = values.get("component") if kind == AlertKind.REWARD_COMPONENT_DOMINANCE else None
    if kind == AlertKind.KL_SPIKE:
        keys = [key for key in (PPO_KL, KL_LOSS) if key in values]
    elif isinstance(component, str):
        keys = [f"{COMPONENT_PREFIX}{component}{COMPONENT_SUFFIX}"]
    else:
        keys = list(_METRICS.get(kind, ()))
    return {
        "step_min": first,
        "step_max": step,
        "metric_keys": keys,
        "component": component if isinstance(component, str) else None,
    }
