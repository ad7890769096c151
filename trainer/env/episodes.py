"""Multi-turn rollouts: batched episodes on any `RolloutEngine` (HF or vLLM).

Every turn generates the next assistant message of all running episodes in one
`engine.generate` call (each context is the prompt plus the episode so far), hands
the messages to the environment in one `step`, and appends its observations,
rendered by the chat template, as context tokens. An episode ends when the
environment says done, at `max_turns` assistant messages, after `max_user_turns`
inserted blocks (the next message is not answered), when a message is cut at
the per-turn token limit, or when the next block would pass its token budget
(`max_episode_tokens`, model and inserted tokens together: the response width).

The result is one `Completion` per episode whose tokens are the whole episode after
the prompt, with `response_mask` 1 on the policy's tokens only: training sees tool
results and user turns in context but puts no loss on them. Their sampling
log-probabilities are recorded as 0.0 (they are masked everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trainer.env.chat import ObservationRenderer
from trainer.env.protocol import Environment, EpisodeState
from trainer.rollout.collect import PromptItem
from trainer.rollout.engine import Completion, FinishReason, RolloutEngine, SamplingParams

SEED_STRIDE = 7919  # turns sample with different seeds (a turn-0 seed would repeat)


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int  # assistant messages per episode
    max_episode_tokens: int  # response tokens per episode, inserted context included
    max_user_turns: int | None = None  # inserted blocks (tool results, user turns) at most

    def __post_init__(self) -> None:
        if (
            self.max_turns < 1
            or self.max_episode_tokens < 1
            or (self.max_user_turns is not None and self.max_user_turns < 1)
        ):
            raise ValueError(f"episode limits must be positive, got {self}")


@dataclass
class _Episode:
    prompt_index: int
    state: EpisodeState
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: FinishReason | None = None  # set when the episode ends
    last_reason: FinishReason = "eos"  # how the latest message ended (eos / stop)
    answer: str = ""
    user_turns: int = 0  # observation blocks inserted so far

    @property
    def running(self) -> bool:
        return self.finish_reason is None

    def add(self, token_ids: list[int], logprobs: list[float], policy: bool) -> None:
        self.token_ids += token_ids
        self.logprobs += logprobs
        self.mask += [int(policy)] * len(token_ids)


class EpisodeRunner:
    """Runs episodes of `env` with `engine`; `generate` mirrors `collect.generate`."""

    def __init__(
        self,
        engine: RolloutEngine,
        env: Environment,
        tokenizer: Any,
        limits: EpisodeLimits,
        add_step_rewards: bool = True,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.engine = engine
        self.add_step_rewards = add_step_rewards
        self.env = env
        self.tokenizer = tokenizer
        self.limits = limits
        self.renderer = ObservationRenderer(tokenizer, template_kwargs)

    def generate(
        self, prompts: list[PromptItem], sampling: SamplingParams
    ) -> list[tuple[PromptItem, int, Completion]]:
        """`sampling.n` episodes per prompt, prompt-major (a GRPO group is one row's)."""
        episodes = [
            _Episode(prompt_index=i, state=self.env.reset(prompt))
            for i, prompt in enumerate(prompts)
            for _ in range(sampling.n)
        ]
        for turn in range(self.limits.max_turns):
            running = [e for e in episodes if e.running]
            if not running:
                break
            self._generate_turn(prompts, running, sampling, turn)
            answered = [e for e in running if e.running and not self._out_of_user_turns(e)]
            if answered:
                self._step_environment(answered, last_turn=turn == self.limits.max_turns - 1)
        return [(prompts[e.prompt_index], e.prompt_index, self._completion(e)) for e in episodes]

    def _generate_turn(
        self,
        prompts: list[PromptItem],
        running: list[_Episode],
        sampling: SamplingParams,
        turn: int,
    ) -> None:
        budget = self.limits.max_episode_tokens
        room = max(budget - len(e.token_ids) for e in running)
        turn_sampling = replace(
            sampling,
            n=1,
            max_new_tokens=min(sampling.max_new_tokens, room),
            seed=None if sampling.seed is None else sampling.seed + SEED_STRIDE * turn,
        )
        contexts = [prompts[e.prompt_index].prompt_ids + e.token_ids for e in running]
        for episode, c in zip(running, self.engine.generate(contexts, turn_sampling), strict=True):
            left = budget - len(episode.token_ids)
            cut = len(c.token_ids) > left
            token_ids, logprobs = c.token_ids[:left], c.logprobs[:left]
            text = self.tokenizer.decode(token_ids, skip_special_tokens=True) if cut else c.text
            episode.add(token_ids, logprobs, policy=True)
            episode.turns.append({"role": "assistant", "content": text})
            episode.answer = text
            episode.last_reason = c.finish_reason
            if cut or c.finish_reason == "length":
                episode.finish_reason = "length"  # a cut message is not sent to the env

    def _out_of_user_turns(self, episode: _Episode) -> bool:
        """verl's `max_user_turns`: the message after the last allowed inserted block
        ends the episode unanswered (its tools do not run, no interaction replies)."""
        limit = self.limits.max_user_turns
        if limit is None or episode.user_turns < limit:
            return False
        episode.finish_reason = "max_turns"
        return True

    def _step_environment(self, answered: list[_Episode], last_turn: bool) -> None:
        outcomes = self.env.step(
            [e.state for e in answered], [e.turns[-1]["content"] for e in answered]
        )
        for episode, outcome in zip(answered, outcomes, strict=True):
            message = episode.turns[-1]
            if outcome.tool_calls:
                message["tool_calls"] = [c.as_turn_entry() for c in outcome.tool_calls]
            if outcome.reward is not None and self.add_step_rewards:
                message["reward"] = float(outcome.reward)
            if outcome.done:
                episode.finish_reason = episode.last_reason
                continue
            if last_turn:
                episode.finish_reason = "max_turns"
                continue
            text = self.renderer.render(outcome.observations)
            ids: list[int] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            if len(episode.token_ids) + len(ids) >= self.limits.max_episode_tokens:
                episode.finish_reason = "length"  # no room left to answer the observation
                continue
            episode.add(ids, [0.0] * len(ids), policy=False)
            episode.user_turns += 1
            episode.turns += [o.as_turn() for o in outcome.observations]

    def _completion(self, episode: _Episode) -> Completion:
        return Completion(
            prompt_index=episode.prompt_index,
            token_ids=episode.token_ids,
            logprobs=episode.logprobs,
            # The whole episode as the model saw it, inserted context included.
            text=self.tokenizer.decode(episode.token_ids, skip_special_tokens=False),
            finish_reason=episode.finish_reason or "length",
            response_mask=episode.mask,
            turns=episode.turns,
            answer=episode.answer,
        )


def episode_metrics(completions: list[Completion]) -> dict[str, float]:
    """Turns, tool calls and failed tool calls per episode (empty for single-turn)."""
    episodes = [c.turns for c in completions if c.turns is not None]
    if not episodes:
        return {}
    calls = [sum(1 for t in turns if t["role"] == "tool") for turns in episodes]
    errors = sum(1 for turns in episodes for t in turns if t["role"] == "tool" and "error" in t)
    count = len(episodes)
    return {
        "multi_turn/assistant_turns/mean": sum(
            sum(1 for t in turns if t["role"] == "assistant") for turns in episodes
        )
        / count,
        "multi_turn/tool_calls/mean": sum(calls) / count,
        "multi_turn/tool_error_rate": errors / max(1, sum(calls)),
        "multi_turn/policy_token_fraction": sum(sum(c.response_mask or ()) for c in completions)
        / max(1, sum(len(c.token_ids) for c in completions)),
    }
