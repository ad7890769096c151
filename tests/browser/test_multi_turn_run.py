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
from typing import Any

from tests.browser.harness import TERMINAL, LiveStudio, sign_in
from trainer.env.tool_sources.calculator import run_tool

# Few, small steps: the test is about the path from launch to viewer, not learning. A
# step takes ~0.6 s here, so three give the first episodes' batch well over a second's
# lead on the run's end.
TOOLS_RUN_OVERRIDES = [
    "trainer.total_steps=3",
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


def streamed_before_the_end(run_id: int) -> bool:
    """True when the run's first episodes reached the studio in an earlier ingest batch
    than the status record that ended the run. The ledger stamps each batch with the
    studio's clock when it is stored, so this holds only if episodes were stored (and
    listable) while the run was still running, however fast the run was: polling the
    API for that raced a run that now ends within a poll or two of its first episodes."""
    from django.db.models import Min

    from studio.telemetry.models import IngestedRecord, RecordKind

    ledger = IngestedRecord.objects.filter(run_id=run_id)
    first_samples = ledger.filter(kind=RecordKind.SAMPLES).aggregate(at=Min("received_at"))["at"]
    ended = ledger.filter(kind=RecordKind.STATUS, data__status="succeeded").aggregate(
        at=Min("received_at")
    )["at"]
    return first_samples is not None and ended is not None and first_samples < ended


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
            "dataset_version": studio.demo_dataset(owner, "tools-arith"),
            "overrides": TOOLS_RUN_OVERRIDES,
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    run_id = int(response.json()["id"])

    run = studio.wait_for_run(owner, run_id, TERMINAL, timeout_s=RUN_TIMEOUT_S)
    assert run["status"] == "succeeded", run
    assert streamed_before_the_end(run_id), "no episode was stored while the run was running"

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
