"""A distributed run over two Ray nodes, end to end: a head and a worker node started
separately on this machine (each with its own CPUs and ports), the studio given only
RAY_ADDRESS; a 2-worker GRPO run created through the API with STRICT_SPREAD placement
puts one worker on each node, trains, reports metrics and a checkpoint, and the
checkpoint is listed and downloaded through the API."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import requests

from tests.runs.conftest import TERMINAL, Api, Stack, eventually, project_api, tiny_config
from trainer.distributed import ray_auth

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def api_on_two_nodes(two_node_stack: Stack, transactional_db: None) -> Api:
    return project_api(two_node_stack)


def node_ids(stack: Stack) -> set[str]:
    """The cluster's live nodes, from Ray's state API."""
    url = f"{stack.ray_address}/api/v0/nodes?detail=true"
    response = requests.get(url, headers=ray_auth.auth_headers(), timeout=10)
    rows = response.json()["data"]["result"]["result"]
    return {row["node_id"] for row in rows if row["state"] == "ALIVE"}


def test_a_strict_spread_run_puts_one_worker_on_each_node_and_its_checkpoint_downloads(
    two_node_stack: Stack, api_on_two_nodes: Api, tiny_assets: Path
) -> None:
    api, stack = api_on_two_nodes, two_node_stack
    config = tiny_config(
        tiny_assets,
        steps=2,
        resources={
            "num_workers": 2,
            "cpus_per_worker": 1,
            "memory_gb": 0.25,
            "placement_strategy": "STRICT_SPREAD",
            "worker_timeout_s": 300,
        },
    )
    created = api.create_run("two-nodes", config)

    run = api.wait_status(created["id"], TERMINAL, 240, stack)

    assert run["status"] == "succeeded", run["last_error"]
    keys = api.get(f"/api/runs/{run['id']}/metrics/keys")["keys"]
    assert {"actor/pg_loss", "critic/score/mean"} <= set(keys)
    # One worker on each node, as Ray placed them (read by the reconciler while it ran).
    placement = api.run(run["id"])["attempts"][0]["placement"]
    workers = {share["node_id"]: share["workers"] for share in placement if share["workers"]}
    assert workers == dict.fromkeys(node_ids(stack), 1), placement
    assert stack.ray_nodes[0].info["node_id"] in workers
    assert sum(share["entrypoint"] for share in placement) == 1
    # Each node holds its worker's bundle (1 CPU), plus the controller's CPU on one.
    assert sum(share["cpus"] for share in placement) == 3, placement

    # The checkpoint the trainer wrote under RLSTUDIO_CHECKPOINT_ROOT, listed and served.
    eventually(
        lambda: bool(api.get(f"/api/runs/{run['id']}/checkpoints/")["results"]),
        30,
        "the checkpoint is listed",
    )
    [checkpoint] = api.get(f"/api/runs/{run['id']}/checkpoints/")["results"]
    root = stack.env["RLSTUDIO_CHECKPOINT_ROOT"]
    assert checkpoint["uri"].startswith(f"{root}/run-{run['id']}/"), checkpoint
    assert checkpoint["step"] == 2
    assert checkpoint["reachable"] is True, checkpoint["unreachable_reason"]
    response = api.session.get(
        f"{api.url}/api/runs/{run['id']}/checkpoints/{checkpoint['id']}/download", timeout=60
    )
    assert response.status_code == 200, response.text[:500]
    with tarfile.open(fileobj=io.BytesIO(response.content)) as tar:
        names = {Path(name).name for name in tar.getnames()}
    assert {"actor.pt", "trainer_state.pt"} <= names
