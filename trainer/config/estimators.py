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
    # ReMax: the rollout step decodes one greedy response per prompt and scores it.
    needs_greedy_baseline: bool = False
    # Optimal token baselines: old log-probs and the sum of squared token probabilities.
    needs_token_probabilities: bool = False


_GROUP = EstimatorTraits(compares_within_group=True, needs_critic=False)
_GROUP_OR_ONE = EstimatorTraits(
    compares_within_group=True, needs_critic=False, one_response_groups=True
)
_ALONE = EstimatorTraits(compares_within_group=False, needs_critic=False)
_TOKEN_BASELINE = EstimatorTraits(
    compares_within_group=True, needs_critic=False, needs_token_probabilities=True
)

ESTIMATOR_TRAITS: Mapping[AdvantageEstimator, EstimatorTraits] = MappingProxyType(
    {
        # A group of one is accepted as verl accepts it (see `one_response_groups`).
        "grpo": _GROUP_OR_ONE,
        "grpo_vectorized": _GROUP_OR_ONE,
        "gae": EstimatorTraits(compares_within_group=False, needs_critic=True),
        "rloo": _GROUP,
        "rloo_vectorized": _GROUP,
        "reinforce_plus_plus": _ALONE,
        "reinforce_plus_plus_baseline": _GROUP,
        "grpo_passk": _GROUP,
        # The baseline is the greedy response, not the group: one sample per prompt works.
        "remax": EstimatorTraits(
            compares_within_group=False, needs_critic=False, needs_greedy_baseline=True
        ),
        "opo": _GROUP,
        "gpg": _GROUP,
        "gdpo": _GROUP,
        "optimal_token_baseline": _TOKEN_BASELINE,
        "tir_optimal_token_baseline": _TOKEN_BASELINE,
    }
)
