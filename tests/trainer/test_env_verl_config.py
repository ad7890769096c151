"""verl's multi-turn overrides and tool config, translated where they map."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainer.commands.cli import main
from trainer.config import load_config
from trainer.config.overrides import ConfigError

MT = "actor_rollout_ref.rollout.multi_turn"

SANDBOX_FUSION = """
tools:
  - class_name: "verl.tools.sandbox_fusion_tools.SandboxFusionTool"
    config:
      sandbox_fusion_url: "https://example.invalid/run_code"
      default_timeout: 7
    tool_schema:
      type: "function"
      function:
        name: "code_interpreter"
        description: "A tool for executing code."
        parameters: {type: object, properties: {code: {type: string}}, required: [code]}
"""

UNKNOWN_TOOL = """
tools:
  - class_name: "my_project.tools.WeatherTool"
    config: {}
    tool_schema:
      type: "function"
      function: {name: "get_weather", description: "x", parameters: {}}
"""

VERL_DATA = Path(__file__).parents[1] / "data" / "verl"


def test_verl_multi_turn_keys_and_a_code_interpreter_tool_config_translate(tmp_path):
    tool_file = tmp_path / "tools.yaml"
    tool_file.write_text(SANDBOX_FUSION)
    cfg = load_config(
        overrides=[
            f"{MT}.enable=true",
            f"{MT}.max_assistant_turns=5",
            f"{MT}.max_tool_response_length=300",
            f"{MT}.format=hermes",
            f"{MT}.tool_config_path={tool_file}",
        ]
    )
    mt = cfg.rollout.multi_turn
    assert mt.enabled and mt.max_turns == 5 and mt.max_tool_result_chars == 300
    assert mt.environment == "python" and mt.tool_timeout_s == 7.0


def test_a_verl_tool_class_without_an_equivalent_is_refused_by_name(tmp_path):
    tool_file = tmp_path / "tools.yaml"
    tool_file.write_text(UNKNOWN_TOOL)
    with pytest.raises(ConfigError, match="'my_project.tools.WeatherTool'.*Gsm8kTool"):
        load_config(overrides=[f"{MT}.tool_config_path={tool_file}"])
    interaction = tmp_path / "interaction.yaml"
    interaction.write_text("interaction: [{name: w, class_name: my.WeatherInteraction}]")
    with pytest.raises(ConfigError, match="'my.WeatherInteraction'.*Gsm8kInteraction"):
        load_config(overrides=[f"{MT}.interaction_config_path={interaction}"])


def test_other_tool_call_formats_are_refused():
    with pytest.raises(ConfigError, match="only the 'hermes' tool-call format"):
        load_config(overrides=[f"{MT}.format=llama3_json"])


def _check(capsys, assets: Path, *overrides: str) -> tuple[dict, list[str]]:
    """`python -m trainer check` on verl's overrides: the resolved config and the lines
    naming what is ignored."""
    data = assets / "data" / "tools-arith"
    base = [
        f"actor_rollout_ref.model.path={assets / 'model'}",
        f"data.train_files=[{data / 'train.parquet'}]",
        f"data.val_files=[{data / 'test.parquet'}]",
        "algorithm.adv_estimator=grpo",
    ]
    assert main(["check", *base, *overrides]) == 0
    out = capsys.readouterr().out
    return yaml.safe_load(out), [line for line in out.splitlines() if line.startswith("# ")]


def test_verls_gsm8k_tool_and_interaction_configs_translate_with_the_episode_budget(
    demo_tools_assets, capsys
):
    cfg, _ = _check(
        capsys,
        demo_tools_assets,
        f"{MT}.enable=true",
        f"{MT}.tool_config_path={VERL_DATA / 'gsm8k_tool_config.yaml'}",
        f"{MT}.interaction_config_path={VERL_DATA / 'gsm8k_interaction_config.yaml'}",
        f"{MT}.max_user_turns=5",
        "data.max_response_length=300",
    )
    mt = cfg["rollout"]["multi_turn"]
    assert (mt["environment"], mt["interaction"], mt["max_user_turns"]) == (
        "gsm8k_answer",
        "gsm8k",
        5,
    )
    # verl's whole multi-turn response fits in max_response_length; verl adds no step
    # reward to the score.
    assert mt["max_episode_tokens"] == 300 and cfg["rollout"]["max_new_tokens"] == 300
    assert mt["add_step_rewards"] is False


def test_verls_search_tool_config_translates_and_its_url_is_ignored_for_the_setting(
    demo_tools_assets, capsys
):
    cfg, comments = _check(
        capsys,
        demo_tools_assets,
        f"{MT}.enable=true",
        f"{MT}.tool_config_path={VERL_DATA / 'search_tool_config.yaml'}",
        f"{MT}.max_user_turns=0",
    )
    mt = cfg["rollout"]["multi_turn"]
    assert mt["environment"] == "search" and mt["tool_timeout_s"] == 30.0
    assert mt["max_user_turns"] is None  # verl's 0: no bound
    [url] = [c for c in comments if "retrieval_service_url" in c]
    assert "http://127.0.0.1:8000/retrieve" in url and "RLSTUDIO_SEARCH_RETRIEVER_URL" in url


def test_a_request_may_not_name_an_interaction_config_file(tmp_path):
    from trainer.config import compose_tree

    target = tmp_path / "interaction.yaml"
    with pytest.raises(ConfigError, match="a request may not do"):
        compose_tree(overrides=[f"{MT}.interaction_config_path={target}"], server_paths=False)


def test_the_retriever_setting_is_documented_for_operators():
    deploy = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text()
    assert "`RLSTUDIO_SEARCH_RETRIEVER_URL`" in deploy


def test_a_translated_gsm8k_tool_and_interaction_config_trains_a_step(demo_tools_assets, tmp_path):
    from trainer.training.loop import Trainer

    from .conftest import tools_config
    from .test_training import RecordingReporter

    cfg = tools_config(
        demo_tools_assets,
        tmp_path,
        f"{MT}.tool_config_path={VERL_DATA / 'gsm8k_tool_config.yaml'}",
        f"{MT}.interaction_config_path={VERL_DATA / 'gsm8k_interaction_config.yaml'}",
        f"{MT}.max_user_turns=2",
        "data.train_batch_size=2",
        "actor.ppo_mini_batch_size=2",
        "rollout.n=2",
        "trainer.total_steps=1",
        "trainer.val_before_train=false",
        "trainer.val_every=0",
    )
    reporter = RecordingReporter()
    Trainer(cfg, reporter).fit()
    assert reporter.statuses == ["running", "succeeded"]
    assert "calc_gsm8k_reward" in reporter.samples_seen[0].prompt  # the tool is offered
    turns = [t for s in reporter.samples_seen for t in s.turns or ()]
    # The demo model answers without `#### `, so the interaction asks it to reflect.
    assert any(t["role"] == "user" and "reflect" in t["content"] for t in turns)
    assert all("reward" not in t for t in turns)  # verl adds no step reward


def test_a_translated_search_tool_config_trains_a_step_on_the_loopback_retriever(
    demo_tools_assets, tmp_path, monkeypatch
):
    from trainer.env.retriever import RETRIEVER_URL_ENV
    from trainer.training.loop import Trainer

    from .conftest import tools_config
    from .retriever_stub import retriever_stub
    from .test_training import RecordingReporter

    with retriever_stub() as stub:
        monkeypatch.setenv(RETRIEVER_URL_ENV, stub.url)
        cfg = tools_config(
            demo_tools_assets,
            tmp_path,
            f"{MT}.tool_config_path={VERL_DATA / 'search_tool_config.yaml'}",
            f"{MT}.enable=true",
            "data.train_batch_size=2",
            "actor.ppo_mini_batch_size=2",
            "rollout.n=2",
            "trainer.total_steps=1",
            "trainer.val_before_train=false",
            "trainer.val_every=0",
        )
        reporter = RecordingReporter()
        Trainer(cfg, reporter).fit()
    assert reporter.statuses == ["running", "succeeded"]
    assert "search" in reporter.samples_seen[0].prompt
    assert all(s.turns for s in reporter.samples_seen)
