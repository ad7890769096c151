"""Talking to a live studio's playground as the page does: send a message, read the
exchange's events over SSE until it ends, timing each (tests and bench/playground.py)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import requests

USER_MESSAGE = {"role": "user", "content": "What is 3+4?"}


@dataclass
class Exchange:
    sent_at: float  # time.monotonic() before the POST
    events: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for _, k, data in self.events if k == kind]

    def first(self, kind: str) -> float:
        """Seconds from sending to the first event of `kind`."""
        return next(at for at, k, _ in self.events if k == kind) - self.sent_at

    def text(self, reply: str) -> str:
        out = ""
        for chunk in self.of("chunk"):
            if chunk["reply"] == reply:
                out = out[: chunk["offset"]] + chunk["text"]
        return out


def chat(
    url: str,
    session: requests.Session,
    project: str,
    targets: list[dict[str, int]],
    sampling: dict[str, Any],
    timeout_s: float = 180.0,
) -> Exchange:
    """One message to `targets`, read to its `end` event."""
    chats = [{"target": t, "messages": [USER_MESSAGE]} for t in targets]
    body = {"project": project, "chats": chats, "sampling": sampling}
    exchange = Exchange(time.monotonic())
    sent = session.post(f"{url}/api/playground/exchanges/", json=body, timeout=30)
    assert sent.status_code == 201, sent.text
    events = f"{url}/api/playground/exchanges/{sent.json()['id']}/events?last_event_id=0"
    with session.get(events, stream=True, timeout=timeout_s) as stream:
        assert stream.status_code == 200, stream.text
        kind = ""
        for line in stream.iter_lines(decode_unicode=True):
            # Heartbeats keep the stream open: the whole exchange has a deadline of its own.
            if time.monotonic() - exchange.sent_at > timeout_s:
                raise AssertionError(f"no end after {timeout_s:g} s: {exchange.events}")
            if line.startswith("event: "):
                kind = line[len("event: ") :]
            elif line.startswith("data: ") and kind:
                exchange.events.append((time.monotonic(), kind, json.loads(line[6:])))
                if kind == "end":
                    return exchange
    raise AssertionError(f"the exchange's stream closed before its end: {exchange.events}")
