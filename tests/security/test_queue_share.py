"""One project can't take the whole cluster: however many runs a member queues (here
with the highest priority), the project holds at most RLSTUDIO_PROJECT_MAX_RUNNING_JOBS
at once, and another project's run, queued after them, still starts."""

from __future__ import annotations

from studio.runs.models import Run
from studio.runs.reconcile import reconcile
from tests.runs.dict_ray import DictRay
from tests.studio.conftest import World


def queue_run(world: World, name: str, project=None, priority: int = 0) -> Run:
    return Run.objects.create(
        project=project or world.project,
        name=name,
        config={},
        priority=priority,
        resources={"cpus": 0.5, "memory_gb": 0.5},
        created_by=world.member,
    )


def test_a_project_flooding_the_queue_gets_its_cap_and_no_more(world: World, settings):
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 2
    ray = DictRay(total={"cpus": 8.0, "gpus": 0.0, "memory_gb": 32.0})
    flood = [queue_run(world, f"flood-{i}", priority=100) for i in range(10)]
    theirs = queue_run(world, "theirs", project=world.other_project)

    started = reconcile(ray).to_launch
    assert started == [flood[0].pk, flood[1].pk, theirs.pk]
    # The runs over the cap wait and say why; nothing of theirs was lost.
    assert Run.objects.filter(pk__in=[r.pk for r in flood[2:]], status="queued").count() == 8


def test_without_a_cap_the_same_queue_starts_everything_that_fits(world: World, settings):
    settings.RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = 0
    ray = DictRay(total={"cpus": 8.0, "gpus": 0.0, "memory_gb": 32.0})
    flood = [queue_run(world, f"flood-{i}", priority=100) for i in range(4)]
    assert reconcile(ray).to_launch == [run.pk for run in flood]
