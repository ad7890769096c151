"""One user can't hold more live streams than RLSTUDIO_SSE_MAX_STREAMS_PER_USER, counted
across web processes (two uvicorn servers here, as behind a load balancer), while other
users still get theirs; a closed stream gives its slot back."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.live import start_web_server
from tests.telemetry.conftest import make_lab
from tests.telemetry.sse import Stream

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def bearer(user) -> dict[str, str]:
    from studio.projects.models import ApiToken

    _, raw = ApiToken.issue(user, "stream")
    return {"Authorization": f"Bearer {raw}"}


def test_a_user_opening_streams_on_every_server_is_stopped_at_the_limit(
    tmp_path: Path, django_db_setup: None
) -> None:
    env = {"RLSTUDIO_SSE_MAX_STREAMS_PER_USER": "2", "LOG_LEVEL": "WARNING"}
    folders = [tmp_path / f"web{i}" for i in range(2)]
    for folder in folders:
        folder.mkdir()
    servers = [start_web_server(folder, **env) for folder in folders]
    opened: list[Stream] = []
    try:
        lab = make_lab()
        run = lab.new_run()
        path = f"/api/runs/{run.pk}/events"
        attacker, colleague = bearer(lab.viewer), bearer(lab.owner)
        urls = [server.info["url"] for server in servers]
        for url in urls:  # one stream on each process: both allowed
            opened.append(Stream(url, path, attacker))
            assert opened[-1].status == 200
        for url in urls:  # a third, on either process, is refused
            refused = Stream(url, path, attacker)
            assert refused.status == 429
            error = json.loads(refused.response.read())["error"]
            assert error["code"] == "too_many_streams"
            assert "2 live streams" in error["message"]
            assert refused.response.getheader("Retry-After") == "15"
        # Another user is not affected.
        opened.append(Stream(urls[0], path, colleague))
        assert opened[-1].status == 200
        # Closing a stream gives its slot back (once the server notices the drop).
        opened[0].cut()
        deadline = time.monotonic() + 10
        while True:
            again = Stream(urls[1], path, attacker)
            if again.status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert again.status == 200
        opened.append(again)
    finally:
        for stream in opened:
            stream.cut()
        for server in servers:
            server.stop()
