"""Produce algorithm_outputs-<verl version>.json with verl's own algorithms (run once, by hand).

Needs a scratch environment with verl and torch, nothing heavy:
    python -m venv /tmp/verlenv                       # from a Python that has torch + numpy,
    echo <that site-packages> > /tmp/verlenv/lib/python3.11/site-packages/torch.pth
    /tmp/verlenv/bin/pip install verl==0.9.1 --no-deps
    /tmp/verlenv/bin/python tests/data/verl/generate_algorithm_outputs.py

verl's package `__init__` imports Ray and more; `verl.trainer.ppo.core_algos` and
`rollout_corr_helper` need only torch, numpy and a few verl helpers. The packages above
them are registered as bare namespaces; `verl.utils.torch_functional` and
`verl.utils.groupwise` are imported unchanged with their device helper answering "cpu";
verl's config classes (an OmegaConf-backed dataclass tree) are replaced by the plain
attribute bags below, which carry exactly the fields the algorithms read. The tests never
import verl: tests/trainer/test_algorithms_verl_parity.py compares RL Studio's registries
against the file this writes.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

HERE = Path(__file__).parent
VERSION = importlib.metadata.version("verl")


class Bag(dict):
    """verl's configs are read both as attributes and with .get: a dict that allows both."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc


class AlgoConfig(Bag):
    pass


class ActorConfig(Bag):
    pass


class DataProto:
    """The two DataProto uses on this path: from_dict(tensors=...).batch, and a container
    whose batch/non_tensor_batch/meta_info PF-PPO resamples."""

    def __init__(self, batch: dict, non_tensor_batch: dict | None = None) -> None:
        self.batch, self.non_tensor_batch = batch, non_tensor_batch or {}
        self.meta_info: dict[str, Any] = {}

    @classmethod
    def from_dict(cls, tensors: dict) -> DataProto:
        return cls(tensors)


class _Batch(dict):
    batch_size: Any = None


def _install_verl() -> tuple[Any, Any]:
    root = Path(str(importlib.metadata.distribution("verl").locate_file("verl")))
    for name in ("verl", "verl.utils", "verl.trainer", "verl.trainer.ppo", "verl.workers"):
        module = types.ModuleType(name)
        module.__path__ = [str(root / Path(*name.split(".")[1:]))]
        sys.modules[name] = module
    stubs: dict[str, dict[str, Any]] = {
        "omegaconf": {"DictConfig": Bag},
        "tensordict": {"TensorDict": dict},
        "transformers": {"PreTrainedTokenizer": object},
        "verl.utils.device": {
            "get_device_name": lambda: "cpu",
            "get_torch_device": lambda: torch.cpu,
        },
        "verl.trainer.config": {"AlgoConfig": AlgoConfig},
        "verl.trainer.config.algorithm": {"RolloutCorrectionConfig": Bag},
        "verl.workers.config": {"ActorConfig": ActorConfig},
        "verl.workers.config.actor": {"PolicyLossConfig": Bag},
        "verl.protocol": {"DataProto": DataProto},
    }
    for name, attrs in stubs.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module
    from verl.utils import groupwise

    sys.modules["verl.utils"].__dict__.update(
        as_torch_index=groupwise.as_torch_index, group_mean_std=groupwise.group_mean_std
    )
    from verl.trainer.ppo import core_algos, rollout_corr_helper

    return core_algos, rollout_corr_helper


def r(x: torch.Tensor | float) -> Any:
    """Floats rounded to 6 decimals: the file stays small, and inputs are rounded *before*
    verl sees them, so both sides compute from the very numbers in the file."""
    if isinstance(x, torch.Tensor):
        return np.round(x.detach().double().numpy(), 6).tolist()
    return round(float(x), 6)


def t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def outcome(scores: list[float], mask: torch.Tensor) -> torch.Tensor:
    rewards = torch.zeros_like(mask)
    for row, score in enumerate(scores):
        valid = torch.nonzero(mask[row]).flatten()
        if len(valid):
            rewards[row, valid[-1]] = score
    return rewards


