"""One live stack (tests/runs/conftest.py) for every module here: runs, evaluations, the
playground and the bootstrap-secret race all run on the same settings, so they share
its Ray head, web server, Celery worker and beat instead of starting them per module.

A stack's start and stop took about 20 s of CPU and 17 s on a quiet 2-core VM, more
under the suite's load; the package is one xdist group (tests/suite_workers.py), so
its modules run on one worker one after another and the stack stops after the last.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub_server import FakeHub
from tests.runs.conftest import Stack, live_stack

# Model servers release themselves after this many idle seconds (600 by default): the
# playground's test waits for it, and no other test here keeps a server past a message.
PLAYGROUND_IDLE_S = 6


@pytest.fixture(scope="package")
def stack(
    django_db_setup: None,
    tmp_path_factory: pytest.TempPathFactory,
    tiny_assets: Path,
    hub: FakeHub,
) -> Iterator[Stack]:
    env = {"RLSTUDIO_PLAYGROUND_IDLE_SECONDS": str(PLAYGROUND_IDLE_S)}
    yield from live_stack(tmp_path_factory, tiny_assets, hub.url, name="live", extra_env=env)
