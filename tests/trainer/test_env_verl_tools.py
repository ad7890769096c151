"""verl's Gsm8kTool, SearchTool and Gsm8kInteraction as RL Studio's built-ins: their
texts and step rewards, the retriever on loopback, and episodes with a user turn.

Expected texts are verl's (verl/tools/gsm8k_tool.py, verl/tools/utils/
search_r1_like_utils.py, verl/interactions/gsm8k_interaction.py at the mirrored commit),
written out by hand: those modules import Ray and verl's tracing, which tests never load.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from trainer.config.multi_turn_section import MultiTurnConfig
from trainer.demo.model import build_tokenizer
from trainer.demo.tools_model import TOOLS_CHAT_TEMPLATE
from trainer.env.builtin import make_environment
from trainer.env.episodes import EpisodeLimits, EpisodeRunner
from trainer.env.interactions import INCORRECT
from trainer.env.protocol import EpisodeState, ToolCall
from trainer.env.retriever import RETRIEVER_URL_ENV, Retriever
from trainer.env.toolcalls import format_tool_call
from trainer.env.trainer_tools import Gsm8kAnswerTool, SearchTool
from trainer.rollout.collect import PromptItem
from trainer.rollout.engine import SamplingParams

from .retriever_stub import retriever_stub
from .test_env_episodes import ScriptedEngine


def _row(ground_truth: Any = "72", **extra: Any) -> PromptItem:
    return PromptItem("0:0", [1, 2], "q", "openai/gsm8k", ground_truth, dict(extra))


def _answer(answer: Any, row: PromptItem | None = None) -> tuple[str, float]:
    state = EpisodeState(row=row or _row())
    [result] = Gsm8kAnswerTool().run([(state, ToolCall("calc_gsm8k_reward", {"answer": answer}))])
    return result.observation.content, result.reward


def test_the_gsm8k_tool_answers_with_verls_text_and_step_reward():
    assert _answer("72") == ("Current parsed answer='72' reward=1.0", 0.0)
    assert _answer("#### 70") == ("Current parsed answer='#### 70' reward=0.0", -0.05)
    assert _answer("none") == ("Current parsed answer='none' reward=0", -0.05)
    assert _answer(72) == ("Current parsed answer='72' reward=1.0", 0.0)  # str() as verl


def test_the_gsm8k_tool_takes_verls_create_kwargs_ground_truth_before_the_rows():
    row = _row("1", tools_kwargs={"calc_gsm8k_reward": {"create_kwargs": {"ground_truth": "72"}}})
    assert _answer("72", row)[1] == 0.0


def _search(url: str, arguments: dict[str, Any], timeout_s: float = 5.0) -> Any:
    tool = SearchTool(Retriever(url, timeout_s), topk=2)
    [result] = tool.run([(EpisodeState(row=_row()), ToolCall("search", arguments))])
    return result


def test_search_posts_verls_request_and_formats_the_passages_as_verl():
    with retriever_stub() as stub:
        result = _search(stub.url, {"query_list": ["capital of France", "France"]})
    assert stub.requests == [
        {"queries": ["capital of France", "France"], "topk": 2, "return_scores": True}
    ]
    one = (
        "Doc 1 (Title: Paris)\nParis is the capital of France.\n\n"
        "Doc 2 (Title: France)\nFrance is a country in Europe."
    )
    assert json.loads(result.observation.content) == {"result": f"{one}\n---\n{one}"}
    assert result.reward == 0.0 and not result.observation.error


def test_search_failures_are_the_calls_result_within_the_time_limit():
    assert "query_list" in _search("http://127.0.0.1:9/", {"query": "x"}).observation.content
    with retriever_stub() as stub:
        stub.status = 503
        failed = _search(stub.url, {"query_list": ["x"]})
        assert failed.observation.error == "API Request Error: HTTP 503"
        assert json.loads(failed.observation.content)["result"].startswith("Search error: ")
        stub.status, stub.delay_s = 200, 5.0
        slow = _search(stub.url, {"query_list": ["x"]}, timeout_s=0.3)
        assert slow.observation.error.startswith("Timeout Error")
    refused = _search("http://127.0.0.1:9/", {"query_list": ["x"]})
    assert refused.observation.error.startswith("Connection Error")


def test_the_search_environment_needs_the_operators_retriever_setting(monkeypatch):
    monkeypatch.delenv(RETRIEVER_URL_ENV, raising=False)
    with pytest.raises(ValueError, match=RETRIEVER_URL_ENV):
        make_environment(MultiTurnConfig(enabled=True, environment="search"))
    monkeypatch.setenv(RETRIEVER_URL_ENV, "file:///etc/passwd")
    with pytest.raises(ValueError, match="http:// or https://"):
        make_environment(MultiTurnConfig(enabled=True, environment="search"))


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    tok = build_tokenizer()
    tok.chat_template = TOOLS_CHAT_TEMPLATE
    return tok


def _prompt(tokenizer: Any, ground_truth: str = "72") -> PromptItem:
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "q"}], add_generation_prompt=True, tokenize=False
    )
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return PromptItem("0:0", ids, text, "openai/gsm8k", ground_truth)


def _episode(tokenizer: Any, cfg: MultiTurnConfig, replies: list[str], **limits: Any) -> Any:
    env = make_environment(cfg)
    try:
        runner = EpisodeRunner(
            ScriptedEngine(tokenizer, replies),
            env,
            tokenizer,
            EpisodeLimits(cfg.max_turns, 1024, **limits),
            add_step_rewards=cfg.add_step_rewards,
        )
        [(_, _, episode)] = runner.generate(
            [_prompt(tokenizer)], SamplingParams(max_new_tokens=256)
        )
    finally:
        env.close()
    return episode


def test_the_gsm8k_interaction_asks_again_until_the_answer_is_right(tokenizer):
    cfg = MultiTurnConfig(enabled=True, environment="gsm8k_answer", interaction="gsm8k")
    episode = _episode(tokenizer, cfg, ["#### 70", "#### 72", "unused"])
    assert [t["role"] for t in episode.turns] == ["assistant", "user", "assistant"]
    assert episode.turns[1]["content"] == INCORRECT
    assert [t.get("reward") for t in episode.turns] == [0.0, None, 1.0]
    assert episode.finish_reason == "eos" and episode.answer == "#### 72"
    assert INCORRECT in episode.text and 0 in (episode.response_mask or [])


def test_max_user_turns_ends_the_episode_with_the_next_message_unanswered(tokenizer):
    cfg = MultiTurnConfig(enabled=True, environment="gsm8k_answer", interaction="gsm8k")
    call = format_tool_call(ToolCall("calc_gsm8k_reward", {"answer": "70"}))
    episode = _episode(tokenizer, cfg, [call, "#### 70", "#### 72"], max_user_turns=2)
    roles = [t["role"] for t in episode.turns]
    assert roles == ["assistant", "tool", "assistant", "user", "assistant"]
    assert episode.turns[1]["content"] == "Current parsed answer='70' reward=0.0"
    assert episode.turns[0]["reward"] == -0.05
    assert "reward" not in episode.turns[4]  # not scored: the interaction never saw it
    assert episode.finish_reason == "max_turns"


def test_step_rewards_are_recorded_only_when_added(tokenizer):
    cfg = MultiTurnConfig(
        enabled=True, environment="gsm8k_answer", interaction="gsm8k", add_step_rewards=False
    )
    episode = _episode(tokenizer, cfg, ["#### 70", "#### 72"])
    assert all("reward" not in t for t in episode.turns)
    assert episode.turn_reward == 0.0


def test_a_search_episode_inserts_the_retrievers_passages(tokenizer, monkeypatch):
    call = format_tool_call(ToolCall("search", {"query_list": ["capital of France"]}))
    with retriever_stub() as stub:
        monkeypatch.setenv(RETRIEVER_URL_ENV, stub.url)
        cfg = MultiTurnConfig(enabled=True, environment="search", search_topk=1)
        episode = _episode(tokenizer, cfg, [call, "Paris"])
    assert stub.requests[0]["topk"] == 1
    tool = episode.turns[1]
    assert tool["name"] == "search" and "Doc 1 (Title: Paris)" in tool["content"]
    assert episode.answer == "Paris"