def estimator_cases() -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(44)
    mixed_mask = t(
        [
            [1, 1, 1, 1, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 1, 1],
            [1, 1, 1, 0, 0],
            [0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
        ]
    )  # a fully masked row (4) and a group of one (row 5)
    pair_mask = t(
        [
            [1, 1, 1, 0, 0],
            [1, 1, 1, 1, 1],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0],
            [1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0],
        ]
    )
    holes_mask = t([[1, 1, 0, 0, 1], [1, 0, 0, 1, 1], [1, 1, 1, 1, 0], [1, 1, 0, 1, 0]])
    cases = []
    for name, mask, groups, rewards, norm in (
        (
            "groups_of_three_two_one",
            mixed_mask,
            [7, 7, 7, 3, 3, 5],
            outcome([1.0, 0.0, 0.5, 2.0, 0.0, 0.75], mixed_mask),
            True,
        ),
        (
            "pairs_binary_scores",
            pair_mask,
            [0, 0, 1, 1, 2, 2],
            outcome([1.0, 0.0, 1.0, 1.0, 0.0, 1.0], pair_mask),
            True,
        ),
        (
            "pairs_without_std",
            pair_mask,
            [0, 0, 1, 1, 2, 2],
            outcome([0.3, 0.9, 0.2, 0.7, 0.4, 0.1], pair_mask),
            False,
        ),
        (
            "multi_turn_holes_dense_rewards",
            holes_mask,
            [0, 0, 1, 1],
            torch.round(torch.rand(holes_mask.shape, generator=g) * holes_mask, decimals=3),
            True,
        ),
    ):
        rows = mask.shape[0]
        cases.append(
            {
                "name": name,
                "token_rewards": r(rewards),
                "response_mask": r(mask),
                "group_index": groups,
                "values": r(torch.rand(mask.shape, generator=g) * mask),
                "reward_baselines": r(torch.rand(rows, generator=g)),
                "old_logprobs": r(-torch.rand(mask.shape, generator=g) * 3),
                "sum_pi_squared": r(torch.rand(mask.shape, generator=g) * 0.5),
                "gamma": 0.9,
                "lam": 0.95,
                "norm_adv_by_std_in_grpo": norm,
            }
        )
    # The token baselines scale their path variance by the rollout correction's weights.
    holes = cases[-1]
    holes["rollout_is_weights"] = r(
        (0.5 + torch.rand(holes_mask.shape, generator=g) * 1.5) * holes_mask
    )
    return cases


def run_estimator(core: Any, name: str, case: dict[str, Any]) -> dict[str, Any]:
    """Call verl's estimator with the arguments verl's compute_advantage passes it."""
    rewards, mask = t(case["token_rewards"]), t(case["response_mask"])
    index = np.array(case["group_index"])
    config = AlgoConfig(
        gamma=case["gamma"], norm_adv_by_std_in_grpo=case["norm_adv_by_std_in_grpo"]
    )
    try:
        if name == "gae":
            out = core.compute_gae_advantage_return(
                rewards, t(case["values"]), mask, case["gamma"], case["lam"]
            )
        elif name == "grpo":
            out = core.compute_grpo_outcome_advantage(
                rewards, mask, index, norm_adv_by_std_in_grpo=case["norm_adv_by_std_in_grpo"]
            )
        else:
            kwargs: dict[str, Any] = {
                "token_level_rewards": rewards,
                "response_mask": mask,
                "config": config,
                "index": index,
            }
            if name == "remax":
                kwargs["reward_baselines"] = t(case["reward_baselines"])
            if name in ("optimal_token_baseline", "tir_optimal_token_baseline"):
                kwargs["old_log_probs"] = t(case["old_logprobs"])
                kwargs["sum_pi_squared"] = t(case["sum_pi_squared"])
                weights = case.get("rollout_is_weights")
                kwargs["rollout_is_weights"] = None if weights is None else t(weights)
            out = core.get_adv_estimator_fn(name)(**kwargs)
    except (ValueError, AssertionError) as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    advantages, returns = out
    return {"advantages": r(advantages), "returns": r(returns)}


