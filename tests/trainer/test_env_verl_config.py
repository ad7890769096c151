"""verl's multi-turn overrides and tool config, translated where they map."""

from __future__ import annotations

import pytest

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

GSM8K_TOOL = """
tools:
  - class_name: "verl.tools.gsm8k_tool.Gsm8kTool"
    config: {}
    tool_schema:
      type: "function"
      function: {name: "calc_gsm8k_reward", description: "x", parameters: {}}
"""


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


def test_a_verl_tool_without_an_equivalent_is_refused_by_name(tmp_path):
    tool_file = tmp_path / "tools.yaml"
    tool_file.write_text(GSM8K_TOOL)
    with pytest.raises(ConfigError, match="calc_gsm8k_reward.*built-in tools: calculator, python"):
        load_config(overrides=[f"{MT}.tool_config_path={tool_file}"])


def test_interactions_and_other_formats_are_reported_as_untranslatable(tmp_path):
    with pytest.raises(ConfigError, match="interaction_config_path"):
        load_config(overrides=[f"{MT}.interaction_config_path=x.yaml"])
    with pytest.raises(ConfigError, match="only the 'hermes' tool-call format"):
        load_config(overrides=[f"{MT}.format=llama3_json"])
