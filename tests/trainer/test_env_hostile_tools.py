"""A hostile tool call (infinite loop, network, fork bomb) fails as an observation for
the model, and the environment keeps serving: the next calls and episodes work."""

from __future__ import annotations

import pytest

from tests.trainer.test_env_episodes import ScriptedEngine, _prompt
from trainer.config.multi_turn_section import MultiTurnConfig
from trainer.demo.model import build_tokenizer
from trainer.demo.tools_model import TOOLS_CHAT_TEMPLATE
from trainer.env.builtin import make_environment
from trainer.env.episodes import EpisodeLimits, EpisodeRunner
from trainer.env.protocol import ToolCall
from trainer.env.toolcalls import format_tool_call
from trainer.rollout.engine import SamplingParams

HOSTILE = {
    "infinite loop": "while True:\n    pass",
    "network": (
        "import socket\n"
        "s = socket.create_connection(('1.1.1.1', 80), timeout=1)\n"
        "print('connected')"
    ),
    "fork bomb": "import os\nwhile True:\n    os.fork()",
}


def _python_call(code: str) -> str:
    return format_tool_call(ToolCall("python", {"code": code}))


@pytest.fixture(scope="module")
def python_env():
    env = make_environment(MultiTurnConfig(enabled=True, environment="python", tool_timeout_s=2))
    yield env
    env.close()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_program_fails_its_call_and_the_next_call_works(python_env, kind):
    tokenizer = build_tokenizer()
    tokenizer.chat_template = TOOLS_CHAT_TEMPLATE
    engine = ScriptedEngine(
        tokenizer, [_python_call(HOSTILE[kind]), _python_call("print(6 * 7)"), "42"]
    )
    runner = EpisodeRunner(engine, python_env, tokenizer, EpisodeLimits(3, 2000))
    [(_, _, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=200)
    )
    hostile, benign = [t for t in episode.turns if t["role"] == "tool"]
    assert hostile["error"], hostile
    assert hostile["content"] == f"error: {hostile['error']}"
    assert "connected" not in hostile["content"]
    assert benign == {"role": "tool", "content": "42", "name": "python"}
    assert episode.turns[-1] == {"role": "assistant", "content": "42"}
    assert episode.finish_reason == "eos"
    print(f"{kind}: {hostile['error']}")
