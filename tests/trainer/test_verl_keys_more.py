"""verl keys its example scripts use beyond the quickstart: each is honoured the way verl
honours it, or refused naming the key as typed and why."""

from __future__ import annotations

import pytest
import torch

from trainer.config import ConfigError, compose, load_config
from trainer.config.schema import OptimConfig
from trainer.training.optim import build_scheduler, lr_multiplier, set_schedule_length


def test_warmup_ratios_translate_and_warm_up_over_that_share_of_the_run():
    cfg = load_config(
        overrides=[
            "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio=0.1",
            "critic.optim.lr_warmup_steps_ratio=0.05",
            "actor_rollout_ref.actor.optim.lr_warmup_steps=-1",
        ]
    )
    assert (cfg.actor.optim.warmup_ratio, cfg.actor.optim.warmup_steps) == (0.1, 0)
    assert cfg.critic.optim.warmup_ratio == 0.05
    # verl: int(0.1 * 45) = 4 warmup steps; lr_warmup_steps above 0 wins over the ratio.
    ratio = OptimConfig(warmup_ratio=0.1)
    assert [lr_multiplier(s, 45, ratio) for s in range(5)] == [0.25, 0.5, 0.75, 1.0, 1.0]
    assert lr_multiplier(0, 45, OptimConfig(warmup_ratio=0.1, warmup_steps=2)) == 0.5


def test_the_schedule_takes_the_runs_length_when_the_loop_knows_it():
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([weight], lr=1.0)
    optim = OptimConfig(lr=1.0, warmup_ratio=0.5)
    scheduler = build_scheduler(optimizer, 1_000_000, optim)
    set_schedule_length(scheduler, 8, optim)  # 4 warmup steps of 8
    lrs = []
    for _ in range(5):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0])


def test_dapos_overlong_buffer_is_our_overlong_shaping_under_either_reward_section():
    for section in ("reward_model", "reward"):
        kwargs = f"+{section}.reward_kwargs"
        cfg = load_config(
            overrides=[
                "data.max_response_length=64",
                f"{kwargs}.overlong_buffer_cfg.enable=True",
                f"{kwargs}.overlong_buffer_cfg.len=16",
                f"{kwargs}.overlong_buffer_cfg.penalty_factor=1.5",
                f"{kwargs}.overlong_buffer_cfg.log=False",
                f"{kwargs}.max_resp_len=64",
            ]
        )
        overlong = cfg.algorithm.overlong
        assert (overlong.enabled, overlong.buffer_len, overlong.penalty_factor) == (True, 16, 1.5)
    off = load_config(
        overrides=[
            "+reward_model.reward_kwargs.overlong_buffer_cfg.enable=False",
            "+reward_model.reward_kwargs.overlong_buffer_cfg.len=4096",
        ]
    )
    assert off.algorithm.overlong.enabled is False
    with pytest.raises(ConfigError, match=r"max_resp_len=99 differs from rollout\.max_new_tokens"):
        load_config(overrides=["+reward_model.reward_kwargs.max_resp_len=99"])


def test_other_inference_servers_generate_with_vllm_with_a_note_naming_the_key():
    for name in ("sglang", "trtllm"):
        composed = compose(overrides=[f"actor_rollout_ref.rollout.name={name}"])
        assert composed.tree["rollout"]["engine"] == "vllm"
        (note,) = composed.ignored
        assert note.describe().startswith(f"actor_rollout_ref.rollout.name={name!r} is ignored")
        assert "vLLM" in note.reason
    assert load_config(overrides=["actor_rollout_ref.rollout.name=hf"]).rollout.engine == "hf"
    with pytest.raises(ConfigError, match=r"actor_rollout_ref\.rollout\.name='lmdeploy': RL"):
        load_config(overrides=["actor_rollout_ref.rollout.name=lmdeploy"])


