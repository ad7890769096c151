"""Chatting with a run's checkpoint in the browser on the live stack: the run page's
checkpoints lead to the playground, the model loads on a Ray worker ("loading model…"),
the reply is written into the page as it is generated (several partial states before it
ends), and two models answer the next message side by side.

The shared demo run is the one chatted with (its checkpoints at steps 2 and 4)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, TrainedRun, sign_in

# Records every distinct text of the newest reply, as the page renders it.
WATCH_REPLY = """() => {
  window.__replyStates = [];
  const seen = () => {
    const replies = document.querySelectorAll('[data-testid=reply]');
    const last = replies[replies.length - 1];
    if (!last) return;
    const text = last.querySelector('span:not([role=status])')?.textContent ?? '';
    const states = window.__replyStates;
    if (text && states[states.length - 1] !== text) states.push(text);
  };
  const all = {subtree: true, childList: true, characterData: true};
  new MutationObserver(seen).observe(document.body, all);
}"""
REPLY_TOKENS = "160"


def test_chat_with_a_runs_last_checkpoint_streams_the_reply_into_the_page(
    page: Any, studio: LiveStudio, trained_run: TrainedRun
) -> None:
    slug = trained_run.project_slug
    sign_in(page, studio, trained_run.owner)
    page.goto(f"{studio.url}/p/{slug}/runs/{trained_run.id}")
    page.get_by_role("tab", name="Checkpoints").click()
    links = page.get_by_role("link", name="Chat with this checkpoint")
    expect(links).to_have_count(2)
    links.last.click()
    page.wait_for_url(re.compile(rf"/p/{slug}/playground\?model=checkpoint:\d+$"))
    column = page.get_by_role("region", name="Chat with demo run @ step 4")
    expect(column).to_be_visible()

    # A long reply: the small model may not end before REPLY_TOKENS tokens.
    page.get_by_label("Temperature").fill("1")
    page.get_by_label("Max new tokens").fill(REPLY_TOKENS)
    page.get_by_label("Minimum reply length").fill(REPLY_TOKENS)
    page.evaluate(WATCH_REPLY)
    message = page.get_by_role("textbox", name="Message")
    message.fill("What is 7+8?")
    message.press("Enter")
    expect(column.get_by_test_id("user-message")).to_have_text("What is 7+8?")
    reply = column.get_by_test_id("reply")
    expect(reply).to_be_visible()
    if reply.get_attribute("data-state") == "loading":  # the model was still loading
        expect(reply).to_contain_text("Loading model…")
        page.shot("playground-loading")
    expect(reply).to_have_attribute("data-state", "done", timeout=120_000)
    states: list[str] = page.evaluate("() => window.__replyStates")
    final = reply.locator("span").first.inner_text()
    partial = [s for s in states if s != final]
    assert len(partial) >= 3, f"only {len(partial)} partial states before the end: {states}"
    assert all(final.startswith(s) for s in partial), "a partial state is not a prefix"
    expect(reply).to_contain_text(f"{REPLY_TOKENS} tokens in")
    expect(column.get_by_test_id("server-state")).to_have_text("warm")
    page.shot("playground-reply")
    page.shot("playground-reply", narrow=True)

    # Side by side: the base model answers the next message next to the checkpoint.
    page.get_by_label("Compare with").select_option(label="demo-model (demo model)")
    base = page.get_by_role("region", name="Chat with demo-model")
    expect(base).to_be_visible()
    page.get_by_label("Max new tokens").fill("24")
    page.get_by_label("Minimum reply length").fill("8")
    message.fill("And 2+2?")
    message.press("Enter")
    for side in (page.get_by_role("region", name="Chat with demo run @ step 4"), base):
        expect(side.get_by_test_id("reply").last).to_have_attribute(
            "data-state", "done", timeout=120_000
        )
    page.shot("playground-side-by-side")
    page.shot("playground-side-by-side", narrow=True)
