"""Alerts that point at reward hacking or collapse, computed from a run's metric stream.

Each rule reads a few metric series around a step (rolling windows over recent steps,
and for drift a baseline of the run's first steps) and returns at most one alert. The
rules are pure functions over a `History`; `alert_store.raise_alerts` loads that history
from the live (not superseded) metric points after an ingest has written its points,
evaluates the new steps in order and stores what fired, idempotently per (run, kind, step).

An alert of one kind is not repeated within `COOLDOWN_STEPS` steps unless it got more
severe, so a condition that persists yields one alert, not one per step.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from studio.telemetry.models import AlertKind, AlertSeverity

ZERO_SPREAD = "critic/zero_spread_group_fraction"
RESPONSE_LENGTH = "response_length/mean"
PPO_KL = "actor/ppo_kl"
KL_LOSS = "actor/kl_loss"
ENTROPY = "actor/entropy"
REWARD_ERROR_RATE = "reward/error_rate"
WATCHED = (ZERO_SPREAD, RESPONSE_LENGTH, PPO_KL, KL_LOSS, ENTROPY, REWARD_ERROR_RATE)
COMPONENT_PREFIX, COMPONENT_SUFFIX = (
    "reward/",
    "/mean",
)  # trainer.training.metrics: reward/{name}/mean

# One alert per kind per this many steps (unless it escalates): a run stuck in a bad
# state for 200 steps should say so ~10 times, not 200.
COOLDOWN_STEPS = 20
# Recent behaviour is the mean of the last few steps: one noisy step must not fire.
RECENT_STEPS = 5
# The run's "normal" is its first steps; drift is measured against them.
BASELINE_STEPS = 5

# GRPO: a group whose responses all got the same reward has zero advantage, so it adds
# no gradient. Half the groups flat means half the batch is wasted (DAPO's dynamic
# sampling exists for this); 80% means training has all but stopped (task too hard or
# too easy, or a reward that saturated or was hacked to a constant).
ZERO_SPREAD_WARNING = 0.5
ZERO_SPREAD_CRITICAL = 0.8

# Responses doubling (or halving) their mean length against the first steps is the
# classic signature of length hacking (padding, repetition until the length cap) or of
# collapse to empty answers; tripling (a third) is rarely anything else.
LENGTH_RATIO_WARNING = 2.0
LENGTH_RATIO_CRITICAL = 3.0
# Below one token the ratio means nothing.
LENGTH_MIN_BASELINE = 1.0

# Components are reported unweighted (each on its own scale), so "dominating" is
# judged by trend, not size: one component rose by at least half of its level since the
# first steps while every other one stayed flat (rose less than 5%) or fell. That is
# the policy optimising one part of the reward (format, length) at the others' expense.
DOMINANCE_LEADER_GAIN = 0.5
DOMINANCE_OTHERS_MAX_GAIN = 0.05
DOMINANCE_EPSILON = 1e-6

# A spike is the step's value against the median of the steps before it (the median
# ignores an earlier outlier). KL well above its recent median means the policy jumped
# away from the reference/old policy in one update (learning rate or clipping too loose,
# a bad batch); 5x is far outside step-to-step noise, 20x is a blow-up.
SPIKE_LOOKBACK = 10
SPIKE_MIN_HISTORY = 5
KL_SPIKE_WARNING = 5.0
KL_SPIKE_CRITICAL = 20.0
# KL sits near zero early on, where tiny absolute changes are huge ratios: below these
# values a jump is noise, whatever the ratio.
KL_SPIKE_FLOOR = {PPO_KL: 0.01, KL_LOSS: 0.05}
# Entropy doubling in one step (sampling turning to noise) or halving (collapse to one
# answer, the policy losing exploration) is abnormal; 4x / a quarter is severe.
ENTROPY_RATIO_WARNING = 2.0
ENTROPY_RATIO_CRITICAL = 4.0
ENTROPY_FLOOR = 0.01  # nats; below it the ratio is noise

# The reward function raised (or returned garbage) for this fraction of responses:
# those get a reward of 0, which trains on a broken signal. 5% is a buggy edge case in
# the reward code; 25% is half-way to the trainer's default abort (max_error_rate 0.5).
REWARD_ERRORS_WARNING = 0.05
REWARD_ERRORS_CRITICAL = 0.25


@dataclass(frozen=True)
class Alert:
    kind: AlertKind
    step: int
    severity: AlertSeverity
    message: str
    values: dict[str, Any]


@dataclass
class History:
    """The metric values the rules need: series near the evaluated steps, the run's
    first steps (baselines), and the latest alert of each kind."""

    series: dict[str, dict[int, float]]
    baselines: dict[str, list[float]]  # key -> values of its first BASELINE_STEPS steps
    last_alerts: dict[str, tuple[int, str]] = field(default_factory=dict)
    _steps: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def window(self, key: str, step: int, n: int) -> list[tuple[int, float]]:
        """The last `n` (step, value) pairs of `key` at or before `step`."""
        points = self.series.get(key)
        if not points:
            return []
        steps = self._steps.get(key)
        if steps is None:
            steps = self._steps[key] = sorted(points)
        end = bisect_right(steps, step)
        return [(s, points[s]) for s in steps[max(0, end - n) : end]]

    def at(self, key: str, step: int) -> float | None:
        return self.series.get(key, {}).get(step)

    def components(self) -> list[str]:
        return sorted(
            key
            for key in self.series
            if key.startswith(COMPONENT_PREFIX)
            and key.endswith(COMPONENT_SUFFIX)
            and key.count("/") == 2
        )


def _severity(critical: bool) -> AlertSeverity:
    return AlertSeverity.CRITICAL if critical else AlertSeverity.WARNING


def _steps(points: list[tuple[int, float]]) -> str:
    first, last = points[0][0], points[-1][0]
    return f"step {last}" if first == last else f"steps {first}-{last}"


def zero_spread_groups(h: History, step: int) -> Alert | None:
    recent = h.window(ZERO_SPREAD, step, RECENT_STEPS)
    if len(recent) < RECENT_STEPS or recent[-1][0] != step:
        return None
    mean = statistics.fmean(v for _, v in recent)
    if mean < ZERO_SPREAD_WARNING:
        return None
    return Alert(
        AlertKind.ZERO_SPREAD_GROUPS,
        step,
        _severity(mean >= ZERO_SPREAD_CRITICAL),
        f"{mean:.0%} of GRPO groups had the same reward for every response over "
        f"{_steps(recent)} (alert at {ZERO_SPREAD_WARNING:.0%}): those groups give no "
        "learning signal. The task may be too hard or too easy for the model, or the "
        "reward saturated.",
        {"fraction": mean, "threshold": ZERO_SPREAD_WARNING, "from_step": recent[0][0]},
    )


def response_length_drift(h: History, step: int) -> Alert | None:
    baseline = h.baselines.get(RESPONSE_LENGTH, [])
    recent = h.window(RESPONSE_LENGTH, step, RECENT_STEPS)
    if len(baseline) < BASELINE_STEPS or len(recent) < RECENT_STEPS or recent[-1][0] != step:
        return None
    base = statistics.fmean(baseline)
    now = statistics.fmean(v for _, v in recent)
    if base < LENGTH_MIN_BASELINE:
        return None
    ratio = now / base
    grew = ratio >= LENGTH_RATIO_WARNING
    if not grew and ratio > 1 / LENGTH_RATIO_WARNING:
        return None
    critical = ratio >= LENGTH_RATIO_CRITICAL or ratio <= 1 / LENGTH_RATIO_CRITICAL
    what = "grew" if grew else "shrank"
    return Alert(
        AlertKind.RESPONSE_LENGTH_DRIFT,
        step,
        _severity(critical),
        f"Mean response length {what} to {now:.1f} tokens over {_steps(recent)}, "
        f"{ratio:.2f}x its {base:.1f} of the first {BASELINE_STEPS} steps: "
        + (
            "the policy may be padding its answers to game the reward."
            if grew
            else "the policy may be collapsing to short or empty answers."
        ),
        {"ratio": ratio, "recent_mean": now, "baseline_mean": base, "from_step": recent[0][0]},
    )


def reward_component_dominance(h: History, step: int) -> Alert | None:
    gains: dict[str, tuple[float, float, float]] = {}  # key -> (gain, baseline, recent)
    for key in h.components():
        baseline = h.baselines.get(key, [])
        recent = h.window(key, step, RECENT_STEPS)
        if len(baseline) < BASELINE_STEPS or len(recent) < RECENT_STEPS:
            return None  # judge only when every component has a baseline and a window
        before = statistics.fmean(baseline)
        now = statistics.fmean(v for _, v in recent)
        scale = max(abs(before), abs(now), DOMINANCE_EPSILON)
        gains[key] = ((now - before) / scale, before, now)
    leader = max(gains, key=lambda k: gains[k][0]) if len(gains) >= 2 else None
    if leader is None or h.at(leader, step) is None:
        return None
    others = [k for k in gains if k != leader]
    if gains[leader][0] < DOMINANCE_LEADER_GAIN or any(
        gains[k][0] > DOMINANCE_OTHERS_MAX_GAIN for k in others
    ):
        return None

    def name(key: str) -> str:
        return key[len(COMPONENT_PREFIX) : -len(COMPONENT_SUFFIX)]

    def change(key: str) -> str:
        _, before, now = gains[key]
        return f"{name(key)!r} {before:.3g} -> {now:.3g}"

    return Alert(
        AlertKind.REWARD_COMPONENT_DOMINANCE,
        step,
        AlertSeverity.WARNING,
        f"Reward component {change(leader)} since the first {BASELINE_STEPS} steps while "
        f"the others stayed flat or fell ({', '.join(change(k) for k in others)}): the "
        "policy may be optimising one part of the reward at the expense of the rest.",
        {
            "component": name(leader),
            "changes": {name(k): {"baseline": gains[k][1], "recent": gains[k][2]} for k in gains},
            "from_step": h.window(leader, step, RECENT_STEPS)[0][0],
        },
    )


def _spike_ratio(h: History, key: str, step: int) -> tuple[float, float, float] | None:
    """(value, median of the steps before, value / median), or None without history."""
    value = h.at(key, step)
    before = h.window(key, step - 1, SPIKE_LOOKBACK)
    if value is None or len(before) < SPIKE_MIN_HISTORY:
        return None
    median = statistics.median(abs(v) for _, v in before)
    return abs(value), median, abs(value) / max(median, 1e-12)


def kl_spike(h: History, step: int) -> Alert | None:
    spikes: dict[str, tuple[float, float, float]] = {}
    for key in (PPO_KL, KL_LOSS):
        found = _spike_ratio(h, key, step)
        if found and found[0] >= KL_SPIKE_FLOOR[key] and found[2] >= KL_SPIKE_WARNING:
            spikes[key] = found
    if not spikes:
        return None
    critical = any(ratio >= KL_SPIKE_CRITICAL for _, _, ratio in spikes.values())
    parts = [
        f"{key} = {value:.3g}, {ratio:.1f}x its median {median:.3g} over the previous "
        f"{SPIKE_LOOKBACK} steps"
        for key, (value, median, ratio) in spikes.items()
    ]
    return Alert(
        AlertKind.KL_SPIKE,
        step,
        _severity(critical),
        f"KL spike at step {step}: {'; '.join(parts)}. The policy moved far in one update "
        "(learning rate, clipping or a bad batch).",
        {key: {"value": v, "median": m, "ratio": r} for key, (v, m, r) in spikes.items()},
    )


def entropy_spike(h: History, step: int) -> Alert | None:
    found = _spike_ratio(h, ENTROPY, step)
    if found is None or found[1] < ENTROPY_FLOOR:
        return None
    value, median, ratio = found
    if 1 / ENTROPY_RATIO_WARNING < ratio < ENTROPY_RATIO_WARNING:
        return None
    critical = ratio >= ENTROPY_RATIO_CRITICAL or ratio <= 1 / ENTROPY_RATIO_CRITICAL
    what = (
        "jumped: sampling is turning to noise"
        if ratio > 1
        else "collapsed: the policy is losing exploration"
    )
    return Alert(
        AlertKind.ENTROPY_SPIKE,
        step,
        _severity(critical),
        f"Entropy {what} ({ENTROPY} = {value:.3g} at step {step}, {ratio:.2f}x its median "
        f"{median:.3g} over the previous {SPIKE_LOOKBACK} steps).",
        {"value": value, "median": median, "ratio": ratio},
    )


def reward_errors(h: History, step: int) -> Alert | None:
    rate = h.at(REWARD_ERROR_RATE, step)
    if rate is None or rate < REWARD_ERRORS_WARNING:
        return None
    return Alert(
        AlertKind.REWARD_ERRORS,
        step,
        _severity(rate >= REWARD_ERRORS_CRITICAL),
        f"The reward function failed for {rate:.0%} of responses at step {step} (alert at "
        f"{REWARD_ERRORS_WARNING:.0%}); failed responses score 0, so the model trains on a "
        "broken signal. See the samples' errors.",
        {"error_rate": rate, "threshold": REWARD_ERRORS_WARNING},
    )


RULES: tuple[Callable[[History, int], Alert | None], ...] = (
    zero_spread_groups,
    response_length_drift,
    reward_component_dominance,
    kl_spike,
    entropy_spike,
    reward_errors,
)
_RANK = {AlertSeverity.WARNING: 0, AlertSeverity.CRITICAL: 1}


def evaluate(history: History, steps: Iterable[int]) -> list[Alert]:
    """Every alert the rules raise at `steps` (ascending), after the cooldown."""
    raised: list[Alert] = []
    for step in sorted(set(steps)):
        for rule in RULES:
            alert = rule(history, step)
            if alert is None:
                continue
            last = history.last_alerts.get(alert.kind)
            if (
                last is not None
                and abs(step - last[0]) < COOLDOWN_STEPS
                and _RANK[alert.severity] <= _RANK[AlertSeverity(last[1])]
            ):
                continue
            history.last_alerts[alert.kind] = (step, alert.severity)
            raised.append(alert)
    return raised