def loss_cases() -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(91)
    mask = t([[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0]])
    adv = t([[0.8], [-1.2], [0.3], [-0.4]]).expand(4, 6).clone()
    old = -torch.rand(mask.shape, generator=g) * 2 - 0.05
    cases = []
    for name, shift, m, a in (
        ("near_policy", torch.randn(mask.shape, generator=g) * 0.1, mask, adv),
        (
            "extreme_ratios",
            t(
                [
                    [5, -5, 0.1, 25, -25, 0],
                    [3, -3, 0.5, 0, 0, 0],
                    [-0.2, 0.2, 8, -8, 0.05, 0.4],
                    [30, -0.5, 0, 0, 0, 0],
                ]
            ),
            mask,
            adv,
        ),
        (
            "token_advantages_and_an_empty_row",
            torch.randn(mask.shape, generator=g) * 0.3,
            torch.cat([mask[:3], torch.zeros(1, 6)]),
            torch.randn(mask.shape, generator=g),
        ),
    ):
        logprobs = torch.minimum(old + shift, torch.full_like(old, -1e-3))
        cases.append(
            {
                "name": name,
                "old_logprobs": r(old),
                "logprobs": r(logprobs),
                "advantages": r(a * m),
                "response_mask": r(m),
            }
        )
    return cases


LOSS_CONFIG: dict[str, Any] = {
    "clip_ratio": 0.2,
    "clip_ratio_low": 0.2,
    "clip_ratio_high": 0.28,
    "clip_ratio_c": 3.0,
    "tau_pos": 1.0,
    "tau_neg": 1.05,
    # clip_cov picks its tokens at random when more qualify than clip_cov_ratio allows;
    # a ratio of 1 picks them all, so the recorded output does not depend on verl's RNG.
    "policy_loss": {
        "clip_cov_ratio": 1.0,
        "clip_cov_lb": -1.0,
        "clip_cov_ub": 0.05,
        "kl_cov_ratio": 0.2,
        "ppo_kl_coef": 0.1,
        "dro_beta": 0.5,
    },
}
BYPASS: dict[str, dict[str, Any]] = {
    "ppo_clip_token_is_token_rs": {
        "loss_type": "ppo_clip",
        "rollout_is": "token",
        "rollout_is_threshold": 2.0,
        "rollout_rs": "token_k1",
        "rollout_rs_threshold": "0.5_2.0",
    },
    "reinforce_sequence_is": {
        "loss_type": "reinforce",
        "rollout_is": "sequence",
        "rollout_is_threshold": 2.0,
        "rollout_rs": None,
        "rollout_rs_threshold": None,
    },
}


def run_loss(core: Any, name: str, case: dict[str, Any], mode: str, bypass: dict | None) -> dict:
    logprobs = t(case["logprobs"]).requires_grad_(True)
    policy_loss = Bag(LOSS_CONFIG["policy_loss"])
    if bypass is not None:
        policy_loss["rollout_correction"] = Bag(bypass, rollout_is_batch_normalize=False)
    config = ActorConfig(LOSS_CONFIG, policy_loss=policy_loss, global_batch_info={})
    try:
        loss, metrics = core.get_policy_loss_fn(name)(
            t(case["old_logprobs"]),
            logprobs,
            t(case["advantages"]),
            t(case["response_mask"]),
            mode,
            config,
            None,
        )
        loss.backward()
    except (ValueError, AssertionError) as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    kept = {k: r(v) for k, v in metrics.items() if k.startswith("actor/")}
    assert logprobs.grad is not None
    return {"loss": r(loss), "grad": r(logprobs.grad), "metrics": kept}


