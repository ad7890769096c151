"""What each advantage estimator asks of a run, read by name nowhere else.

The estimators themselves are tensor functions (`trainer.algorithms.advantages`, which
imports torch); their traits live here so the config can be validated, and the roles
chosen, without torch. A test keeps the two registries' names equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the schema imports this module
    from trainer.config.schema import AdvantageEstimator


@dataclass(frozen=True)
class EstimatorTraits:
    compares_within_group: bool  # a baseline from the other responses: rollout.n >= 2
    needs_critic: bool  # a value model is trained alongside the actor
    # rollout.n = 1 is accepted, as verl accepts it: a group of one has mean 0 and std 1
    # (verl's compute_grpo_outcome_advantage), so its advantage is its own score.
    one_response_groups: bool = False


ESTIMATOR_TRAITS: Mapping[AdvantageEstimator, EstimatorTraits] = MappingProxyType(
    {
        "grpo": EstimatorTraits(
            compares_within_group=True, needs_critic=False, one_response_groups=True
        ),
        "gae": EstimatorTraits(compares_within_group=False, needs_critic=True),
        "rloo": EstimatorTraits(compares_within_group=True, needs_critic=False),
        "reinforce_plus_plus": EstimatorTraits(compares_within_group=False, needs_critic=False),
        "reinforce_plus_plus_baseline": EstimatorTraits(
            compares_within_group=True, needs_critic=False
        ),
    }
)
