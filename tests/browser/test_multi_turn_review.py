"""A multi-turn run's episodes in the rollout viewer: reported through the trainer's
ingest endpoint (as a run's trainer does, with its ingest token), served with their turns,
shown as a conversation, filtered, and the per-token view hatching the tokens not
trained."""

from __future__ import annotations

import re
from typing import Any

import requests
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, StudioUser, sign_in

T0 = 1_732_270_000.0
PROMPT = "<|im_start|>user\nWhat is 17 * 23? Use the calculator.<|im_end|>\n<|im_start|>assistant\n"
TURNS: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": '<tool_call>{"name": "calc", "arguments": {"expr": "17 *"}}</tool_call>',
        "tool_calls": [{"name": "calc", "arguments": {"expr": "17 *"}}],
    },
    {"role": "tool", "content": "", "name": "calc", "error": "SyntaxError: unexpected EOF"},
    {
        "role": "assistant",
        "content": '<tool_call>{"name": "calc", "arguments": {"expr": "17 * 23"}}</tool_call>',
        "tool_calls": [{"name": "calc", "arguments": {"expr": "17 * 23", "round": 0}}],
        "reward": -0.1,
    },
    {"role": "tool", "content": "391", "name": "calc"},
    {"role": "user", "content": "Now give the answer in one sentence."},
    {"role": "assistant", "content": "17 * 23 = 391.", "reward": 1.0},
]
# Token by token (mask 0: what tools and the user inserted, never trained on).
TOKENS = [
    ("<tool_call>", 1, -0.4),
    ('{"name": "calc"', 1, -0.9),
    ("</tool_call>", 1, -0.1),
    ("SyntaxError", 0, None),
    ("<tool_call>", 1, -0.2),
    ("17 * 23", 1, -1.3),
    ("</tool_call>", 1, -0.1),
    ("391", 0, None),
    ("Now give", 0, None),
    ("17 * 23 = 391.", 1, -0.6),
]


def episode(group: str, score: float) -> dict[str, Any]:
    return {
        "step": 1,
        "group_id": group,
        "data_source": "arith-tools",
        "prompt": PROMPT,
        "response": "".join(str(t["content"]) for t in TURNS),
        "ground_truth": "391",
        "score": score,
        "components": {"answer": score},
        "advantage": score - 0.5,
        "prompt_length": 20,
        "response_length": len(TOKENS),
        "finish_reason": "stop",
        "turns": TURNS,
        "token_data": {
            "token_ids": list(range(len(TOKENS))),
            "tokens": [text for text, _, _ in TOKENS],
            "logprobs": [logprob for _, _, logprob in TOKENS],
            "mask": [mask for _, mask, _ in TOKENS],
        },
    }