def correction_cases(helper: Any) -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(7)
    mask = t([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]])
    old = -torch.rand(mask.shape, generator=g) * 2
    rollout = old + t(
        [
            [0.05, -0.1, 0.9, 0.0, 0],
            [0.01, 0.02, -0.01, 0.0, 0.03],
            [-1.5, 0.2, 0, 0, 0],
            [0.3, 0.3, 0.3, 0.3, -2.5],
        ]
    )
    configs: list[dict[str, Any]] = [
        {"rollout_is": "token", "rollout_is_threshold": 2.0},
        {"rollout_is": "sequence", "rollout_is_threshold": 2.0},
        {"rollout_is": "token", "rollout_is_threshold": "0.5_1.5"},
        {"rollout_is": "token", "rollout_is_threshold": 2.0, "rollout_is_batch_normalize": True},
        {"rollout_is": "sequence", "rollout_is_threshold": 5.0, "rollout_is_batch_normalize": True},
        {"rollout_rs": "token_k1", "rollout_rs_threshold": 2.0},
        {"rollout_rs": "token_k2,seq_max_k3", "rollout_rs_threshold": "0.1,0.5"},
        {"rollout_rs": "seq_sum_k1", "rollout_rs_threshold": "0.3_1.5"},
        {"rollout_rs": "seq_mean_k3", "rollout_rs_threshold": 0.05},
        {"rollout_rs": "seq_mean_k2,token_k3", "rollout_rs_threshold": 0.2},
    ]
    old, rollout = t(r(old)), t(r(rollout))
    out = []
    for cfg in configs:
        weights, kept, _ = helper.compute_rollout_correction_and_rejection_mask(
            old_log_prob=old, rollout_log_prob=rollout, response_mask=mask, **cfg
        )
        out.append(
            {
                "config": cfg,
                "weights": None if weights is None else r(weights.batch["rollout_is_weights"]),
                "response_mask": r(kept),
            }
        )
    return [
        {
            "old_logprobs": r(old),
            "rollout_logprobs": r(rollout),
            "response_mask": r(mask),
            "cases": out,
        }
    ]


def pf_ppo_cases(core: Any) -> list[dict[str, Any]]:
    scores = t([[0, 0, 1.0], [0, 0, -0.5], [0, 0, 0.25], [0, 0, 2.0], [0, 0, 0.0], [0, 0, 2.0]])
    out = []
    for method, power in (("pow", 2.0), ("pow", 0.5), ("max_min", 2.0), ("max_random", 2.0)):
        batch = _Batch(token_level_scores=scores, row=torch.arange(6))
        torch.manual_seed(1234)  # verl draws from the global generator
        data = core.compute_pf_ppo_reweight_data(DataProto(batch), method, power)
        out.append(
            {
                "reweight_method": method,
                "weight_pow": power,
                "seed": 1234,
                "rows": data.batch["row"].tolist(),
            }
        )
    return [{"scores": r(scores.sum(-1)), "cases": out}]


def aggregation_cases(core: Any) -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(3)
    losses = t(r(torch.randn(3, 4, generator=g)))
    mask = t([[1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]])
    modes = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
    return [
        {
            "losses": r(losses),
            "response_mask": r(mask),
            "expected": {m: r(core.agg_loss(losses, mask, m)) for m in modes},
        }
    ]


def main() -> None:
    core, helper = _install_verl()
    estimators = sorted(core.ADV_ESTIMATOR_REGISTRY)
    losses = sorted(core.POLICY_LOSS_REGISTRY)
    cases = estimator_cases()
    advantage_entries = [
        {"estimator": name, "case": case["name"], **run_estimator(core, name, case)}
        for name in estimators
        for case in cases
    ]
    loss_entries = []
    for case in loss_cases():
        for name in losses:
            for mode in ("token-mean", "seq-mean-token-mean"):
                if name == "bypass_mode":
                    for label, bypass in BYPASS.items():
                        out = run_loss(core, name, case, mode, bypass)
                        loss_entries.append(
                            {
                                "policy_loss": name,
                                "case": case["name"],
                                "mode": mode,
                                "bypass": label,
                                **out,
                            }
                        )
                else:
                    out = run_loss(core, name, case, mode, None)
                    loss_entries.append(
                        {"policy_loss": name, "case": case["name"], "mode": mode, **out}
                    )
    document = {
        "verl_version": VERSION,
        "generated_by": "tests/data/verl/generate_algorithm_outputs.py",
        "registries": {"advantage_estimators": estimators, "policy_losses": losses},
        "estimator_inputs": cases,
        "advantages": advantage_entries,
        "loss_config": LOSS_CONFIG,
        "bypass_configs": BYPASS,
        "loss_inputs": loss_cases(),
        "losses": loss_entries,
        "rollout_correction": correction_cases(helper),
        "pf_ppo": pf_ppo_cases(core),
        "aggregation": aggregation_cases(core),
    }
    path = HERE / f"algorithm_outputs-{VERSION}.json"
    path.write_text(json.dumps(document, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
