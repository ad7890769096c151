"""The run config: defaults, overrides, verl translation, validation messages, docs."""

from pathlib import Path

import pytest

from trainer.config import ConfigError, RunConfig, load_config, preset_names
from trainer.config.docs import render_config_docs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_defaults_validate_and_every_field_is_described():
    cfg = RunConfig()
    assert cfg.algorithm.adv_estimator == "grpo"

    def walk(model):
        for name, field in model.model_fields.items():
            assert field.description or hasattr(field.annotation, "model_fields"), name
            if hasattr(field.annotation, "model_fields"):
                walk(field.annotation)

    walk(RunConfig)


def test_dotted_overrides_are_parsed_as_yaml_scalars():
    cfg = load_config(overrides=["actor.optim.lr=3e-6", "rollout.stop=[x, y]", "rollout.n=4"])
    assert cfg.actor.optim.lr == pytest.approx(3e-6)
    assert cfg.rollout.stop == ["x", "y"]
    assert cfg.rollout.n == 4


def test_yaml_file_then_overrides_win(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("rollout:\n  n: 3\n  max_new_tokens: 20\n")
    cfg = load_config(path, ["rollout.n=5"])
    assert (cfg.rollout.n, cfg.rollout.max_new_tokens) == (5, 20)


def test_verl_overrides_are_translated():
    cfg = load_config(
        overrides=[
            "actor_rollout_ref.rollout.n=5",
            "actor_rollout_ref.actor.optim.lr=1e-6",
            "actor_rollout_ref.actor.use_kl_loss=True",
            "actor_rollout_ref.actor.kl_loss_type=k3",
            "actor_rollout_ref.actor.clip_ratio=0.25",
            "algorithm.kl_ctrl.kl_coef=0.01",
            "trainer.total_training_steps=7",
            "trainer.test_freq=2",
            "trainer.save_freq=3",
            "data.max_response_length=48",
            "custom_reward_function.path=/tmp/r.py",
        ]
    )
    assert cfg.rollout.n == 5
    assert cfg.actor.optim.lr == pytest.approx(1e-6)
    assert cfg.actor.use_kl_loss and cfg.actor.kl_loss_type == "k3"
    assert cfg.actor.clip_ratio_low == cfg.actor.clip_ratio_high == 0.25
    assert cfg.algorithm.kl_ctrl.kl_coef == 0.01
    assert (cfg.trainer.total_steps, cfg.trainer.val_every, cfg.checkpoint.save_every) == (7, 2, 3)
    assert cfg.rollout.max_new_tokens == 48
    assert cfg.reward.function == "custom" and cfg.reward.custom_path == "/tmp/r.py"


def test_verl_lora_overrides_are_translated():
    cfg = load_config(
        overrides=[
            "actor_rollout_ref.model.lora_rank=16",
            "actor_rollout_ref.model.lora_alpha=32",
            "actor_rollout_ref.model.target_modules=all-linear",
            "actor_rollout_ref.rollout.load_format=safetensors",
        ]
    )
    assert (cfg.actor.lora.rank, cfg.actor.lora.alpha) == (16, 32.0)
    assert cfg.actor.lora.target_modules == ["all-linear"] and cfg.actor.lora.enabled


def test_verl_reward_model_overrides_are_translated():
    cfg = load_config(
        overrides=[
            "reward_model.enable=True",
            "reward_model.model.path=/models/rm",
            "reward_model.micro_batch_size_per_gpu=4",
            "reward_model.max_length=1024",
            "reward_model.reward_manager=batch",
        ]
    )
    assert cfg.reward.model.path == "/models/rm"
    assert (cfg.reward.model.batch_size, cfg.reward.model.max_length) == (4, 1024)
    with pytest.raises(ConfigError, match="reward_model.ulysses_sequence_parallel_size"):
        load_config(overrides=["reward_model.ulysses_sequence_parallel_size=2"])


def test_verl_reward_model_resource_pool_becomes_its_own_worker_group():
    cfg = load_config(
        overrides=[
            "reward_model.model.path=/models/rm",
            "reward_model.enable_resource_pool=True",
            "reward_model.n_gpus_per_node=2",
            "reward_model.nnodes=3",
        ]
    )
    assert cfg.reward.model.placement == "worker_group"
    resources = cfg.reward.model.resources
    assert (resources.num_workers, resources.gpus_per_worker) == (6, 1.0)
    off = load_config(overrides=["reward_model.enable_resource_pool=false"])
    assert off.reward.model.placement == "colocated"
    with pytest.raises(ConfigError, match="reward_model.nnodes=0"):
        load_config(overrides=["reward_model.n_gpus_per_node=1", "reward_model.nnodes=0"])


def test_untranslatable_verl_overrides_are_listed():
    with pytest.raises(
        ConfigError, match="no RL Studio equivalent: actor_rollout_ref.rollout.nope"
    ):
        load_config(overrides=["actor_rollout_ref.rollout.nope=0.5"])


def test_unknown_keys_and_bad_choices_name_the_field():
    with pytest.raises(ConfigError, match="unknown config key 'actor.lrr'"):
        load_config(overrides=["actor.lrr=1"])
    with pytest.raises(ConfigError, match="algorithm.adv_estimator"):
        load_config(overrides=["algorithm.adv_estimator=magic"])


def test_cross_field_rules_explain_the_fix():
    with pytest.raises(ConfigError, match="rollout.n >= 2"):
        load_config(overrides=["algorithm.adv_estimator=rloo", "rollout.n=1"])


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_validates(name):
    assert isinstance(load_config(preset=name), RunConfig)


def test_config_docs_are_up_to_date():
    assert DOCS.read_text() == render_config_docs(), (
        "docs/config.md is stale: run `python -m trainer config-docs`"
    )