def test_grpo_with_one_response_per_prompt_runs_as_in_verl_with_a_warning():
    from trainer.algorithms.advantages import AdvantageInputs, grpo
    from trainer.training.loop import one_response_group_note

    cfg = load_config(overrides=["algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=1"])
    assert "rollout.n=1" in one_response_group_note(cfg)
    assert one_response_group_note(load_config(overrides=["rollout.n=2"])) == ""
    with pytest.raises(ConfigError, match="rloo.*rollout.n >= 2"):
        load_config(overrides=["algorithm.adv_estimator=rloo", "rollout.n=1"])
    rewards = torch.tensor([[0.0, 2.0], [0.0, -1.0]])
    inputs = AdvantageInputs(
        token_rewards=rewards,
        response_mask=torch.ones(2, 2),
        group_index=torch.tensor([0, 1]),
        values=None,
        gamma=1.0,
        lam=1.0,
        norm_by_std=True,
    )
    advantages, _ = grpo(inputs)
    assert advantages[:, 0].tolist() == pytest.approx([2.0, -1.0], rel=1e-5)


def test_megatron_settings_are_refused_naming_the_key_as_typed():
    for key in (
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4",
        "actor_rollout_ref.ref.megatron.pipeline_model_parallel_size=2",
        "actor_rollout_ref.actor.megatron.context_parallel_size=2",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform",
        "critic.megatron.expert_model_parallel_size=8",
    ):
        typed = key.removeprefix("+").partition("=")[0]
        with pytest.raises(ConfigError, match=rf"{typed.replace('.', '[.]')}=.*FSDP2"):
            load_config(overrides=[key])


RM_SCRIPT_KEYS = [  # examples/ppo_trainer/run_qwen2-7b_rm.sh's reward model, verbatim
    "reward_model.enable=True",
    "reward_model.model.path=/models/FsfairX-LLaMA3-RM-v0.1",
    "reward_model.use_reward_loop=True",
    "reward_model.rollout.name=vllm",
    "reward_model.rollout.gpu_memory_utilization=0.8",
    "reward_model.rollout.tensor_model_parallel_size=1",
    "reward_model.rollout.prompt_length=2048",
    "reward_model.rollout.response_length=1024",
    "reward_model.num_workers=8",
]


def test_a_reward_model_served_by_verls_vllm_is_our_classifier_reward_model_with_a_note():
    composed = compose(overrides=RM_SCRIPT_KEYS)
    assert composed.tree["reward"]["model"]["path"] == "/models/FsfairX-LLaMA3-RM-v0.1"
    notes = {i.key: i.reason for i in composed.ignored}
    assert "sequence classifier" in notes["reward_model.rollout.name"]
    assert "reward_model.use_reward_loop" in notes
    spelled = compose(overrides=["reward.reward_model.rollout.name=vllm"])
    assert [i.key for i in spelled.ignored] == ["reward.reward_model.rollout.name"]


def test_a_generative_reward_model_is_refused_when_it_loads():
    from types import SimpleNamespace

    from trainer.models.reward_model import refuse_generative_reward_model

    judge = SimpleNamespace(architectures=["Qwen2ForCausalLM"])
    with pytest.raises(ValueError, match=r"Qwen2ForCausalLM, not a sequence classifier"):
        refuse_generative_reward_model("/models/judge", judge)
    refuse_generative_reward_model(
        "/rm", SimpleNamespace(architectures=["LlamaForSequenceClassification"])
    )


