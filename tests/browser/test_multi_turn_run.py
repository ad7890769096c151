"""A multi-turn run launched from the studio streams its episodes, and the API returns
them with their turns: a `grpo-tools-arith` run created over the REST API trains on the
live Ray head (the demo tools model calling the sandboxed calculator), its episodes show
up while it runs, each with its conversation, tool calls, the calculator's printed results
and a response mask that leaves the tool tokens out of training; the rollout viewer reads
one as a conversation."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import time
from typing import Any

from tests.browser.harness import TERMINAL, LiveStudio, sign_in
from trainer.env.tool_sources.calculator import run_tool

# Few, small steps: the test is about the path from launch to viewer, not learning.
TOOLS_RUN_OVERRIDES = [
    "trainer.total_steps=2",
    "trainer.val_before_train=false",
    "data.train_batch_size=4",
    "data.max_val_samples=8",
    "rollout.n=4",
    "actor.ppo_mini_batch_size=4",
    "checkpoint.save_hf=false",
    "logging.samples_per_step=8",
    "logging.token_data_fraction=1.0",
    "resources.memory_gb=1",
]
RUN_TIMEOUT_S = 600


def calculator_result(call: dict[str, Any]) -> str | None:
    """What the real calculator tool prints for `call`, or None if it refuses the call."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            run_tool("", json.dumps(call.get("arguments")), None, None)
    except (ValueError, TypeError, SyntaxError, ZeroDivisionError, AttributeError):
        return None
    return out.getvalue().strip()


def calculator_exchanges(turns: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """(what the calculator prints for the call, the tool turn's content) for each
    assistant turn with one calculator call answered by a tool turn without error."""
    pairs = []
    for asked, answered in itertools.pairwise(turns):
        calls = asked.get("tool_calls") or []
        if (
            asked["role"] == "assistant"
            and len(calls) == 1
            and calls[0].get("name") == "calculator"
            and answered["role"] == "tool"
            and answered["error"] is None
        ):
            pairs.append((calculator_result(calls[0]), str(answered["content"]).strip()))
    return pairs


def wait_streaming(studio: LiveStudio, owner: Any, run_id: int) -> tuple[bool, dict[str, Any]]:
    """Polls the run's episode list until the run ends; True when episodes were listed
    while the run was still running (the run is read after the list, so it was running
    when the list answered)."""
    api = studio.api(owner)
    listed_while_running = False
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        episodes = api.get(
            f"{studio.url}/api/samples/",
            params={"run": run_id, "turns_min": 1, "page_size": 1},
            timeout=30,
        ).json()["results"]
        run: dict[str, Any] = api.get(f"{studio.url}/api/runs/{run_id}/", timeout=30).json()
        if run["status"] in TERMINAL:
            return listed_while_running, run
        listed_while_running |= bool(episodes) and run["status"] == "running"
        time.sleep(0.25)
    return listed_while_running, studio.wait_for_run(owner, run_id, TERMINAL, timeout_s=1)


def test_a_multi_turn_run_launched_from_the_studio_streams_its_episodes(
    page: Any, studio: LiveStudio
) -> None:
    owner = studio.new_user("tools")
    api = studio.api(owner)
    response = api.post(
        f"{studio.url}/api/runs/",
        json={
            "project": owner.project_slug,
            "name": "calculator episodes",
            "preset": "grpo-tools-arith",
            "overrides": TOOLS_RUN_OVERRIDES,
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    run_id = int(response.json()["id"])

    streamed, run = wait_streaming(studio, owner, run_id)
    assert run["status"] == "succeeded", run
    assert streamed, "no episode was listed while the run was running"

    listed = api.get(
        f"{studio.url}/api/samples/",
        params={"run": run_id, "turns_min": 1, "page_size": 500},
        timeout=30,
    ).json()["results"]
    assert listed and all(sample["num_turns"] > 0 for sample in listed)
    assert {sample["step"] for sample in listed} >= {1, 2}

    details = [api.get(f"{studio.url}/api/samples/{s['id']}/", timeout=30).json() for s in listed]
    for detail in details:
        assert detail["turns"] and detail["turns"][0]["role"] == "assistant"
        assert len(detail["turns"]) == detail["num_turns"]
    exchanges = [pair for d in details for pair in calculator_exchanges(d["turns"])]
    assert exchanges, "no episode called the calculator and got its result"
    assert all(printed == content for printed, content in exchanges), exchanges
    with_tools = [d for d in details if calculator_exchanges(d["turns"])]
    kept = [d for d in with_tools if d["token_data"]]
    assert kept, "no episode with a tool call kept its token data"
    for detail in kept:
        mask = detail["token_data"]["mask"]
        assert 0 in mask and 1 in mask, mask  # tool tokens are not trained, the model's are
        assert len(mask) == len(detail["token_data"]["tokens"])

    episode = with_tools[0]
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/runs/{run_id}/rollouts?sample={episode['id']}")
    conversation = page.get_by_test_id("conversation")
    conversation.wait_for()
    turns = conversation.get_by_role("listitem")
    turns.first.wait_for()
    assert [turns.nth(i).get_attribute("data-role") for i in range(turns.count())] == [
        t["role"] for t in episode["turns"]
    ]
    printed = calculator_exchanges(episode["turns"])[0][1]
    assert printed in conversation.inner_text()
    page.shot("tools-episode")
    page.shot("tools-episode", narrow=True)
