"""One user can't hold back everyone's runs (studio/runs/fair_share.py).

- A project holds at most RLSTUDIO_PROJECT_MAX_RUNNING_JOBS jobs and a user, across their
  projects, at most RLSTUDIO_USER_MAX_RUNNING_JOBS; evaluations and playground model
  servers count as jobs. A user creates at most RLSTUDIO_USER_MAX_PROJECTS projects.
- Priority orders a project's own runs only: a top-priority run that does not fit yet
  doesn't keep another project's fitting run waiting; after being passed over
  RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES times it reserves, and starts once it fits.
- What a run waits for never names another project's run.

The cluster is a DictRay; a started run is marked running, as its launch would."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from studio.model_registry.models import RegisteredModel
from studio.playground import servers
from studio.projects.models import Membership, Project, Role
from studio.runs.models import Checkpoint, Run
from studio.runs.queue import Snapshot, save_snapshot
from studio.runs.reconcile import reconcile
from tests.runs.dict_ray import DictRay
from tests.studio.conftest import World
from tests.studio.test_playground_api import forget_playground

CLUSTER = {"cpus": 8.0, "gpus": 0.0, "memory_gb": 64.0}


@pytest.fixture(autouse=True)
def clean_state(db: None, settings: Any) -> Iterator[None]:
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 0
    settings.RLSTUDIO_USER_MAX_RUNNING_JOBS = 0
    settings.RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES = 3
    forget_playground()  # no model server of an earlier test counts as a running job
    yield
    forget_playground()
    save_snapshot(Snapshot({}, {}, 0.0))  # stale: later tests start with no cluster view


def queue_run(
    world: World,
    name: str,
    project: Project | None = None,
    user: Any = None,
    priority: int = 0,
    cpus: float = 0.5,
    status: str = "queued",
) -> Run:
    return Run.objects.create(
        project=project or world.project,
        name=name,
        config={},
        status=status,
        priority=priority,
        resources={"cpus": cpus, "memory_gb": 0.5},
        created_by=user or world.member,
    )


def dispatch(ray: DictRay) -> list[int]:
    """One reconcile pass; the runs it starts are marked running, as their launch would."""
    started = reconcile(ray).to_launch
    Run.objects.filter(pk__in=started).update(status="running")
    return started


def waiting_for(client: Any, slug: str) -> dict[str, str]:
    body = client.get(f"/api/queue/?project={slug}").json()
    return {entry["name"]: entry["waiting_for"] for entry in body["queued"]}


# --- caps --------------------------------------------------------------------------------
def test_a_project_flooding_the_queue_gets_its_cap_and_no_more(world: World, settings):
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 2
    ray = DictRay(total=CLUSTER)
    flood = [queue_run(world, f"flood-{i}", priority=100) for i in range(10)]
    theirs = queue_run(world, "theirs", project=world.other_project, user=world.outsider)

    started = reconcile(ray).to_launch
    assert sorted(started) == sorted([flood[0].pk, flood[1].pk, theirs.pk])
    # The runs over the cap wait and say why; nothing of theirs was lost.
    assert Run.objects.filter(pk__in=[r.pk for r in flood[2:]], status="queued").count() == 8


def test_without_caps_the_same_queue_starts_everything_that_fits(world: World):
    ray = DictRay(total=CLUSTER)
    flood = [queue_run(world, f"flood-{i}", priority=100) for i in range(4)]
    assert reconcile(ray).to_launch == [run.pk for run in flood]


def test_a_user_holds_at_most_their_cap_across_all_their_projects(world: World, settings):
    settings.RLSTUDIO_USER_MAX_RUNNING_JOBS = 2
    ray = DictRay(total=CLUSTER)
    second = Project.objects.create(name="Beta", slug="beta", created_by=world.member)
    Membership.objects.create(project=second, user=world.member, role=Role.OWNER)
    mine = [queue_run(world, f"a-{i}", priority=500) for i in range(2)]
    mine += [queue_run(world, f"b-{i}", project=second, priority=500) for i in range(2)]
    theirs = queue_run(world, "theirs", project=world.other_project, user=world.outsider)

    started = dispatch(ray)
    assert len([run_id for run_id in started if run_id != theirs.pk]) == 2
    assert theirs.pk in started
    assert dispatch(ray) == []  # the member's other two wait for their cap, not for room
    member = world.client("member")
    waits = waiting_for(member, "beta") | waiting_for(member, "alpha")
    assert set(waits.values()) == {"its creator's limit of 2 running jobs"}


def test_the_next_start_goes_to_the_user_and_project_holding_fewest_jobs(world: World):
    # Room for one more run: the member already runs one, the outsider none.
    ray = DictRay(total={"cpus": 2.0, "gpus": 0.0, "memory_gb": 64.0})
    queue_run(world, "running", cpus=1, status="running")
    queue_run(world, "urgent", priority=1000, cpus=1)
    theirs = queue_run(world, "theirs", project=world.other_project, user=world.outsider, cpus=1)

    assert dispatch(ray) == [theirs.pk]


# --- a large run: not blocking, never starved -------------------------------------------
def test_a_top_priority_run_asking_for_every_cpu_does_not_hold_up_another_projects_run(
    world: World,
):
    ray = DictRay(total=CLUSTER)
    theirs = world.other_project, world.outsider
    queue_run(world, "theirs-running", *theirs, cpus=2, status="running")
    big = queue_run(world, "everything", priority=1000, cpus=8)
    small = queue_run(world, "small", *theirs, cpus=1)

    assert dispatch(ray) == [small.pk]  # the next dispatch, not after the big run
    assert Run.objects.get(pk=big.pk).status == "queued"


def test_a_large_run_passed_over_reserves_then_starts_once_it_fits(world: World, settings):
    settings.RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES = 2
    ray = DictRay(total=CLUSTER)
    holder = queue_run(
        world, "theirs-running", world.other_project, world.outsider, cpus=4, status="running"
    )
    big = queue_run(world, "everything", priority=1000, cpus=8)

    def small(i: int) -> Run:  # a stream of small runs, one per dispatch
        return queue_run(world, f"small-{i}", world.other_project, world.outsider, cpus=1)

    first, second = small(0), small(1)
    assert dispatch(ray) == [first.pk, second.pk]  # passed over once
    third = small(2)
    assert dispatch(ray) == [third.pk]  # twice: from now on it reserves
    fourth = small(3)
    assert dispatch(ray) == []  # 1 CPU is free, held for the large run
    waits = waiting_for(world.client("outsider"), "other")
    assert waits == {
        "small-3": "1 CPU (0.0 free); what is free is held for a run that has waited longer"
    }
    mine = waiting_for(world.client("member"), "alpha")
    assert mine == {"everything": "8 CPUs (1.0 free); what frees up is held for it until it fits"}

    Run.objects.filter(pk__in=[holder.pk, first.pk, second.pk]).update(status="succeeded")
    assert dispatch(ray) == []  # 4 CPUs free now, still held for it: the small run waits
    Run.objects.filter(pk=third.pk).update(status="succeeded")
    assert dispatch(ray) == [big.pk]
    assert Run.objects.get(pk=fourth.pk).status == "queued"


def test_what_a_run_waits_for_never_names_another_projects_run(world: World, settings):
    settings.RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES = 1
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 3
    ray = DictRay(total=CLUSTER)
    queue_run(world, "alpha-holder", cpus=4, status="running")
    secret = queue_run(world, "alpha-secret-plan", priority=1000, cpus=8)
    queue_run(world, "alpha-behind", priority=1000, cpus=1)
    for i in range(4):
        queue_run(world, f"theirs-{i}", world.other_project, world.outsider, cpus=2)
    dispatch(ray)
    dispatch(ray)

    alpha_ids = set(Run.objects.filter(project=world.project).values_list("id", flat=True))
    outsider = world.client("outsider")
    shown = list(waiting_for(outsider, "other").values())
    runs = outsider.get("/api/runs/?project=other&status=queued").json()["results"]
    shown += [run["waiting_for"] for run in runs]
    assert shown and all(shown)
    for text in shown:
        assert "alpha" not in text and secret.name not in text
        assert not {int(n) for n in re.findall(r"run (\d+)", text)} & alpha_ids, text


# --- projects ----------------------------------------------------------------------------
def test_a_user_creates_at_most_their_cap_of_projects(world: World, settings):
    settings.RLSTUDIO_USER_MAX_PROJECTS = 2
    outsider = world.client("outsider")  # created "Other" already
    assert outsider.post("/api/projects/", {"name": "Second"}, format="json").status_code == 201

    refused = outsider.post("/api/projects/", {"name": "Third"}, format="json")
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "validation_error"
    assert "the limit is 2 per user" in error["message"]
    assert Project.objects.filter(created_by=world.outsider).count() == 2


# --- playground model servers ------------------------------------------------------------
@pytest.fixture
def cluster(world: World, settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A DictRay behind the real start path: the API, then the worker's task, eagerly."""
    from workers import playground as worker

    ray = DictRay(total=CLUSTER)
    settings.RAY_ADDRESS = "127.0.0.1:6379"  # any: the client is the DictRay
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    monkeypatch.setattr(worker.RayJobsClient, "from_settings", classmethod(lambda cls: ray))
    monkeypatch.setattr(
        servers, "_send_start", lambda *args: worker.start_playground_server.apply(args=args)
    )
    monkeypatch.setattr(servers, "transaction", SimpleNamespace(on_commit=lambda fn: fn()))
    return ray


