"""Multi-turn episodes through ingest: turns and the loss mask stored, bounded, served by
the API (detail: the conversation; lists and streams: the number of turns)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from studio.telemetry.ingest.records import MAX_ARGUMENTS_BYTES, MAX_RESPONSE
from studio.telemetry.models import IngestedRecord, RolloutSample
from tests.telemetry.conftest import Lab, Trainer, log, sample, samples
from tests.telemetry.sse import parse
from trainer.reporting.base import SampleRecord
from trainer.reporting.studio import sample_records

SAMPLE = "records[0].data.samples[0]"


def episode_turns() -> list[dict[str, Any]]:
    """An arithmetic episode: a tool call, a tool error, a retry, a user nudge, the answer."""
    return [
        {
            "role": "assistant",
            "content": '<tool_call>{"name": "calc", "arguments": {"expr": "2+"}}</tool_call>',
            "tool_calls": [{"name": "calc", "arguments": {"expr": "2+"}}],
        },
        {"role": "tool", "content": "", "name": "calc", "error": "SyntaxError: bad expr"},
        {
            "role": "assistant",
            "content": "retry",
            "tool_calls": [{"name": "calc", "arguments": {"expr": "2+3", "precision": 0}}],
            "reward": -0.1,
        },
        {"role": "tool", "content": "5", "name": "calc", "reward": 0.0},
        {"role": "user", "content": "Answer in one line."},
        {"role": "assistant", "content": "The answer is 5.", "reward": 1.0},
    ]


def episode(**extra: Any) -> dict[str, Any]:
    tokens = ["The", " answer", "<tool>", "5", " is", " 5"]
    token_data = {
        "token_ids": list(range(6)),
        "tokens": tokens,
        "logprobs": [-0.1, -0.2, None, None, -0.3, -0.4],
        "mask": [1, 1, 0, 0, 1, 1],
    }
    return sample(1, turns=episode_turns(), token_data=token_data, **extra)


def test_an_episodes_turns_and_mask_are_stored_and_served_with_its_turns(
    lab: Lab, trainer: Trainer
) -> None:
    response = trainer.post([samples(0, 1, [episode(), sample(1)])])
    assert response.status_code == 200, response.json()
    stored = RolloutSample.objects.filter(run=trainer.run).order_by("position")
    assert [s.num_turns for s in stored] == [6, 0]
    assert stored[0].turns == episode_turns()  # only the keys each turn had
    assert stored[1].turns is None
    assert stored[0].token_data["mask"] == [1, 1, 0, 0, 1, 1]

    viewer = lab.user_client("viewer")
    detail = viewer.get(f"/api/samples/{stored[0].pk}/").json()
    assert detail["num_turns"] == 6
    assert [t["role"] for t in detail["turns"]] == [
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert detail["turns"][1] == {
        "role": "tool",
        "content": "",
        "tool_calls": [],
        "name": "calc",
        "error": "SyntaxError: bad expr",
        "reward": None,
    }
    assert detail["turns"][2]["tool_calls"] == [
        {"name": "calc", "arguments": {"expr": "2+3", "precision": 0}}
    ]
    assert detail["turns"][5]["reward"] == 1.0
    assert detail["token_data"]["mask"] == [1, 1, 0, 0, 1, 1]
    assert viewer.get(f"/api/samples/{stored[1].pk}/").json()["turns"] is None

    listed = viewer.get("/api/samples/", {"run": trainer.run.pk, "ordering": "id"}).json()
    assert [(s["num_turns"], "turns" in s) for s in listed["results"]] == [(6, False), (0, False)]
    episodes = viewer.get("/api/samples/", {"run": trainer.run.pk, "turns_min": 1}).json()
    assert [s["id"] for s in episodes["results"]] == [stored[0].pk]

    stream = viewer.get(f"/api/runs/{trainer.run.pk}/events", HTTP_LAST_EVENT_ID="0:0")
    (event,) = [e for e in parse(stream.content.decode()) if e.event == "samples"]
    assert [s["num_turns"] for s in event.data["samples"]] == [6, 0]


def test_the_trainers_own_encoding_of_an_episode_is_stored(trainer: Trainer) -> None:
    """What trainer.reporting.studio spools for a multi-turn SampleRecord (NaN rewards
    already null) is what ingest accepts: the two sides share the contract."""
    turns = [*episode_turns(), {"role": "tool", "content": "x", "reward": float("nan")}]
    record = SampleRecord(
        step=1,
        group_id="g0",
        data_source="arith-tools",
        prompt="What is 2 + 3?",
        response="...",
        ground_truth="5",
        score=1.0,
        token_data={"tokens": ["a", "b"], "mask": [1, 0]},
        turns=turns,
    )
    (encoded,) = sample_records(1, [record], at=1_732_270_000.0)
    response = trainer.post([{"seq": 0, **json.loads(encoded)}])
    assert response.status_code == 200, response.json()
    (stored,) = RolloutSample.objects.filter(run=trainer.run)
    assert stored.num_turns == 7
    assert stored.turns[:6] == episode_turns()
    assert stored.turns[6] == {"role": "tool", "content": "x"}


def test_nul_characters_in_turns_are_replaced_not_refused(trainer: Trainer) -> None:
    turns = [
        {
            "role": "assistant",
            "content": "a\x00b",
            "tool_calls": [{"name": "calc", "arguments": {"k\x00": ["v\x00", {"x": "\x00"}]}}],
        }
    ]
    assert trainer.post([samples(0, 1, [sample(1, turns=turns)])]).status_code == 200
    (stored,) = RolloutSample.objects.filter(run=trainer.run)
    assert stored.turns == [
        {
            "role": "assistant",
            "content": "a\ufffdb",
            "tool_calls": [
                {"name": "calc", "arguments": {"k\ufffd": ["v\ufffd", {"x": "\ufffd"}]}}
            ],
        }
    ]


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def call(arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "f", "arguments": arguments}],
    }


TOOL = {"role": "tool", "content": "ok"}
TOKENS = {"tokens": ["a", "b"], "logprobs": [-0.1, -0.2]}


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (sample(1, turns=[TOOL] * 65), f"{SAMPLE}.turns"),
        (sample(1, turns=[{"role": "system", "content": "x"}]), f"{SAMPLE}.turns[0].role"),
        (sample(1, turns=[{"role": "tool"}]), f"{SAMPLE}.turns[0].content"),
        (
            sample(1, turns=[TOOL, {"role": "tool", "content": "x" * (MAX_RESPONSE + 1)}]),
            f"{SAMPLE}.turns[1].content",
        ),
        (sample(1, turns=[{**TOOL, "name": "n" * 101}]), f"{SAMPLE}.turns[0].name"),
        (sample(1, turns=[{**TOOL, "name": "a\x00b"}]), f"{SAMPLE}.turns[0].name"),
        (sample(1, turns=[{**TOOL, "error": 3}]), f"{SAMPLE}.turns[0].error"),
        (sample(1, turns=[{**TOOL, "reward": "1"}]), f"{SAMPLE}.turns[0].reward"),
        (
            sample(1, turns=[{**call({}), "tool_calls": [{"name": "f"}] * 17}]),
            f"{SAMPLE}.turns[0].tool_calls",
        ),
        (sample(1, turns=[call([1, 2])]), f"{SAMPLE}.turns[0].tool_calls[0].arguments"),
        (
            sample(1, turns=[call({"x": "y" * MAX_ARGUMENTS_BYTES})]),
            f"{SAMPLE}.turns[0].tool_calls[0].arguments",
        ),
        (sample(1, turns=[call(nested(33))]), f"{SAMPLE}.turns[0].tool_calls[0].arguments"),
        (sample(1, turns={"role": "tool"}), f"{SAMPLE}.turns"),
        (sample(1, token_data={**TOKENS, "mask": [1, 2]}), f"{SAMPLE}.token_data"),
        (sample(1, token_data={**TOKENS, "mask": [1, 1.0]}), f"{SAMPLE}.token_data"),
        (sample(1, token_data={**TOKENS, "mask": [1, 0, 1]}), f"{SAMPLE}.token_data"),
    ],
)
def test_a_turn_out_of_bounds_is_named_and_nothing_of_its_batch_is_stored(
    trainer: Trainer, item: dict[str, Any], field: str
) -> None:
    response = trainer.post([samples(0, 1, [item]), log(1)])
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == [field], error
    assert error["message"].startswith(f"{field}: ")
    assert not IngestedRecord.objects.filter(run=trainer.run).exists()
    assert not RolloutSample.objects.filter(run=trainer.run).exists()


@pytest.mark.parametrize("reward", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_turn_reward_is_refused(trainer: Trainer, reward: str) -> None:
    batch = {"attempt": 1, "records": [samples(0, 1, [sample(1, turns=[TOOL])])]}
    body = json.dumps(batch).replace('"content": "ok"', f'"content": "ok", "reward": {reward}')
    response = trainer.post_raw(body.encode())
    assert response.status_code == 400, response.json()
    assert list(response.json()["error"]["fields"]) == [f"{SAMPLE}.turns[0].reward"]
    assert not RolloutSample.objects.filter(run=trainer.run).exists()


def test_a_mask_tells_the_policys_tokens_and_matches_them_in_number(trainer: Trainer) -> None:
    response = trainer.post([samples(0, 1, [sample(1, token_data={**TOKENS, "mask": [1, 0, 1]})])])
    assert "has 3 entries for 2 tokens" in response.json()["error"]["message"]
    response = trainer.post([samples(0, 1, [sample(1, token_data={**TOKENS, "mask": [0, 1]})])])
    assert response.status_code == 200
