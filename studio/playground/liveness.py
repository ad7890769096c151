"""Whether a model server is alive, and which live ones count as running jobs.

A live model server (starting, loading or ready; not one that failed) counts as a running
job of its project and of the user who started it, under the caps runs have
(studio.runs.fair_share), so chatting can't take more of the cluster than running can.
"""

from __future__ import annotations

import time

from django.conf import settings

from studio.playground import store
from studio.playground.targets import parse_server_id

POLL_SECONDS = 20.0  # the longest a server's `next` request waits for a message
SILENCE_S = POLL_SECONDS + 40.0  # a ready server not heard from this long is gone
FAILED_HOLD_S = 30.0


def alive(record: dict[str, str], now: float | None = None) -> bool:
    """Whether the record is a server that is up, on its way up, or failed recently."""
    if not record:
        return False
    now = time.time() if now is None else now
    state, seen = record.get("state"), float(record.get("seen_at", 0))
    if state == "failed":
        return now - seen < FAILED_HOLD_S
    if state in ("starting", "loading"):
        started = float(record.get("started_at", 0))
        return now - started < settings.RLSTUDIO_PLAYGROUND_START_TIMEOUT_S
    return now - seen < SILENCE_S


def job_holders() -> list[tuple[int, int | None]]:
    """(project id, id of the user who started it) of every live model server."""
    now = time.time()
    holders: list[tuple[int, int | None]] = []
    for server_id, record in store.known_servers().items():
        parsed = parse_server_id(server_id)
        if parsed is None or record.get("state") == "failed" or not alive(record, now):
            continue
        user = record.get("user", "")
        holders.append((parsed[0], int(user) if user.isdigit() else None))
    return holders