def playground_jobs(ray: DictRay) -> list[str]:
    return [spec.submission_id for spec in ray.specs if "-playground-" in spec.submission_id]


def chat_model(world: World, name: str) -> RegisteredModel:
    return RegisteredModel.objects.create(
        project=world.project,
        name=name,
        kind="demo",
        role="policy",
        relative_path="demo-model",
        created_by=world.member,
    )


def checkpoint(world: World, settings: Any, files: tuple[str, ...] | None) -> Checkpoint:
    """A checkpoint of a run in alpha: its folder with `files`, or no folder (None)."""
    run = queue_run(world, "trained", status="succeeded")
    folder = Path(settings.RLSTUDIO_CHECKPOINT_ROOT) / f"run-{run.pk}" / "step_2"
    if files is not None:
        folder.mkdir(parents=True)
        for name in files:
            (folder / name).write_text("{}")
    return Checkpoint.objects.create(run=run, attempt=1, step=2, uri=str(folder))


def warm(world: World, target: dict[str, int]) -> Any:
    body = {"project": "alpha", "target": target}
    return world.client("member").post("/api/playground/warm/", body, format="json")


def test_model_servers_count_against_the_users_cap_and_over_it_submit_nothing(
    world: World, settings, cluster: DictRay
):
    settings.RLSTUDIO_USER_MAX_RUNNING_JOBS = 1
    first, second = chat_model(world, "first"), chat_model(world, "second")
    assert warm(world, {"model": first.pk}).status_code == 200
    assert len(playground_jobs(cluster)) == 1

    refused = warm(world, {"model": second.pk})
    assert refused.status_code == 400
    message = refused.json()["error"]["message"]
    assert "your limit of 1 running job" in message and "model servers" in message
    chat = {"target": {"model": second.pk}, "messages": [{"role": "user", "content": "hi"}]}
    sent = world.client("member").post(
        "/api/playground/exchanges/", {"project": "alpha", "chats": [chat]}, format="json"
    )
    assert sent.status_code == 201 and sent.json()["replies"][0]["state"] == "failed"
    assert len(playground_jobs(cluster)) == 1  # neither reached Ray

    # The live server is a running job for the queue too: the member's run waits.
    run = queue_run(world, "after-chat")
    assert run.pk not in reconcile(cluster).to_launch


def test_model_servers_count_against_the_projects_cap_with_its_runs(
    world: World, settings, cluster: DictRay
):
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 1
    queue_run(world, "busy", user=world.owner, status="running")
    refused = warm(world, {"model": chat_model(world, "chat").pk})
    assert refused.status_code == 400
    assert "its project's limit of 1 running job (1 running)" in refused.json()["error"]["message"]
    assert playground_jobs(cluster) == []


@pytest.mark.parametrize(
    ("files", "reason"),
    [(None, "is not on this studio's filesystem"), ((), "holds neither a Hugging Face model")],
)
def test_warming_an_unreachable_checkpoint_submits_nothing_and_says_why(
    world: World, settings, cluster: DictRay, files, reason
):
    target = checkpoint(world, settings, files)
    refused = warm(world, {"checkpoint": target.pk})
    assert refused.status_code == 400
    assert reason in refused.json()["error"]["message"]
    assert playground_jobs(cluster) == []

    servable = checkpoint(world, settings, ("actor.pt", "meta.json"))
    assert warm(world, {"checkpoint": servable.pk}).status_code == 200
    assert len(playground_jobs(cluster)) == 1
