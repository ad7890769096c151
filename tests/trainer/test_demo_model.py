"""The offline demo assets and the loaders: tokenizer, Llama policy, value model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from trainer.demo.model import (
    DemoAssets,
    WarmStart,
    arith_accuracy,
    build_demo_assets,
    build_model,
    build_tokenizer,
    first_int_matches,
    warm_start,
)
from trainer.models.loading import (
    ValueModel,
    load_policy,
    load_tokenizer,
    resolve_device,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHAT = [{"role": "user", "content": "7+5="}]


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> DemoAssets:
    root = tmp_path_factory.mktemp("demo")
    return build_demo_assets(
        root / "model",
        root / "data",
        seed=0,
        warmup_steps=3,
        hidden_size=64,
        num_layers=2,
        n_train=40,
        n_test=10,
        evaluate=False,
    )


def test_it_writes_a_model_folder_and_both_toy_datasets(assets: DemoAssets) -> None:
    files = {p.name for p in assets.model_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= files
    for name in ("arith", "countdown"):
        train, test = assets.data[name]
        assert train == assets.model_dir.parent / "data" / name / "train.parquet"
        assert train.is_file() and test.is_file()


def test_auto_tokenizer_loads_the_same_tokenizer_with_left_padding(assets: DemoAssets) -> None:
    built = build_tokenizer(seed=0)
    loaded = AutoTokenizer.from_pretrained(str(assets.model_dir), local_files_only=True)

    text = loaded.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
    assert text == "<|im_start|>user\n7+5=<|im_end|>\n<|im_start|>assistant\n"
    assert loaded(text)["input_ids"] == built(text)["input_ids"]
    assert loaded.convert_ids_to_tokens(loaded(text)["input_ids"])[:1] == ["<|im_start|>"]
    assert loaded.eos_token == "<|im_end|>" and loaded.pad_token == "<|pad|>"
    assert loaded.padding_side == "left"
    batch = loaded(["1", "12+34="], padding=True)
    assert batch["input_ids"][0][0] == loaded.pad_token_id
    assert batch["attention_mask"][0][0] == 0


def test_the_tokenizer_round_trips_any_text(assets: DemoAssets) -> None:
    tokenizer = load_tokenizer(assets.model_dir)
    for text in ("7+5=12", "Using the numbers [3, 17]", "héllo wörld ✓ 中文 \t\n"):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == text
    assert tokenizer("123", add_special_tokens=False)["input_ids"] == [
        tokenizer.convert_tokens_to_ids(d) for d in "123"
    ]
    assert len(tokenizer) <= 512


def test_auto_model_loads_a_llama_with_tied_embeddings(assets: DemoAssets) -> None:
    model = AutoModelForCausalLM.from_pretrained(str(assets.model_dir), local_files_only=True)
    tokenizer = load_tokenizer(assets.model_dir)

    assert model.config.model_type == "llama"
    assert model.config.eos_token_id == tokenizer.eos_token_id
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    ids = torch.tensor([tokenizer("1+2=")["input_ids"]])
    assert model(input_ids=ids).logits.shape == (1, ids.shape[1], len(tokenizer))

    policy = load_policy(assets.model_dir, dtype="bfloat16", device="cpu")
    assert policy.dtype == torch.bfloat16


def test_value_model_gives_one_value_per_token_and_saves_its_head(
    assets: DemoAssets, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    critic = ValueModel.from_pretrained(assets.model_dir)
    ids = torch.tensor([[5, 6, 7, 8], [2, 2, 9, 10]])
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])

    values = critic(ids, mask)

    assert values.shape == (2, 4)
    assert values.dtype == torch.float32
    assert values._base is None  # what FSDP2 checks: a view would lose its backward hook
    critic.save_pretrained(tmp_path / "critic")
    reloaded = ValueModel.from_pretrained(tmp_path / "critic")
    torch.testing.assert_close(reloaded(ids, mask), values)
    fresh = ValueModel.from_pretrained(assets.model_dir)
    fresh.load_state_dict(critic.state_dict())
    torch.testing.assert_close(fresh(ids, mask), values)


def test_the_bench_size_has_about_ten_times_the_parameters() -> None:
    tokenizer = build_tokenizer()

    def body_params(model: torch.nn.Module) -> int:
        return sum(p.numel() for n, p in model.named_parameters() if "embed" not in n)

    tiny, bench = build_model(tokenizer, "tiny"), build_model(tokenizer, "bench")

    assert tiny.config.hidden_size == 256 and tiny.config.num_hidden_layers == 4
    assert tiny.config.intermediate_size == 688
    assert bench.config.hidden_size == 512 and bench.config.num_hidden_layers == 8
    assert 7 <= body_params(bench) / body_params(tiny) <= 9


def test_warm_start_lowers_the_supervised_loss() -> None:
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, hidden_size=64, num_layers=2)

    first = warm_start(model, tokenizer, WarmStart(steps=1, batch_size=16))
    later = warm_start(model, tokenizer, WarmStart(steps=40, batch_size=16, lr_warmup_steps=5))

    assert later < first - 1.0


def test_first_int_matches_only_the_first_integer() -> None:
    assert first_int_matches("12", "12") == 1.0
    assert first_int_matches(" 12 and 3", "12") == 1.0
    assert first_int_matches("7+5=12", "12") == 0.0
    assert first_int_matches("-3", "-3") == 1.0
    assert first_int_matches("none", "1") == 0.0


def test_resolve_device() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="allowed: 'auto', 'cpu', 'cuda'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="resources.device='auto' or 'cpu'"):
            resolve_device("cuda")


def test_loading_a_folder_without_a_model_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="set model.path"):
        load_policy(tmp_path)


@pytest.mark.slow
def test_the_default_demo_model_is_weak_but_learnable(demo_assets: Path) -> None:
    # `demo_assets` (tests/trainer/conftest.py) is the default build, shared by the session.
    model = load_policy(demo_assets / "model")
    tokenizer = load_tokenizer(demo_assets / "model")

    greedy = arith_accuracy(model, tokenizer, temperature=0.0)
    sampled = arith_accuracy(model, tokenizer, temperature=1.0, n=4)

    assert 0.05 <= greedy <= 0.3
    assert sampled >= 0.1
