"""verl's example library runs as it is: every command line of verl's examples/ folder
(tests/data/verl/example_commands.json) goes through `python -m trainer check`, in this
process, with its models and data turned into the tiny demo assets.

Each line is accepted, with the reward verl would use for its data, or refused with every
reason at once, naming the keys typed; which lines are refused and why is data
(tests/data/verl/example_outcomes.json). A line whose keys are not built yet
is marked xfail(strict) (`pending`), so the mark must go when they work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.verl_commands import (
    OUTCOMES,
    PREPROCESS_ROWS,
    VERL_DATA,
    data_files,
    example_lines,
    localized,
)
from trainer.commands.cli import main
from trainer.rewards.resolution import UnresolvedRewardError, require_scorers, scorer_for

LINES = example_lines()
OUTCOME: dict[str, dict[str, Any]] = json.loads(OUTCOMES.read_text())["lines"]
ROWS = json.loads(PREPROCESS_ROWS.read_text())
FAMILIES = {
    "grpo_trainer",
    "ppo_trainer",
    "gspo_trainer",
    "sapo_trainer",
    "cispo_trainer",
    "gpg_trainer",
    "gmpo_trainer",
    "remax_trainer",
    "rloo_trainer",
    "reinforce_plus_plus_trainer",
    "otb_trainer",
    "rollout_correction",
    "sglang_multiturn",
    "tuning",
    "split_placement",
    "prefix_grouper",
}


def _name(line: dict) -> str:
    return line["script"].removeprefix("examples/")


def _expected(line: dict) -> dict[str, Any]:
    return OUTCOME.get(_name(line), {"expect": "accepted"})


def _params() -> list[Any]:
    params = []
    for line in LINES:
        pending = _expected(line).get("pending")
        marks = [pytest.mark.xfail(strict=True, reason=pending)] if pending else []
        params.append(pytest.param(line, id=_name(line), marks=marks))
    return params


LocalAssets = tuple[Path, Path, Path, Path]  # model, train and test files, LoRA adapter


def _assets(demo_assets: Path) -> tuple[Path, Path, Path]:
    data = demo_assets / "data" / "arith"
    return demo_assets / "model", data / "train.parquet", data / "test.parquet"


def _check(line: dict, local: LocalAssets, capsys: Any) -> tuple[int, str, str]:
    """`python -m trainer check` on the line: exit code, stdout, stderr."""
    code = main(["check", *localized(line["args"], *local)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _keys_typed(line: dict) -> list[str]:
    return [arg.partition("=")[0].lstrip("+") for arg in line["args"]]


def _must_name(line: dict, expected: dict[str, Any]) -> list[str]:
    """What the refusal must name: the table's keys, and by its reason the keys typed
    that select Megatron, image columns or a class of code."""
    names = list(expected.get("names", []))
    because = expected["because"]
    typed = _keys_typed(line)
    if because.startswith("Megatron"):
        names += [key for key in typed if ".megatron." in key]
        for arg in line["args"]:  # verl's Megatron config, or a file whose defaults name it
            name = arg.partition("=")[2]
            if arg.startswith("--config-name") and "megatron" in name:
                mine = "ppo_megatron_trainer" not in name
                names.append(f"{name.removesuffix('.yaml')}.yaml" if mine else "--config-name")
    if because.startswith("a vision-language"):
        names += [key for key in typed if key == "data.image_key"]
    if "class" in because:
        names += [
            key for key in typed if key in ("data.custom_cls.path", "data.sampler.class_path")
        ]
    return names


def _row_for(file: str) -> dict | None:
    for row in ROWS["rows"]:
        if any(f"/{folder}/" in f"/{file}" for folder in row["folders"]):
            return row
    return None


@pytest.fixture(scope="module")
def local(demo_assets: Path, tmp_path_factory: pytest.TempPathFactory) -> LocalAssets:
    """The tiny assets a line's paths become. The saved LoRA adapter is its config, what
    `check` reads of an adapter (rank, alpha and targets; weights load when training
    starts)."""
    adapter = tmp_path_factory.mktemp("adapter")
    config = {"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"]}
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    return (*_assets(demo_assets), adapter)


@pytest.fixture
def in_verl_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """verl's scripts run from verl's root: its config files are kept at their paths
    in verl under tests/data/verl."""
    monkeypatch.chdir(VERL_DATA)


def test_the_example_library_is_every_family_of_verls_examples():
    assert len(LINES) >= 40
    assert {line["family"] for line in LINES} >= FAMILIES
    assert set(OUTCOME) <= {_name(line) for line in LINES}, "an outcome for no line"
    assert all(line["args"] for line in LINES)


@pytest.mark.parametrize("line", _params())
def test_verls_example_is_accepted_or_refused_with_every_reason(line, local, capsys, in_verl_root):
    expected = _expected(line)
    code, out, err = _check(line, local, capsys)
    if expected["expect"] == "refused":
        assert code == 2, f"{_name(line)} was accepted; expected refused: {expected['because']}"
        missing = [name for name in _must_name(line, expected) if name not in err]
        assert not missing, f"the refusal does not name {missing}:\n{err}"
        return
    assert code == 0, err
    cfg = yaml.safe_load(out)
    typed = _keys_typed(line)
    if "custom_reward_function.path" in typed:
        assert cfg["reward"]["function"] == "custom"
        return
    assert cfg["reward"]["function"] is None
    if cfg["reward"]["model"]["path"]:
        return  # the reward model scores every row alone, as in verl (rewards.resolution)
    # Each row's data source picks the scorer: the one verl's default_compute_score uses.
    for file in data_files(line["args"]):
        row = _row_for(file)
        if row is None:
            known = [*ROWS["prebuilt"], *ROWS["placeholders"]]
            assert any(p in file for p in known), f"{file}: no preprocess row"
            continue
        assert row["verl_scores"] and not row.get("vision")
        assert scorer_for(row["row"]["data_source"]) == "verl_default"


def test_the_data_sources_verls_preprocessing_writes_resolve_to_verls_reward():
    for entry in ROWS["rows"]:
        source = entry["row"]["data_source"]
        if entry["verl_scores"] and not entry.get("vision"):
            assert scorer_for(source) == "verl_default", source
        else:  # verl scores it with a model, or not at all, or it is an image dataset
            with pytest.raises(UnresolvedRewardError, match=source):
                require_scorers(None, [source])


def test_the_counts_of_accepted_and_refused_lines(local, capsys, in_verl_root):
    outcomes: dict[str, list[str]] = {"accepted": [], "refused": []}
    for line in LINES:
        code, _, _ = _check(line, local, capsys)
        outcomes["accepted" if code == 0 else "refused"].append(_name(line))
    pending = {name for name, e in OUTCOME.items() if e.get("pending")}
    with capsys.disabled():
        print(
            f"\nverl's examples: {len(outcomes['accepted'])} accepted, "
            f"{len(outcomes['refused'])} refused of {len(LINES)} "
            f"({len(pending)} waiting on other areas)"
        )
    for kind, names in outcomes.items():
        wrong = [n for n in names if n not in pending and _expected_by_name(n) != kind]
        assert not wrong, f"{kind} but expected otherwise: {wrong}"


def _expected_by_name(name: str) -> str:
    return OUTCOME.get(name, {"expect": "accepted"})["expect"]


def test_every_refusal_of_a_line_is_reported_at_once(capsys, in_verl_root):
    code = main(
        [
            "check",
            "--config-path=config",
            "--config-name=ppo_megatron_trainer",
            "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2",
            "trainer.critic_warmup=5",
            "actor.lrr=1",
            "trainer.resume_mode=resume_path",
            "actor_rollout_ref.rollout.n=0",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "6 problems" in err, err
    for typed in (
        "--config-name=ppo_megatron_trainer",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size",
        "trainer.critic_warmup=5",
        "'actor.lrr'",
        "trainer.resume_mode='resume_path'",
        "rollout.n",
    ):
        assert typed in err, f"{typed} is not named:\n{err}"


def test_a_config_file_is_read_and_its_keys_are_classified(demo_assets, capsys, in_verl_root):
    model, train, test = _assets(demo_assets)
    common = [f"actor_rollout_ref.model.path={model}", f"data.train_files={train}"]
    common.append(f"data.val_files={test}")
    file = [
        "--config-path=./examples/sglang_multiturn/config",
        "--config-name=gsm8k_multiturn_grpo",
    ]
    typed = ["actor_rollout_ref.rollout.name=vllm", "data.max_response_length=256"]
    assert main(["check", *file, *common, *typed]) == 0
    out = capsys.readouterr().out
    cfg = yaml.safe_load(out)
    assert cfg["data"]["max_prompt_length"] == 1024  # the file's
    assert cfg["rollout"]["multi_turn"]["max_turns"] == 5  # the file's max_assistant_turns
    assert cfg["rollout"]["engine"] == "vllm"  # typed wins over the file's sglang
    assert cfg["rollout"]["max_new_tokens"] == 256  # typed wins over the file's 1024
    assert "# verl override data.return_raw_chat=True is ignored" in out  # classified
    # verl's own trainer config is verl's defaults: the same as naming none.
    assert main(["check", "--config-path=config", "--config-name=ppo_trainer.yaml", *common]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == yaml.safe_load(_checked(capsys, common))


def _checked(capsys: Any, items: list[str]) -> str:
    assert main(["check", *items]) == 0
    return capsys.readouterr().out


def test_a_megatron_config_file_is_refused_by_its_defaults(capsys, in_verl_root):
    code = main(
        [
            "check",
            "--config-path=./examples/sglang_multiturn/config",
            "--config-name=gsm8k_multiturn_megatron_grpo",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "gsm8k_multiturn_megatron_grpo.yaml: defaults names ppo_megatron_trainer" in err


def test_a_refused_key_of_a_config_file_is_named_with_the_file(capsys, in_verl_root):
    code = main(
        [
            "check",
            "--config-path=./examples/sglang_multiturn/config",
            "--config-name=geo3k_multiturn_grpo",
            "actor_rollout_ref.rollout.name=vllm",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "actor_rollout_ref.model.custom_chat_template=" in err
    assert "(in geo3k_multiturn_grpo.yaml)" in err
