"""RL algorithms as pure tensor functions with closed, single-signature registries.

Shapes: B responses, T response tokens, V vocabulary. Masks are float 0/1 (B, T).
"""

from trainer.algorithms.advantages import (
    ADVANTAGE_ESTIMATORS,
    AdvantageFn,
    AdvantageInputs,
    compute_advantages,
    scores_to_token_rewards,
)
from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.dapo import groups_with_reward_spread, overlong_penalty
from trainer.algorithms.entropy import entropy_from_logits
from trainer.algorithms.kl import (
    KL_ESTIMATORS,
    AdaptiveKLController,
    FixedKLController,
    apply_kl_in_reward,
    kl_penalty,
    make_kl_controller,
)
from trainer.algorithms.policy_loss import (
    POLICY_LOSSES,
    PolicyLossFn,
    PolicyLossInputs,
    PolicyLossOutput,
)
from trainer.algorithms.stats import masked_mean, masked_sum, masked_var, masked_whiten
from trainer.algorithms.value import value_loss

__all__ = [
    "ADVANTAGE_ESTIMATORS",
    "KL_ESTIMATORS",
    "POLICY_LOSSES",
    "AdaptiveKLController",
    "AdvantageFn",
    "AdvantageInputs",
    "FixedKLController",
    "PolicyLossFn",
    "PolicyLossInputs",
    "PolicyLossOutput",
    "aggregate_loss",
    "apply_kl_in_reward",
    "compute_advantages",
    "entropy_from_logits",
    "groups_with_reward_spread",
    "kl_penalty",
    "make_kl_controller",
    "masked_mean",
    "masked_sum",
    "masked_var",
    "masked_whiten",
    "overlong_penalty",
    "scores_to_token_rewards",
    "value_loss",
]