def test_a_batch_that_is_not_a_multiple_of_the_mini_batch_ends_with_a_smaller_mini_batch():
    from trainer.training.batch import RolloutBatch
    from trainer.training.data_parallel import SINGLE_PROCESS
    from trainer.training.update import PpoPasses, micro_weight

    cfg = load_config(overrides=["data.train_batch_size=5", "actor.ppo_mini_batch_size=2"])
    assert cfg.data.train_batch_size % cfg.actor.ppo_mini_batch_size == 1
    rows, width = 15, 4  # 5 prompts x 3 responses
    mask = (torch.arange(width) < torch.arange(rows).remainder(width).unsqueeze(1) + 1).float()
    ids = torch.zeros(rows, 2 + width, dtype=torch.long)
    batch = RolloutBatch(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        position_ids=ids,
        response_mask=mask,
        group_index=torch.arange(rows) // 3,
        scores=torch.zeros(rows),
        prompt_width=2,
    )
    seen: list[tuple[list[int], float, float]] = []

    def accumulate(mini, mask_total, row_total, sums):
        seen.append((mini.group_index.tolist(), float(mask_total), float(row_total)))
        # Two micro-batches: their shares of the mini-batch's loss add up to one.
        halves = (mini.response_mask[: mini.size // 2], mini.response_mask[mini.size // 2 :])
        for mode in ("token-mean", "seq-mean-token-mean"):
            shares = [micro_weight(h, mask_total, row_total, mode) for h in halves]
            assert float(sum(shares)) == pytest.approx(1.0)
        (weight.sum() * 0).backward()

    weight = torch.nn.Parameter(torch.zeros(1))
    passes = PpoPasses("actor", epochs=1, mini_batch_rows=2 * 3, grad_clip=1.0)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    module = torch.nn.Module()
    module.weight = weight
    generator = torch.Generator().manual_seed(0)
    passes.run(module, optimizer, batch, generator, SINGLE_PROCESS, accumulate)
    assert [len(groups) for groups, _, _ in seen] == [6, 6, 3]  # whole groups, last smaller
    for groups, mask_total, row_total in seen:  # each normalised by its own counts
        assert row_total == len(groups)
        picked = [r for r in range(rows) if r // 3 in set(groups)]
        assert mask_total == float(mask[picked].sum())


def test_a_critic_starts_from_its_own_model_when_it_shares_the_actors_tokenizer(
    demo_assets, tmp_path
):
    from transformers import AutoModelForCausalLM

    from trainer.models.loading import check_same_tokenizer, load_tokenizer
    from trainer.training.state import build_state

    actor_path, critic_path = demo_assets / "model", tmp_path / "critic"
    tokenizer = load_tokenizer(actor_path)
    other = AutoModelForCausalLM.from_pretrained(actor_path, local_files_only=True)
    with torch.no_grad():
        other.get_input_embeddings().weight.mul_(2.0)  # another model of the same shape
    other.save_pretrained(critic_path)
    tokenizer.save_pretrained(critic_path)
    data = demo_assets / "data" / "arith"
    cfg = load_config(
        overrides=[
            f"model.path={actor_path}",
            f"critic.model.path={critic_path}",  # verl's key, spelled as ours
            f"data.train_files=[{data / 'train.parquet'}]",
            "data.val_files=[]",
        ]
    )
    assert cfg.needs_critic and cfg.critic_model_path == str(critic_path)
    state = build_state(cfg)
    assert state.critic is not None
    critic_embeddings = state.critic.backbone.get_input_embeddings().weight
    torch.testing.assert_close(critic_embeddings, other.get_input_embeddings().weight)
    # A model with another vocabulary is refused, naming the key.
    tokenizer.add_tokens(["<another-token>"])
    tokenizer.save_pretrained(critic_path)
    with pytest.raises(ValueError, match=r"critic\.model\.path=.*another tokenizer"):
        check_same_tokenizer(load_tokenizer(actor_path), critic_path, "critic.model.path")


def test_training_starts_from_a_saved_lora_adapter_and_a_different_one_is_refused(
    demo_assets, tmp_path
):
    from trainer.config.schema import LoraConfig
    from trainer.models.loading import load_policy
    from trainer.models.lora import add_adapters, export_adapted
    from trainer.training.state import build_state

    model_path, adapter = demo_assets / "model", tmp_path / "adapter"
    lora = LoraConfig(rank=4, alpha=8.0, target_modules=["q_proj", "v_proj"])
    torch.manual_seed(1)
    saved = add_adapters(load_policy(model_path), lora)
    with torch.no_grad():  # trained adapters: B is not zero
        for name, param in saved.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.05)
    export_adapted(saved, adapter, "adapter")
    data = demo_assets / "data" / "arith"
    cfg = load_config(
        overrides=[
            f"model.path={model_path}",
            f"data.train_files=[{data / 'train.parquet'}]",
            "data.val_files=[]",
            # verl's script gives the path alone: rank, alpha and targets are the adapter's.
            f"actor_rollout_ref.model.lora_adapter_path={adapter}",
        ]
    )
    assert (cfg.actor.lora.rank, cfg.actor.lora.alpha) == (4, 8.0)
    assert cfg.actor.lora.target_modules == ["q_proj", "v_proj"]
    given = load_config(
        overrides=[
            f"actor_rollout_ref.model.lora_adapter_path={adapter}",
            "actor_rollout_ref.model.lora_rank=8",
        ]
    )
    assert (given.actor.lora.rank, given.actor.lora.alpha) == (8, 8.0)  # given ones stay
    state = build_state(cfg)
    ids = torch.tensor([[1, 5, 9, 13, 2, 7]])
    with torch.no_grad():
        expected = torch.log_softmax(saved(input_ids=ids).logits, dim=-1)
        started = torch.log_softmax(state.actor(input_ids=ids).logits, dim=-1)
        fresh = add_adapters(load_policy(model_path), lora)
        base = torch.log_softmax(fresh(input_ids=ids).logits, dim=-1)
    torch.testing.assert_close(started, expected)
    assert not torch.allclose(started, base)  # the adapter changed the policy
    other = cfg.actor.lora.model_copy(update={"rank": 8})
    with pytest.raises(ValueError, match=r"adapter_path=.*rank 4 where actor\.lora\.rank=8"):
        build_state(cfg.model_copy(update={"actor": cfg.actor.model_copy(update={"lora": other})}))
    other = cfg.actor.lora.model_copy(update={"target_modules": ["q_proj"]})
    with pytest.raises(ValueError, match=r"adapters on other modules"):
        build_state(cfg.model_copy(update={"actor": cfg.actor.model_copy(update={"lora": other})}))
    with pytest.raises(ConfigError, match=r"adapter_path starts from a saved adapter; set"):
        load_config(overrides=[f"actor.lora.adapter_path={adapter}"])
    with pytest.raises(ConfigError, match=r"lora_adapter_path=.*cannot read its adapter_config"):
        load_config(overrides=[f"actor_rollout_ref.model.lora_adapter_path={tmp_path / 'no'}"])
    # A request from outside (the studio) is refused before the adapter's config is read.
    with pytest.raises(ConfigError, match=r"lora_adapter_path: Names a file or folder"):
        compose(
            overrides=[f"actor_rollout_ref.model.lora_adapter_path={tmp_path / 'no'}"],
            server_paths=False,
        )


def test_image_columns_are_refused_at_check_and_at_load_naming_the_column():
    from trainer.data.formats import DataFormatError, records_from_rows

    with pytest.raises(ConfigError, match=r"data\.image_key='images': multimodal inputs"):
        load_config(overrides=["data.image_key=images"])
    with pytest.raises(
        ConfigError, match=r"data\.mm_processor_kwargs\.max_pixels=1024: multimodal"
    ):
        load_config(overrides=["+data.mm_processor_kwargs.max_pixels=1024"])
    row = {
        "data_source": "hiyouga/geometry3k",
        "prompt": [{"role": "user", "content": "<image>Find x."}],
        "reward_model": {"ground_truth": "3"},
    }
    cfg = load_config().data
    assert len(records_from_rows([{**row, "images": []}], cfg)) == 1  # an empty column
    with pytest.raises(DataFormatError, match=r"row 2, column 'images'.*text models"):
        records_from_rows([{**row, "images": None}, {**row, "images": [{"bytes": b"x"}]}], cfg)


def test_model_config_overrides_that_keep_weight_shapes_apply_at_load_and_others_are_refused(
    demo_assets,
):
    from trainer.models.loading import load_policy
    from trainer.training.state import build_state

    data = demo_assets / "data" / "arith"
    cfg = load_config(
        overrides=[
            f"model.path={demo_assets / 'model'}",
            f"data.train_files=[{data / 'train.parquet'}]",
            "data.val_files=[]",
            "+actor_rollout_ref.model.override_config.max_position_embeddings=4096",
            "+actor_rollout_ref.model.override_config.attention_dropout=0.1",
            "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        ]
    )
    assert cfg.model.config_overrides == {"max_position_embeddings": 4096, "attention_dropout": 0.1}
    actor = build_state(cfg).actor
    assert actor.config.max_position_embeddings == 4096 and actor.config.attention_dropout == 0.1
    plain = load_policy(demo_assets / "model")
    for (name, weight), (_, loaded) in zip(
        plain.state_dict().items(), actor.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(weight, loaded, msg=name)  # the same weights, as loaded
    for typed in (
        "+actor_rollout_ref.model.override_config.hidden_size=64",
        "+actor_rollout_ref.model.override_config.num_hidden_layers=1",
        "actor_rollout_ref.model.override_config={vocab_size: 10}",
    ):
        key = typed.removeprefix("+").partition("=")[0].removesuffix(".override_config")
        with pytest.raises(ConfigError, match=rf"{key.replace('.', '[.]')}.*weight's shape"):
            load_config(overrides=[typed])
    with pytest.raises(ConfigError, match=r"model\.config_overrides.*'tie_word_embeddings'"):
        load_config(overrides=["model.config_overrides={tie_word_embeddings: false}"])


def test_over_sample_rate_and_sandbox_fusion_are_accepted_with_what_they_do_in_verl():
    composed = compose(
        overrides=[
            "actor_rollout_ref.rollout.over_sample_rate=0.1",
            "reward_model.sandbox_fusion.url=https://sandbox.example/run_code",
            "reward_model.sandbox_fusion.max_concurrent=128",
            "reward.sandbox_fusion.memory_limit_mb=1024",
            "sandbox_fusion.url=null",
        ]
    )
    notes = {i.key: i.reason for i in composed.ignored}
    assert "read by none of its code" in notes["actor_rollout_ref.rollout.over_sample_rate"]
    assert "no network service" in notes["reward_model.sandbox_fusion.url"]
    assert "RL Studio's own reward sandbox" in notes["reward_model.sandbox_fusion.url"]
    # The service's limits are the built-in code scorer's (verl_code's reward.kwargs).
    assert composed.tree["reward"]["kwargs"] == {"max_concurrent": 128, "memory_limit_mb": 1024}


def test_sandbox_limits_are_ignored_beside_a_custom_reward_function_as_verl_ignores_them(
    tmp_path,
):
    reward = tmp_path / "reward.py"
    reward.write_text("def compute_score(data_source, solution_str, ground_truth):\n    return 0\n")
    composed = compose(
        overrides=[
            f"custom_reward_function.path={reward}",
            "reward.sandbox_fusion.memory_limit_mb=512",
            "sandbox_fusion.max_concurrent=null",
        ]
    )
    notes = {i.key: i.reason for i in composed.ignored}
    assert "custom reward function is set" in notes["reward.sandbox_fusion.memory_limit_mb"]
    assert "kwargs" not in composed.tree.get("reward", {})


def test_keys_of_the_later_examples_that_verl_0_9_1_lacks_are_accepted_or_refused_by_name():
    composed = compose(
        overrides=[
            "reward_model.model.use_remove_padding=True",
            "reward_model.model.fsdp_config.param_offload=False",
            "+actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=bf16",
            "actor_rollout_ref.actor.router_replay.mode=disabled",
        ]
    )
    assert len(composed.ignored) == 4
    for typed, why in (
        ("actor_rollout_ref.model.torch_dtype=bfloat16", "not a key of verl's config"),
        ("actor_rollout_ref.actor.router_replay.mode=R3", "MoE routing replay"),
        ("actor_rollout_ref.actor.optim.lr_decay_style=cosine", "Megatron"),
        (
            "+actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction=1",
            "extra optimiser arguments",
        ),
    ):
        key = typed.removeprefix("+").partition("=")[0]
        with pytest.raises(ConfigError, match=rf"{key.replace('.', '[.]')}=.*{why}"):
            load_config(overrides=[typed])
