"""verl's command lines, unchanged: every key of verl's trainer config is classified, and
verl's quickstart and GSM8K example scripts pass `python -m trainer check` with the keys
that map resolved field by field and the speed-only ones listed as ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.verl_commands import GRPO_GSM8K, PPO_GSM8K, QUICKSTART, VERL_DATA, verl_overrides
from trainer.commands.cli import main
from trainer.config import ConfigError, compose, load_config, schema_paths
from trainer.config.verl import VERL_KEY_MAP, classify
from trainer.config.verl_keys import VERL_RULES

VERL_CONFIG = VERL_DATA / "ppo_trainer-0.9.1.yaml"


def _leaves(tree: dict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            keys += _leaves(value, f"{prefix}{key}.")
        else:
            keys.append(f"{prefix}{key}")
    return keys


def test_every_key_of_verls_trainer_config_is_mapped_ignored_or_refused():
    keys = _leaves(yaml.safe_load(VERL_CONFIG.read_text()))
    assert len(keys) > 800  # the whole composed config, not a part of it
    ours = frozenset(schema_paths())
    kinds: dict[str, list[str]] = {"mapped": [], "ignored": [], "refused": []}
    for key in keys:
        found = classify(key, ours)
        assert found is not None, f"verl key {key} is not classified (trainer/config/verl_keys.py)"
        if found.kind != "mapped":
            assert found.reason, f"{key} is {found.kind} without a reason"
        kinds[found.kind].append(key)
    assert {"actor_rollout_ref.actor.optim.lr", "critic.model.path"} <= set(kinds["mapped"])
    assert "actor_rollout_ref.model.use_liger" in kinds["ignored"]
    assert "trainer.critic_warmup" in kinds["refused"]  # but 0 is accepted
    assert all(kinds.values())


def test_the_classification_is_one_table_with_real_targets():
    ours = schema_paths()
    assert not set(VERL_KEY_MAP) & set(VERL_RULES), "a key both mapped and ignored/refused"
    assert {t for t in VERL_KEY_MAP.values() if t} <= ours
    # verl's reward_kwargs maps to reward.kwargs; it must never be refused.
    found = classify("custom_reward_function.reward_kwargs")
    assert found is not None and found.kind == "mapped"


def _assets(demo_assets: Path) -> tuple[Path, Path, Path]:
    data = demo_assets / "data" / "arith"
    return demo_assets / "model", data / "train.parquet", data / "test.parquet"


def _check(capsys, overrides: list[str]) -> tuple[dict, list[str]]:
    """`python -m trainer check` on the overrides: the resolved config and the comment
    lines naming the ignored keys."""
    assert main(["check", *overrides]) == 0
    out = capsys.readouterr().out
    comments = [line for line in out.splitlines() if line.startswith("# verl override ")]
    return yaml.safe_load(out), comments


def _ignored_keys(comments: list[str]) -> set[str]:
    return {line.removeprefix("# verl override ").partition("=")[0] for line in comments}


SPEED_ONLY = {
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
    "actor_rollout_ref.rollout.tensor_model_parallel_size",
    "actor_rollout_ref.rollout.gpu_memory_utilization",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
    "trainer.n_gpus_per_node",
    "trainer.nnodes",
}


def test_verls_quickstart_ppo_with_a_critic_is_accepted(demo_assets, capsys):
    model, train, test = _assets(demo_assets)
    cfg, comments = _check(capsys, verl_overrides(QUICKSTART, model, train, test))
    assert _ignored_keys(comments) == SPEED_ONLY | {"critic.ppo_micro_batch_size_per_gpu"}
    assert len(comments) == len(_ignored_keys(comments))  # each once
    assert cfg["algorithm"]["adv_estimator"] == "gae"  # verl's default, with a critic
    assert cfg["model"]["path"] == str(model)
    assert cfg["data"]["train_files"] == [str(train)] and cfg["data"]["val_files"] == [str(test)]
    assert (cfg["data"]["train_batch_size"], cfg["data"]["max_prompt_length"]) == (256, 512)
    assert cfg["rollout"]["max_new_tokens"] == 512 and cfg["rollout"]["engine"] == "vllm"
    assert cfg["actor"]["optim"]["lr"] == pytest.approx(1e-6)
    assert (cfg["actor"]["ppo_mini_batch_size"], cfg["actor"]["micro_batch_size"]) == (64, 4)
    assert cfg["critic"]["optim"]["lr"] == pytest.approx(1e-5)
    assert cfg["algorithm"]["kl_ctrl"]["kl_coef"] == pytest.approx(0.001)
    assert cfg["logging"]["console"] is True
    assert cfg["trainer"]["val_before_train"] is False
    assert (cfg["checkpoint"]["save_every"], cfg["trainer"]["val_every"]) == (10, 10)
    assert cfg["trainer"]["total_epochs"] == 15


def test_verls_gsm8k_grpo_example_is_accepted(demo_assets, capsys):
    model, train, test = _assets(demo_assets)
    cfg, comments = _check(capsys, verl_overrides(GRPO_GSM8K, model, train, test))
    assert _ignored_keys(comments) == SPEED_ONLY | {
        "data.filter_overlong_prompts",
        "data.truncation",
        "actor_rollout_ref.model.use_remove_padding",
        "actor_rollout_ref.ref.fsdp_config.param_offload",
        "trainer.critic_warmup",
        "trainer.project_name",
    }
    assert cfg["algorithm"]["adv_estimator"] == "grpo"
    assert cfg["reward"]["function"] is None  # verl's default reward, by data source
    assert cfg["model"]["path"] == str(model) and cfg["model"]["gradient_checkpointing"] is True
    assert (cfg["data"]["train_batch_size"], cfg["rollout"]["max_new_tokens"]) == (1024, 1024)
    assert (cfg["actor"]["ppo_mini_batch_size"], cfg["actor"]["micro_batch_size"]) == (256, 40)
    actor = cfg["actor"]
    assert actor["use_kl_loss"] is True and actor["kl_loss_type"] == "low_var_kl"
    assert actor["kl_loss_coef"] == pytest.approx(0.001) and actor["entropy_coeff"] == 0
    assert actor["cpu_offload"] is False  # param_offload / optimizer_offload
    assert (cfg["rollout"]["n"], cfg["rollout"]["engine"]) == (5, "vllm")
    assert cfg["algorithm"]["use_kl_in_reward"] is False
    assert cfg["logging"]["console"] is True  # trainer.logger names console
    assert cfg["trainer"]["experiment_name"] == "qwen2_7b_function_rm"
    assert (cfg["checkpoint"]["save_every"], cfg["trainer"]["val_every"]) == (20, 5)
    assert cfg["trainer"]["total_epochs"] == 15


def test_verls_gsm8k_ppo_example_is_accepted(demo_assets, capsys):
    model, train, test = _assets(demo_assets)
    cfg, comments = _check(capsys, verl_overrides(PPO_GSM8K, model, train, test))
    assert {
        "critic.model.use_remove_padding",
        "critic.model.enable_gradient_checkpointing",
        "critic.ppo_micro_batch_size_per_gpu",
        "critic.model.fsdp_config.param_offload",
        "trainer.use_legacy_worker_impl",
    } <= _ignored_keys(comments)
    assert cfg["algorithm"]["adv_estimator"] == "gae"
    assert (cfg["actor"]["ppo_mini_batch_size"], cfg["actor"]["micro_batch_size"]) == (256, 16)
    assert cfg["actor"]["use_kl_loss"] is False
    assert cfg["critic"]["optim"]["lr"] == pytest.approx(1e-5)
    assert cfg["trainer"]["experiment_name"] == "deepseek_llm_7b_function_rm"
    assert (cfg["checkpoint"]["save_every"], cfg["trainer"]["val_every"]) == (20, 1)


def test_a_critic_of_another_model_starts_from_it_and_other_mini_batches_are_refused():
    other = load_config(overrides=["model.path=/models/actor", "critic.model.path=/models/other"])
    assert (other.critic_model_path, other.algorithm.adv_estimator) == ("/models/other", "gae")
    with pytest.raises(ConfigError, match=r"critic\.ppo_mini_batch_size=4 differs"):
        load_config(overrides=["critic.ppo_mini_batch_size=4"])


def test_keys_that_change_training_are_refused_unless_they_are_what_we_do():
    with pytest.raises(ConfigError, match=r"trainer\.critic_warmup=5: trains the critic alone"):
        load_config(overrides=["trainer.critic_warmup=5"])
    with pytest.raises(ConfigError, match=r"rollout\.do_sample=False: greedy"):
        load_config(overrides=["actor_rollout_ref.rollout.do_sample=False"])
    composed = compose(overrides=["actor_rollout_ref.rollout.do_sample=True"])
    assert [i.key for i in composed.ignored] == ["actor_rollout_ref.rollout.do_sample"]


def test_verl_spellings_of_values_translate():
    cfg = load_config(
        overrides=[
            "+trainer.val_before_train=False",
            "trainer.save_freq=-1",
            "trainer.test_freq=-1",
            "trainer.logger=[wandb]",
            "trainer.resume_mode=disable",
            "trainer.max_actor_ckpt_to_keep=3",
            "algorithm.kl_penalty=kl",
            "actor_rollout_ref.rollout.top_k=-1",
            "actor_rollout_ref.actor.optim.lr_warmup_steps=-1",
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload=True",
            "actor_rollout_ref.actor.fsdp_config.model_dtype=bf16",
            "actor_rollout_ref.actor.use_dynamic_bsz=True",
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=4096",
            "actor_rollout_ref.nccl_timeout=900",
            "critic.optim.lr_warmup_steps=3",
            "critic.grad_clip=0.5",
        ]
    )
    assert cfg.trainer.val_before_train is False
    assert (cfg.checkpoint.save_every, cfg.trainer.val_every, cfg.checkpoint.keep_last) == (0, 0, 3)
    assert cfg.logging.console is False and cfg.checkpoint.resume == "never"
    assert (cfg.algorithm.kl_penalty, cfg.rollout.top_k) == ("k1", 0)
    assert cfg.actor.optim.warmup_steps == 0 and cfg.actor.cpu_offload is True
    assert cfg.model.dtype == "bfloat16" and cfg.actor.max_tokens_per_micro_batch == 4096
    assert cfg.resources.worker_timeout_s == 900
    assert (cfg.critic.optim.warmup_steps, cfg.critic.optim.grad_clip) == (3, 0.5)


def test_ignored_keys_are_logged_once_when_a_run_starts(tmp_path, demo_assets, monkeypatch):
    import trainer.commands.cli as cli

    logged: list[tuple[str, str]] = []
    monkeypatch.setattr(cli, "_fit", lambda cfg, reporter: {})
    monkeypatch.setattr(
        "trainer.reporting.console.ConsoleReporter.log",
        lambda self, level, message: logged.append((level, message)),
    )
    model, train, test = _assets(demo_assets)
    code = main(
        [
            "run",
            f"model.path={model}",
            f"data.train_files=[{train}]",
            f"data.val_files=[{test}]",
            f"checkpoint.dir={tmp_path}",
            "actor_rollout_ref.model.use_liger=True",
            "actor_rollout_ref.model.use_liger=True",
        ]
    )
    assert code == 0
    lines = [(level, m) for level, m in logged if "use_liger" in m]
    assert len(lines) == 1 and lines[0][0] == "warning"
    assert lines[0][1].startswith("verl override actor_rollout_ref.model.use_liger=True is ignored")


def test_reward_kwargs_translate_whole_or_one_at_a_time():
    whole = compose(overrides=["custom_reward_function.reward_kwargs={scale: 2, tag: gsm}"])
    assert whole.tree["reward"]["kwargs"] == {"scale": 2, "tag": "gsm"}
    one = compose(
        overrides=[
            "+custom_reward_function.reward_kwargs.scale=2",
            "custom_reward_function.reward_kwargs.tag=gsm",
        ]
    )
    assert one.tree["reward"]["kwargs"] == {"scale": 2, "tag": "gsm"}
    assert load_config(
        overrides=["+custom_reward_function.reward_kwargs.scale=2"]
    ).reward.kwargs == {"scale": 2}
