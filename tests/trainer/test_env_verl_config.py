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
