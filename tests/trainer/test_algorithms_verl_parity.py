"""RL Studio's algorithm registries against verl 0.9.1's recorded outputs.

tests/data/verl/generate_algorithm_outputs.py ran verl's own core_algos and
rollout_corr_helper on the seeded inputs stored in the JSON; these tests feed the same
inputs to ours. verl is never imported here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from trainer.algorithms.advantages import ADVANTAGE_ESTIMATORS, AdvantageInputs
from trainer.algorithms.aggregation import aggregate_loss
from trainer.algorithms.pf_ppo import pf_ppo_rows
from trainer.algorithms.policy_loss import POLICY_LOSSES, PolicyLossInputs
from trainer.algorithms.rollout_correction import importance_weights, rejection_mask
from trainer.config.algorithm_section import PolicyLossOptions, RolloutCorrectionConfig

DATA = json.loads(
    (Path(__file__).parents[1] / "data" / "verl" / "algorithm_outputs-0.9.1.json").read_text()
)
OUR_LOSS_NAME = {"vanilla": "ppo"}  # verl's name -> ours, where they differ
ATOL = 2e-5  # the file stores 6 decimals

# Where ours differs from verl on purpose, by (name, case): the rows compared (None: skip
# the entry) and why.
ADVANTAGE_DEVIATIONS: dict[tuple[str, str], tuple[list[int] | None, str]] = {
    ("rloo", "groups_of_three_two_one"): (
        [0, 1, 2, 3, 4],
        "a group of one has no leave-one-out baseline: ours gives it advantage 0, as "
        "verl's rloo_vectorized; verl's loop rloo trains it on its raw score",
    ),
    ("grpo_vectorized", "pairs_without_std"): (
        None,
        "verl's compute_advantage never passes norm_adv_by_std_in_grpo to grpo_vectorized "
        "(it always divides by the std); ours is grpo's function and honours the setting",
    ),
    ("gdpo", "pairs_without_std"): (
        None,
        "likewise: verl's gdpo always normalises by the std, ours honours the setting",
    ),
}
LOSS_DEVIATIONS: dict[tuple[str, str, str], str] = {
    ("geo_mean", "token_advantages_and_an_empty_row", "token-mean"): (
        "verl's geo_mean averages over every row, an empty one too; ours weighs rows like "
        "seq-mean-token-mean, over rows with a response token, so micro-batches add up"
    ),
    ("geo_mean", "token_advantages_and_an_empty_row", "seq-mean-token-mean"): (
        "as above: an empty row does not dilute the mean"
    ),
}


def t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def test_every_name_in_verls_registries_has_a_counterpart_in_ours():
    registries = DATA["registries"]
    missing_estimators = set(registries["advantage_estimators"]) - set(ADVANTAGE_ESTIMATORS)
    missing_losses = {OUR_LOSS_NAME.get(name, name) for name in registries["policy_losses"]} - set(
        POLICY_LOSSES
    )
    assert missing_estimators == set()
    assert missing_losses == set()


def _estimator_inputs(case: dict[str, Any]) -> AdvantageInputs:
    return AdvantageInputs(
        token_rewards=t(case["token_rewards"]),
        response_mask=t(case["response_mask"]),
        group_index=torch.tensor(case["group_index"]),
        values=t(case["values"]),
        gamma=case["gamma"],
        lam=case["lam"],
        norm_by_std=case["norm_adv_by_std_in_grpo"],
        reward_baselines=t(case["reward_baselines"]),
        old_logprobs=t(case["old_logprobs"]),
        sum_pi_squared=t(case["sum_pi_squared"]),
        rollout_is_weights=(
            t(case["rollout_is_weights"]) if "rollout_is_weights" in case else None
        ),
    )


ESTIMATOR_CASES = {case["name"]: case for case in DATA["estimator_inputs"]}


@pytest.mark.parametrize("entry", DATA["advantages"], ids=lambda e: f"{e['estimator']}-{e['case']}")
def test_each_estimator_matches_verl(entry: dict[str, Any]):
    name, case = entry["estimator"], ESTIMATOR_CASES[entry["case"]]
    estimator = ADVANTAGE_ESTIMATORS[name]
    if "error" in entry:  # verl refuses these inputs: so do we
        with pytest.raises(ValueError, match="at least 2 responses per prompt"):
            estimator(_estimator_inputs(case))
        return
    rows, _why = ADVANTAGE_DEVIATIONS.get((name, entry["case"]), (list(range(99)), ""))
    if rows is None:
        pytest.skip(_why)
    advantages, returns = estimator(_estimator_inputs(case))
    # Compared on response tokens: ours are 0 on padding (nothing reads them), where
    # verl's GAE leaves the carried values.
    mask = t(case["response_mask"])
    picked = [r for r in rows if r < advantages.shape[0]]
    for ours, theirs in ((advantages, entry["advantages"]), (returns, entry["returns"])):
        expected = t(theirs) * mask
        torch.testing.assert_close(ours[picked], expected[picked], atol=ATOL, rtol=1e-5)


def test_rloo_gives_a_group_of_one_no_advantage():
    case = ESTIMATOR_CASES["groups_of_three_two_one"]
    advantages, _ = ADVANTAGE_ESTIMATORS["rloo"](_estimator_inputs(case))
    assert torch.all(advantages[5] == 0)


LOSS_INPUTS = {case["name"]: case for case in DATA["loss_inputs"]}


def _loss_inputs(entry: dict[str, Any], logprobs: torch.Tensor) -> PolicyLossInputs:
    case, config = LOSS_INPUTS[entry["case"]], DATA["loss_config"]
    bypass = entry.get("bypass")
    return PolicyLossInputs(
        logprobs=logprobs,
        old_logprobs=t(case["old_logprobs"]),
        advantages=t(case["advantages"]),
        response_mask=t(case["response_mask"]),
        clip_ratio_low=config["clip_ratio_low"],
        clip_ratio_high=config["clip_ratio_high"],
        clip_ratio_c=config["clip_ratio_c"],
        loss_agg_mode=entry["mode"],
        norm_constant=None,
        options=PolicyLossOptions(
            **config["policy_loss"], tau_pos=config["tau_pos"], tau_neg=config["tau_neg"]
        ),
        rollout_correction=(
            RolloutCorrectionConfig(**DATA["bypass_configs"][bypass], bypass_mode=True)
            if bypass
            else None
        ),
    )


METRIC_FIELDS = {
    "actor/pg_clipfrac": "clipfrac",
    "actor/pg_clipfrac_lower": "clipfrac_lower",
    "actor/ppo_kl": "ppo_kl",
}


@pytest.mark.parametrize(
    "entry",
    DATA["losses"],
    ids=lambda e: "-".join(filter(None, (e["policy_loss"], e.get("bypass"), e["case"], e["mode"]))),
)
def test_each_policy_loss_matches_verl_in_value_gradient_and_metrics(entry: dict[str, Any]):
    name = OUR_LOSS_NAME.get(entry["policy_loss"], entry["policy_loss"])
    if why := LOSS_DEVIATIONS.get((name, entry["case"], entry["mode"])):
        pytest.skip(why)
    logprobs = t(LOSS_INPUTS[entry["case"]]["logprobs"]).requires_grad_(True)
    out = POLICY_LOSSES[name](_loss_inputs(entry, logprobs))
    out.loss.backward()
    assert logprobs.grad is not None
    torch.testing.assert_close(out.loss.detach(), t(entry["loss"]), atol=ATOL, rtol=1e-5)
    torch.testing.assert_close(logprobs.grad, t(entry["grad"]), atol=ATOL, rtol=1e-5)
    for key, value in entry["metrics"].items():
        ours = getattr(out, METRIC_FIELDS[key])
        torch.testing.assert_close(ours, t(value), atol=ATOL, rtol=1e-5, msg=key)


CORRECTION = DATA["rollout_correction"][0]


@pytest.mark.parametrize("entry", CORRECTION["cases"], ids=lambda e: json.dumps(e["config"]))
def test_rollout_correction_matches_verl_on_perturbed_logprobs(entry: dict[str, Any]):
    cfg = RolloutCorrectionConfig(**entry["config"])
    old, rollout = t(CORRECTION["old_logprobs"]), t(CORRECTION["rollout_logprobs"])
    mask = t(CORRECTION["response_mask"])
    log_ratio = old - rollout
    if cfg.rollout_is is not None:
        weights = importance_weights(
            log_ratio,
            mask,
            cfg.rollout_is,
            cfg.rollout_is_threshold,
            cfg.rollout_is_batch_normalize,
        )
        torch.testing.assert_close(weights, t(entry["weights"]), atol=ATOL, rtol=1e-5)
    kept = mask
    if cfg.rollout_rs is not None:
        assert cfg.rollout_rs_threshold is not None
        kept = rejection_mask(log_ratio, mask, cfg.rollout_rs, cfg.rollout_rs_threshold)
    torch.testing.assert_close(kept, t(entry["response_mask"]))


PF_PPO = DATA["pf_ppo"][0]


@pytest.mark.parametrize(
    "entry", PF_PPO["cases"], ids=lambda e: f"{e['reweight_method']}-{e['weight_pow']}"
)
def test_pf_ppo_resamples_the_rows_verl_resamples_from_the_same_seed(entry: dict[str, Any]):
    generator = torch.Generator().manual_seed(entry["seed"])
    rows = pf_ppo_rows(
        t(PF_PPO["scores"]), entry["reweight_method"], entry["weight_pow"], generator
    )
    assert rows.tolist() == entry["rows"]


AGGREGATION = DATA["aggregation"][0]


@pytest.mark.parametrize("mode", sorted(AGGREGATION["expected"]))
def test_loss_aggregation_matches_verl_with_an_empty_row(mode: str):
    losses, mask = t(AGGREGATION["losses"]), t(AGGREGATION["response_mask"])
    ours = aggregate_loss(losses, mask, mode, float(mask.shape[-1]))  # type: ignore[arg-type]
    torch.testing.assert_close(ours, t(AGGREGATION["expected"][mode]), atol=ATOL, rtol=1e-5)
