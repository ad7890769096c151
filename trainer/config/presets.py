"""Named configs. A preset is just a partial config tree applied over the defaults."""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "grpo-tiny-arith": {
        "data": {"train_batch_size": 16},
        "rollout": {"n": 8, "max_new_tokens": 16, "temperature": 1.0},
        "actor": {"optim": {"lr": 1e-4}, "ppo_mini_batch_size": 16, "micro_batch_size": 64},
        "trainer": {"total_steps": 40, "val_every": 10},
    },
    "dr-grpo": {
        "algorithm": {"norm_adv_by_std_in_grpo": False},
        "actor": {"loss_agg_mode": "seq-mean-token-sum-norm"},
    },
    "dapo": {
        "algorithm": {
            "dynamic_sampling": {"enabled": True},
            "overlong": {"enabled": True, "buffer_len": 4},
        },
        "actor": {"clip_ratio_low": 0.2, "clip_ratio_high": 0.28, "loss_agg_mode": "token-mean"},
    },
    "gspo": {
        "actor": {
            "policy_loss": "gspo",
            "clip_ratio_low": 3e-4,
            "clip_ratio_high": 4e-4,
            "loss_agg_mode": "seq-mean-token-mean",
        },
    },
    "rloo": {"algorithm": {"adv_estimator": "rloo"}},
    "reinforce-pp": {
        "algorithm": {"adv_estimator": "reinforce_plus_plus"},
        "actor": {"use_kl_loss": True, "kl_loss_type": "k2"},
    },
    "ppo-gae": {
        "algorithm": {"adv_estimator": "gae", "gamma": 1.0, "lam": 0.95},
        "rollout": {"n": 1},
        "critic": {"optim": {"lr": 1e-4}},
    },
    "grpo-lora-tiny": {
        "data": {"train_batch_size": 16},
        "rollout": {"n": 8, "max_new_tokens": 16, "temperature": 1.0},
        # Adapters learn at a higher rate than full weights (B starts at 0).
        "actor": {
            "optim": {"lr": 2e-3},
            "ppo_mini_batch_size": 16,
            "micro_batch_size": 64,
            "lora": {"rank": 8, "alpha": 16.0, "target_modules": ["all-linear"]},
        },
        "trainer": {"total_steps": 40, "val_every": 10},
    },
    "ppo-rm-tiny": {
        # PPO + GAE scored by the demo reward model (`make-demo-model` builds it) plus the
        # arith rule, both reported as components. The rule weighs 4x: with equal weights
        # PPO games the tiny reward model (a short digit it over-rates) and the rule
        # accuracy falls after ~20 steps; this way both rise (tests/trainer/test_reward_model.py).
        "algorithm": {"adv_estimator": "gae", "gamma": 1.0, "lam": 0.95},
        "data": {"train_batch_size": 16},
        "rollout": {"n": 1, "max_new_tokens": 16},
        "actor": {"optim": {"lr": 1e-4}, "ppo_mini_batch_size": 16, "micro_batch_size": 64},
        "critic": {"optim": {"lr": 1e-4}},
        "reward": {
            # Chosen: with a reward model and no function, the model would score alone.
            "function": "arith",
            "function_weight": 4.0,
            "model": {"path": "var/demo-reward-model", "weight": 1.0},
        },
        "trainer": {"total_steps": 30, "val_every": 10},
    },
    "grpo-tools-arith": {
        # Two-digit arith with a calculator tool run in the sandbox: the demo tools model
        # (`make-demo-model` builds it) learns to call the tool instead of guessing.
        "model": {"path": "var/demo-model-tools"},
        "data": {
            "train_files": ["var/demo-data/tools-arith/train.parquet"],
            "val_files": ["var/demo-data/tools-arith/test.parquet"],
            "train_batch_size": 8,
            "max_val_samples": 64,
        },
        "rollout": {
            "n": 8,
            "max_new_tokens": 24,
            "temperature": 1.0,
            "multi_turn": {
                "enabled": True,
                "environment": "calculator",
                "max_turns": 3,
                "max_episode_tokens": 96,
            },
        },
        "actor": {"optim": {"lr": 1e-4}, "ppo_mini_batch_size": 8, "micro_batch_size": 64},
        "trainer": {"total_steps": 12, "val_every": 6},
    },
    "grpo-kl": {
        "actor": {"use_kl_loss": True, "kl_loss_coef": 0.001, "kl_loss_type": "low_var_kl"},
    },
}


def preset_names() -> list[str]:
    return sorted(PRESETS)
