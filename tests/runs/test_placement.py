"""An attempt's placement per node: read from Ray by reconcile while the job runs, kept
once complete, never replaced by less. Ray is tests/runs/dict_ray.py here; the live
two-node test (test_runs_on_two_nodes.py) reads it from a real cluster."""

from __future__ import annotations

from studio.runs.jobs import NodeShare
from studio.runs.models import Run, RunAttempt
from studio.runs.reconcile import reconcile
from tests.runs.dict_ray import DictRay
from tests.runs.test_reconcile import submitted
from tests.studio.conftest import World

# As Ray reports it: the entrypoint's node holds no bundle here; the studio adds the CPU it
# reserved for a distributed run's controller.
HEAD = NodeShare("n-head", "10.0.0.1", entrypoint=True, workers=0, cpus=0, gpus=0, memory_gb=0)


def worker(node: str, ip: str) -> NodeShare:
    return NodeShare(node, ip, entrypoint=False, workers=1, cpus=1, gpus=1, memory_gb=4)


def distributed(world: World, ray: DictRay) -> RunAttempt:
    run, attempt = submitted(world, ray)
    Run.objects.filter(pk=run.pk).update(
        config={"resources": {"num_workers": 2, "placement_strategy": "STRICT_SPREAD"}}
    )
    ray.set(attempt.submission_id, "RUNNING")
    return attempt


def placement_of(attempt: RunAttempt) -> list[dict]:
    return list(RunAttempt.objects.get(pk=attempt.pk).placement)


def test_reconcile_keeps_reading_until_every_worker_is_placed(world: World) -> None:
    ray = DictRay()
    attempt = distributed(world, ray)
    sid = attempt.submission_id

    ray.placement_by_id[sid] = [HEAD]  # the controller started; its workers not yet
    reconcile(ray)
    assert [p["node_id"] for p in placement_of(attempt)] == ["n-head"]

    ray.placement_by_id[sid] = [HEAD, worker("n-a", "10.0.0.2"), worker("n-b", "10.0.0.3")]
    reconcile(ray)
    shares = placement_of(attempt)
    assert [(p["node_ip"], p["workers"], p["gpus"]) for p in shares] == [
        ("10.0.0.1", 0, 0),
        ("10.0.0.2", 1, 1),
        ("10.0.0.3", 1, 1),
    ]

    ray.placement_by_id[sid] = [HEAD]  # training over: the workers' group is gone
    reconcile(ray)
    assert placement_of(attempt) == shares


def test_a_single_process_run_is_complete_with_its_entrypoint(world: World) -> None:
    ray = DictRay()
    _, attempt = submitted(world, ray)
    ray.set(attempt.submission_id, "RUNNING")
    ray.placement_by_id[attempt.submission_id] = [HEAD]
    reconcile(ray)
    ray.placement_by_id[attempt.submission_id] = [worker("n-other", "10.0.0.9")]
    reconcile(ray)

    assert [p["node_id"] for p in placement_of(attempt)] == ["n-head"]


def test_the_api_shows_the_placement_of_each_attempt(world: World) -> None:
    ray = DictRay()
    attempt = distributed(world, ray)
    ray.placement_by_id[attempt.submission_id] = [HEAD, worker("n-a", "10.0.0.2")]
    reconcile(ray)

    shown = world.client("viewer").get(f"/api/runs/{attempt.run_id}/").json()

    [node_head, node_a] = shown["attempts"][0]["placement"]
    assert node_head == {
        "node_id": "n-head",
        "node_ip": "10.0.0.1",
        "entrypoint": True,
        "workers": 0,
        "cpus": 1.0,  # the controller's CPU (studio.runs.launch.entrypoint_resources)
        "gpus": 0.0,
        "memory_gb": 0.0,
    }
    assert (node_a["node_id"], node_a["workers"], node_a["memory_gb"]) == ("n-a", 1, 4.0)