def report_a_multi_turn_run(studio: LiveStudio, owner: StudioUser) -> tuple[int, str]:
    """A run whose trainer reports one step of episodes and ends: what a multi-turn run's
    trainer sends, without training one. Returns the run id and its project slug."""
    from studio.projects.models import Project
    from studio.runs import lifecycle
    from studio.runs.configs import resolve, resources_of
    from studio.runs.models import Run, RunAttempt, RunStatus
    from studio.runs.tokens import issue_ingest_token

    resolved = resolve(preset="grpo-tiny-arith")
    run = Run.objects.create(
        project=Project.objects.get(slug=owner.project_slug),
        name="tool episodes",
        preset="grpo-tiny-arith",
        config=resolved.tree,
        resources=resources_of(resolved.config),
        created_by_id=owner.id,
        status=RunStatus.STARTING,
    )
    lifecycle.record_creation(run, "created", run.created_by)
    attempt = RunAttempt.objects.create(run=run, number=1, submission_id=f"mt-{run.pk}-1")
    token = issue_ingest_token(attempt)
    connections.close_all()  # see test_web_foundation: no connection may outlive the test
    single = {**episode("single", 0.0), "turns": None, "token_data": None}
    single["response"] = "391"
    records = [
        {"seq": 0, "kind": "status", "time": T0, "data": {"status": "running"}},
        {
            "seq": 1,
            "kind": "samples",
            "time": T0 + 1,
            "data": {"step": 1, "samples": [episode("g0", 1.0), episode("g0", 0.0), single]},
        },
        {"seq": 2, "kind": "status", "time": T0 + 2, "data": {"status": "succeeded"}},
    ]
    # In one batch, at once: the run ends before the reconciler looks for its Ray job.
    response = requests.post(
        f"{studio.url}/api/ingest/runs/{run.pk}/records",
        json={"attempt": 1, "records": records},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.json() == {"stored": 3, "duplicates": 0, "last_seq": 2}, response.text
    return run.pk, owner.project_slug


def test_a_user_reads_a_multi_turn_episode_as_a_conversation(
    page: Any, studio: LiveStudio, studio_orm: None
) -> None:
    owner = studio.new_user("episodes")
    run_id, slug = report_a_multi_turn_run(studio, owner)
    api = studio.api(owner)
    listed = api.get(
        f"{studio.url}/api/samples/", params={"run": run_id, "ordering": "id"}, timeout=30
    ).json()["results"]
    assert [s["num_turns"] for s in listed] == [6, 6, 0]
    best = listed[0]["id"]
    detail = api.get(f"{studio.url}/api/samples/{best}/", timeout=30).json()
    assert [t["role"] for t in detail["turns"]] == [t["role"] for t in TURNS]
    assert detail["turns"][1]["error"] == "SyntaxError: unexpected EOF"

    sign_in(page, studio, owner)
    base = f"{studio.url}/p/{slug}/runs/{run_id}/rollouts"
    page.goto(f"{base}?sample={best}")
    conversation = page.get_by_test_id("conversation")
    conversation.wait_for()
    turns = conversation.get_by_role("listitem")
    assert turns.count() == len(TURNS)
    assert [turns.nth(i).get_attribute("data-role") for i in range(turns.count())] == [
        t["role"] for t in TURNS
    ]
    failed = conversation.get_by_role("listitem", name="Turn 2: tool result · calc (failed)")
    assert "SyntaxError: unexpected EOF" in failed.get_by_role("alert").inner_text()
    arguments = conversation.get_by_label("arguments of calc").nth(1).inner_text()
    assert '"expr": "17 * 23"' in arguments and '"round": 0' in arguments
    rewards = conversation.get_by_test_id("turn-reward").all_inner_texts()
    assert rewards == ["reward -0.100", "reward +1.000"]
    assert "6 turns" in page.get_by_test_id("sample-list").inner_text()
    page.shot("episode")
    page.shot("episode", narrow=True)

    # The single-turn sample of the same run reads as before: a response, no conversation.
    page.locator(f"[data-sample-id='{listed[2]['id']}']").click()
    page.get_by_role("heading", name="Response", exact=True).wait_for()
    assert page.get_by_test_id("conversation").count() == 0

    # "Multi-turn episodes only" leaves the two episodes. Each state is awaited (expect
    # retries until its timeout), never read once: on a loaded machine the box, the URL
    # and the list each answer in their own time.
    episodes_only = page.get_by_label("Multi-turn episodes only")
    episodes_only.click()
    expect(episodes_only).to_be_checked()
    page.wait_for_url(re.compile(r"[?&]episodes=1\b"))
    expect(page.get_by_test_id("list-status")).to_have_text(re.compile(r"^2 samples$"))
    rows = page.locator("[data-sample-id]")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="6 turns")).to_have_count(2)

    # The per-token view hatches what tools and the user inserted, with its legend.
    page.goto(f"{base}/samples/{best}/tokens")
    strip = page.get_by_test_id("token-strip")
    strip.locator("[data-index]").first.wait_for()
    masked = strip.locator("[data-masked=true]").all_inner_texts()
    assert len(masked) == sum(1 for _, mask, _ in TOKENS if mask == 0)
    assert "not trained: tool/user tokens" in page.get_by_test_id("masked-legend").inner_text()
    strip.focus()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")  # onto "Now give", a user token
    assert "not trained" in page.get_by_test_id("token-details").inner_text()
    page.shot("episode-tokens")
    page.shot("episode-tokens", narrow=True)
