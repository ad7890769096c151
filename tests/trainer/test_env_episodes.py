"""Multi-turn episodes: the response mask, turn and token limits, sandboxed tool calls.

The engine here is scripted (it replies with fixed messages) so that an episode is
built by hand; the environment, its calculator running in the sandbox, the chat
template, the batch and the loss are the real ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from trainer.algorithms.advantages import (
    ADVANTAGE_ESTIMATORS,
    AdvantageInputs,
    scores_to_token_rewards,
)
from trainer.algorithms.policy_loss import PolicyLossInputs, ppo_loss
from trainer.config.multi_turn_section import MultiTurnConfig
from trainer.demo.model import build_model, build_tokenizer
from trainer.demo.tools_model import TOOLS_CHAT_TEMPLATE
from trainer.env.builtin import make_environment
from trainer.env.episodes import EpisodeLimits, EpisodeRunner, episode_metrics
from trainer.env.protocol import ToolCall
from trainer.env.toolcalls import format_tool_call
from trainer.rollout.collect import PromptItem
from trainer.rollout.engine import Completion, SamplingParams
from trainer.training.batch import build_batch
from trainer.training.logprobs import response_token_stats

CALL = format_tool_call(ToolCall("calculator", {"expression": "37+48"}))


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    tok = build_tokenizer()
    tok.chat_template = TOOLS_CHAT_TEMPLATE
    return tok


@pytest.fixture(scope="module")
def calculator_env():
    env = make_environment(MultiTurnConfig(enabled=True, tool_timeout_s=2.0))
    yield env
    env.close()


class ScriptedEngine:
    """Replies to every context with `replies[turn]` (+ EOS), cut at max_new_tokens."""

    def __init__(self, tokenizer: Any, replies: list[str]) -> None:
        self.tokenizer = tokenizer
        self.replies = replies
        self.calls = 0

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> list[Completion]:
        text = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids.append(self.tokenizer.eos_token_id)
        out = []
        for i in range(len(prompts)):
            kept = ids[: sampling.max_new_tokens]
            reason = "eos" if len(kept) == len(ids) else "length"
            logprobs = [-0.5] * len(kept)
            out.append(Completion(i, list(kept), logprobs, text, reason))
        return out

    def update_weights(self, state: Any) -> None: ...

    def sleep(self) -> None: ...

    def wake(self) -> None: ...


def _prompt(tokenizer: Any) -> PromptItem:
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "37+48="}],
        tools=[{"type": "function", "function": {"name": "calculator"}}],
        add_generation_prompt=True,
        tokenize=False,
    )
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return PromptItem("0:0", ids, text, "arith", "85")


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_a_two_turn_episode_trains_only_the_models_own_tokens(tokenizer, calculator_env):
    engine = ScriptedEngine(tokenizer, [CALL, "85"])
    runner = EpisodeRunner(engine, calculator_env, tokenizer, EpisodeLimits(4, 256))
    [(_, group, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=100)
    )

    eos = tokenizer.eos_token_id
    observation = "\n<|im_start|>tool\n85<|im_end|>\n<|im_start|>assistant\n"
    call_ids, obs_ids, answer_ids = (
        [*_ids(tokenizer, CALL), eos],
        _ids(tokenizer, observation),
        [*_ids(tokenizer, "85"), eos],
    )
    assert episode.token_ids == call_ids + obs_ids + answer_ids
    assert episode.response_mask == [1] * len(call_ids) + [0] * len(obs_ids) + [1] * len(answer_ids)
    assert episode.logprobs[len(call_ids) : len(call_ids) + len(obs_ids)] == [0.0] * len(obs_ids)
    assert episode.finish_reason == "eos" and group == 0
    assert episode.answer == "85"
    assert episode.turns == [
        {
            "role": "assistant",
            "content": CALL,
            "tool_calls": [{"name": "calculator", "arguments": {"expression": "37+48"}}],
        },
        {"role": "tool", "content": "85", "name": "calculator"},
        {"role": "assistant", "content": "85"},
    ]
    assert episode_metrics([episode])["multi_turn/tool_calls/mean"] == 1.0

    # The batch attends to the tool result but puts no loss, advantage or reward on it.
    prompt = _prompt(tokenizer).prompt_ids
    batch = build_batch(
        [prompt, prompt],
        [episode.token_ids] * 2,
        [0, 0],
        [1.0, 0.0],
        2,
        [episode.response_mask] * 2,
    )
    masked = slice(len(call_ids), len(call_ids) + len(obs_ids))
    assert (
        batch.attention_mask[:, batch.prompt_width :].sum(-1).tolist()
        == [len(episode.token_ids)] * 2
    )
    assert batch.response_mask[:, masked].sum() == 0
    rewards = scores_to_token_rewards(batch.scores, batch.response_mask)
    assert rewards[0, len(episode.token_ids) - 1] == 1.0  # on the final answer's EOS
    advantages, _ = ADVANTAGE_ESTIMATORS["grpo"](
        AdvantageInputs(rewards, batch.response_mask, batch.group_index, None, 1.0, 1.0, True)
    )
    assert advantages[:, masked].abs().sum() == 0 and advantages[0, 0] > 0

    model = build_model(tokenizer, hidden_size=64, num_layers=1)
    logprobs = response_token_stats(model, batch, 1.0, False).logprobs
    logprobs.retain_grad()
    loss = ppo_loss(
        PolicyLossInputs(
            logprobs,
            logprobs.detach() - 0.1,
            advantages,
            batch.response_mask,
            0.2,
            0.2,
            3.0,
            "token-mean",
            None,
        )
    ).loss
    loss.backward()
    grad = logprobs.grad
    assert grad is not None
    assert grad[:, masked].abs().sum() == 0
    policy = batch.response_mask.bool()
    assert (grad[policy] != 0).all()


def test_the_turn_limit_ends_an_episode_that_keeps_calling_tools(tokenizer, calculator_env):
    engine = ScriptedEngine(tokenizer, [CALL])
    runner = EpisodeRunner(engine, calculator_env, tokenizer, EpisodeLimits(3, 1000))
    [(_, _, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=100)
    )
    roles = [t["role"] for t in episode.turns]
    assert roles == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert episode.finish_reason == "max_turns"
    assert engine.calls == 3
    # The last message's call was not run, so the episode ends on the model's tokens.
    assert episode.response_mask[-1] == 1


def test_the_token_budget_cuts_the_message_that_would_pass_it(tokenizer, calculator_env):
    call_len = len(_ids(tokenizer, CALL)) + 1
    budget = call_len + 5  # room for the first message, not for the tool result
    engine = ScriptedEngine(tokenizer, [CALL, "85"])
    runner = EpisodeRunner(engine, calculator_env, tokenizer, EpisodeLimits(4, budget))
    [(_, _, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=2, max_new_tokens=100)
    )[:1]
    assert episode.finish_reason == "length"
    assert len(episode.token_ids) == call_len  # the observation did not fit: not inserted
    assert [t["role"] for t in episode.turns] == ["assistant"]

    budget = 7  # the first message itself is cut
    runner = EpisodeRunner(
        ScriptedEngine(tokenizer, [CALL]), calculator_env, tokenizer, EpisodeLimits(4, budget)
    )
    [(_, _, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=100)
    )
    assert len(episode.token_ids) == budget and episode.finish_reason == "length"
    assert "tool_calls" not in episode.turns[0]  # a cut message is not sent to the tools


def test_each_call_gets_its_observation_and_failures_say_why(tokenizer, calculator_env):
    message = (
        format_tool_call(ToolCall("calculator", {"expression": "6*7"}))
        + format_tool_call(ToolCall("calculator", {"expression": "1/0"}))
        + "<tool_call>{broken</tool_call>"
        + format_tool_call(ToolCall("calculator", {"expression": "__import__('os')"}))
    )
    engine = ScriptedEngine(tokenizer, [message, "42"])
    runner = EpisodeRunner(engine, calculator_env, tokenizer, EpisodeLimits(2, 1000))
    [(_, _, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=400)
    )
    tools = [t for t in episode.turns if t["role"] == "tool"]
    assert tools[0] == {"role": "tool", "content": "42", "name": "calculator"}
    assert "ZeroDivisionError" in tools[1]["error"]
    assert "not valid JSON" in tools[2]["error"]
    assert "unsupported syntax" in tools[3]["error"]
    assert all(t["content"].startswith("error: ") for t in tools[1:])
    assert episode.turns[-1] == {"role": "assistant", "content": "42"}


def test_an_episode_is_reported_with_its_turns_and_token_mask(tokenizer, calculator_env):
    from trainer.reporting.sample_policy import SamplePolicy, val_records
    from trainer.rewards.contract import RewardResult
    from trainer.rollout.collect import Sample

    engine = ScriptedEngine(tokenizer, [CALL, "85"])
    runner = EpisodeRunner(engine, calculator_env, tokenizer, EpisodeLimits(4, 256))
    [(prompt, group, episode)] = runner.generate(
        [_prompt(tokenizer)], SamplingParams(n=1, max_new_tokens=100)
    )
    sample = Sample(prompt, group, episode, RewardResult(score=1.0), 1.0)
    policy = SamplePolicy(samples_per_step=4, token_data_fraction=1.0, val_samples_cap=4, seed=0)
    [record] = val_records([sample], policy, step=3, decoder=tokenizer)
    assert record.turns == episode.turns and record.turns is not episode.turns
    assert record.token_data is not None
    assert record.token_data["mask"] == episode.response_mask
    assert len(record.token_data["tokens"]) == len(record.token_data["mask"])
    assert "<tool_call>" in record.response and record.response.endswith("85<|im_end|>")


def test_a_record_keeps_at_most_the_turns_the_studio_stores():
    from trainer.reporting.sample_policy import MAX_RECORDED_TURNS, recorded_turns

    turns = [{"role": "tool", "content": str(i), "name": "calculator"} for i in range(100)]
    kept = recorded_turns(turns)
    assert kept is not None and len(kept) == MAX_RECORDED_TURNS == 64
    assert kept[-1]["content"] == "63"
    assert recorded_turns(None) is None
