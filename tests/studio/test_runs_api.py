"""Runs API: create/validate configs, clone, cancel, resume, priority; the state machine."""

from __future__ import annotations

import copy
import os
import threading
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from studio.datasets.models import Dataset, DatasetVersion
from studio.model_registry.locations import offered_folders
from studio.model_registry.services import add_model_record
from studio.projects.models import AuditEvent, Project
from studio.references.run_inputs import demo_model, path_defaults
from studio.rewards.models import RewardFunction, RewardVersion
from studio.runs import lifecycle
from studio.runs.models import Run, RunStatus, RunStatusChange
from tests.studio.conftest import write_model_folder
from trainer.config import PRESETS, RunConfig, load_config
from trainer.config.paths import set_place


def create(client, **body):
    """POST a run to project alpha; on a dataset of its own unless the body names one."""
    payload = {"project": "alpha", "name": "r1", **body}
    if "dataset" not in body and "dataset_version" not in body:
        project = Project.objects.get(slug="alpha")
        found = DatasetVersion.objects.filter(dataset__project=project).first()
        payload["dataset_version"] = (found or dataset_version(project, project.created_by)).pk
    return client.post("/api/runs/", payload, format="json")


def dataset_version(project: Project, user) -> DatasetVersion:
    dataset = Dataset.objects.create(project=project, name=f"d-{project.slug}", created_by=user)
    return DatasetVersion.objects.create(
        dataset=dataset,
        number=1,
        file="datasets/x.parquet",
        source_format="parquet",
        data_format="verl",
        size_bytes=1,
        checksum="0" * 64,
        row_count=1,
        created_by=user,
    )


def reward_version(project: Project, user) -> RewardVersion:
    function = RewardFunction.objects.create(project=project, name="f", created_by=user)
    return RewardVersion.objects.create(
        function=function, number=1, code="def compute_score(*a): return 0", author=user
    )


@pytest.fixture
def member(world) -> APIClient:
    return world.client("member")


@pytest.fixture
def run(world, member) -> dict:
    response = create(member, preset="grpo-tiny-arith")
    assert response.status_code == 201, response.json()
    return response.json()


def without_paths(tree: dict) -> dict:
    """A config tree without what the run's inputs set (paths, and how rows are read)."""
    tree = copy.deepcopy(tree)
    for place in path_defaults(tree):
        set_place(tree, place, None)
    tree["data"].pop("format")
    return tree


def reward_models(world, settings) -> list[int]:
    """Two reward models of project alpha: the demo one and a folder under a model root
    (the root stays configured for the test)."""
    demo = demo_model(world.project, "demo-reward-model", world.owner)
    root = write_model_folder(
        Path(os.environ["RLSTUDIO_VAR_DIR"]) / "roots" / "judge", "LlamaForSequenceClassification"
    ).parent
    settings.RLSTUDIO_MODEL_ROOTS = [str(root)]
    [folder] = [c for c in offered_folders() if c.kind == "server"]
    judge = add_model_record(
        world.project, world.owner, "server", "judge", str(folder.root), folder.name
    )
    return [demo.pk, judge.pk]


def set_status(run_id: int, status: RunStatus) -> None:
    Run.objects.filter(pk=run_id).update(status=status)


# --- creating runs and validating configs ------------------------------------------------


def test_creating_from_a_preset_with_overrides_stores_the_resolved_config(world, member):
    response = create(
        member,
        preset="grpo-tiny-arith",
        config={"rollout": {"n": 4}},
        overrides=["actor.optim.lr=3e-6", "trainer.total_steps=7"],
        priority=5,
        tags=["baseline", "baseline", "arith"],
        notes="first try",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    expected = load_config(
        preset="grpo-tiny-arith",
        base={"rollout": {"n": 4}, "data": {"format": "verl"}},
        overrides=["actor.optim.lr=3e-6", "trainer.total_steps=7"],
    ).model_dump(mode="json")
    stored = Run.objects.get(pk=body["id"])
    assert stored.config == body["config"]
    assert without_paths(stored.config) == without_paths(expected)
    # Every path-bearing field holds a reference to the run's inputs, no server path.
    assert stored.config["model"]["path"] == f"resource:model/{stored.model_id}"
    version = stored.dataset_version_id
    assert stored.config["data"]["train_files"] == [f"resource:dataset-version/{version}/train"]
    assert stored.config["data"]["val_files"] == [f"resource:dataset-version/{version}/held-out"]
    assert stored.config["checkpoint"]["dir"] == "resource:run/checkpoint.dir"
    assert stored.config["actor"]["optim"]["lr"] == 3e-6
    assert (
        stored.config["data"]["train_batch_size"]
        == PRESETS["grpo-tiny-arith"]["data"]["train_batch_size"]
    )
    RunConfig.model_validate(stored.config)  # what's stored is a complete, valid config
    assert body["status"] == "queued"
    assert body["preset"] == "grpo-tiny-arith"
    assert body["tags"] == ["baseline", "arith"]
    assert body["priority"] == 5
    assert body["created_by"] == "member"
    assert AuditEvent.objects.filter(action="run.create", object_id=str(body["id"])).exists()


def test_resources_default_from_the_config_and_can_be_overridden(member):
    body = create(member, overrides=["resources.num_workers=2", "resources.memory_gb=3"]).json()
    assert body["resources"] == {"cpus": 2.0, "gpus": 0.0, "memory_gb": 6.0}
    body = create(member, resources={"gpus": 1}).json()
    assert body["resources"] == {"cpus": 1.0, "gpus": 1.0, "memory_gb": 4.0}


def test_a_reward_model_on_its_own_workers_adds_their_resources(world, member, settings):
    models = reward_models(world, settings)
    group = [
        "reward.model.placement=worker_group",
        "reward.model.resources.num_workers=2",
        "reward.model.resources.gpus_per_worker=1",
        "reward.model.resources.memory_gb=8",
    ]
    rm = {"reward.model.path": models[0]}
    body = create(member, overrides=group, reward_models=rm).json()
    assert body["resources"] == {"cpus": 3.0, "gpus": 2.0, "memory_gb": 20.0}
    colocated = create(member, overrides=group[1:], reward_models=rm).json()
    assert colocated["resources"] == {"cpus": 1.0, "gpus": 0.0, "memory_gb": 4.0}
    judge = (
        "reward.extra_models=[{name: judge, placement: worker_group, "
        "resources: {num_workers: 1, cpus_per_worker: 4, gpus_per_worker: 1, memory_gb: 16}}]"
    )
    both_models = {**rm, "reward.extra_models.0.path": models[1]}
    both = create(member, overrides=[*group, judge], reward_models=both_models).json()
    assert both["resources"] == {"cpus": 7.0, "gpus": 3.0, "memory_gb": 36.0}


def test_reward_sources_with_one_name_are_refused_naming_it(world, member, settings):
    models = reward_models(world, settings)
    response = create(
        member,
        overrides=["reward.extra_models=[{name: reward_model}]"],
        reward_models={"reward.model.path": models[0], "reward.extra_models.0.path": models[1]},
    )
    assert response.status_code == 400
    [message] = response.json()["error"]["fields"]["config.reward"]
    assert "distinct names" in message and "reward_model is used more than once" in message
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{"config": {"actor": {"optim": {"lr": -1}}}}, {"overrides": ["actor.optim.lr=-1"]}],
    ids=["tree", "override"],
)
def test_config_errors_name_the_config_field(member, body):
    response = create(member, **body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"] == {"config.actor.optim.lr": ["Input should be greater than 0"]}
    assert error["message"] == "config.actor.optim.lr: Input should be greater than 0"
    assert not Run.objects.exists()


def test_a_choice_error_lists_the_allowed_values(member):
    response = create(member, config={"algorithm": {"adv_estimator": "magic"}})
    message = response.json()["error"]["fields"]["config.algorithm.adv_estimator"][0]
    assert "'grpo'" in message and "'gae'" in message


def test_a_cross_field_rule_is_reported_on_the_config(member):
    response = create(member, config={"algorithm": {"adv_estimator": "rloo"}, "rollout": {"n": 1}})
    assert response.status_code == 400
    assert "rollout.n >= 2" in response.json()["error"]["fields"]["config"][0]


def test_an_unknown_config_key_is_rejected_by_name(member):
    response = create(member, config={"actor": {"optim": {"learning_rate": 1e-5}}})
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    message = fields["config.actor.optim.learning_rate"][0]
    assert "'actor.optim.learning_rate'" in message and "lr" in message

    response = create(member, overrides=["actor.optim.learning_rate=1e-5"])
    assert response.status_code == 400
    assert "'actor.optim.learning_rate'" in response.json()["error"]["fields"]["overrides"][0]
    assert not Run.objects.exists()


def test_a_verl_style_override_is_translated(member):
    response = create(
        member,
        overrides=[
            "actor_rollout_ref.rollout.n=4",
            "actor_rollout_ref.actor.optim.lr=2e-6",
            "data.max_response_length=24",
        ],
    )
    assert response.status_code == 201, response.json()
    config = response.json()["config"]
    assert config["rollout"]["n"] == 4
    assert config["actor"]["optim"]["lr"] == 2e-6
    assert config["rollout"]["max_new_tokens"] == 24


def test_ignored_verl_overrides_open_the_runs_log_once_each_with_the_reason(member):
    response = create(
        member,
        overrides=[
            "actor_rollout_ref.rollout.gpu_memory_utilization=0.6",
            "actor_rollout_ref.model.use_remove_padding=True",
            "actor_rollout_ref.rollout.n=4",
        ],
    )
    assert response.status_code == 201, response.json()
    logs = member.get(f"/api/runs/{response.json()['id']}/logs/").json()["results"]
    messages = [line["message"] for line in logs]
    assert len(messages) == 2, messages
    assert messages[0].startswith(
        "verl override actor_rollout_ref.rollout.gpu_memory_utilization=0.6 is ignored: "
    )
    assert "use_remove_padding" in messages[1]
    assert {line["level"] for line in logs} == {"WARNING"}


def test_old_speed_keys_are_stored_as_the_speed_section_with_a_note_in_the_log(member):
    response = create(member, overrides=["model.cpu_linear_kernel=torch"])
    assert response.status_code == 201, response.json()
    config = response.json()["config"]
    assert config["speed"]["cpu_linear_kernel"] == "torch"
    assert "cpu_linear_kernel" not in config["model"]
    logs = member.get(f"/api/runs/{response.json()['id']}/logs/").json()["results"]
    assert [line["message"] for line in logs] == [
        "model.cpu_linear_kernel='torch' is read as speed.cpu_linear_kernel: the key moved "
        "to the `speed` section; spell it speed.cpu_linear_kernel"
    ]


def test_an_unknown_preset_is_rejected_with_the_choices(member):
    response = create(member, preset="grpo-huge")
    assert response.status_code == 400
    assert "preset" in response.json()["error"]["fields"]


def test_dataset_and_reward_versions_must_belong_to_the_project(world, member):
    ours = dataset_version(world.project, world.owner)
    theirs = dataset_version(world.other_project, world.outsider)
    foreign = create(member, dataset_version=theirs.pk).json()["error"]
    missing = create(member, dataset_version=theirs.pk + 1000).json()["error"]
    assert foreign["fields"]["dataset_version"] == [
        f"No dataset version {theirs.pk} in project 'alpha'."
    ]
    # Same words whether the id exists elsewhere or nowhere: nothing leaks.
    assert missing["message"].replace(str(theirs.pk + 1000), "N") == foreign["message"].replace(
        str(theirs.pk), "N"
    )
    their_reward = reward_version(world.other_project, world.outsider)
    response = create(member, reward_version=their_reward.pk)
    assert response.status_code == 400
    assert "reward_version" in response.json()["error"]["fields"]

    our_reward = reward_version(world.project, world.owner)
    body = create(member, dataset_version=ours.pk, reward_version=our_reward.pk).json()
    assert (body["dataset_version"], body["reward_version"]) == (ours.pk, our_reward.pk)
    assert Run.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"priority": 1001}, "priority"),
        ({"priority": -1001}, "priority"),
        ({"priority": "high"}, "priority"),
        ({"tags": [f"t{i}" for i in range(33)]}, "tags"),
        ({"tags": ["x" * 65]}, "tags"),
        ({"tags": "not-a-list"}, "tags"),
        ({"notes": "n" * 10_001}, "notes"),
        ({"config": ["not", "a", "tree"]}, "config"),
        ({"overrides": "actor.optim.lr=1"}, "overrides"),
        ({"overrides": ["no-equals-sign"]}, "overrides"),
        ({"name": ""}, "name"),
        ({"resources": {"gpus": -1}}, "resources"),
        ({"dataset_version": "abc"}, "dataset_version"),
        ({"dataset_version": 10**30}, "dataset_version"),
        ({"config": {"model": {"path": "a\x00b"}}}, "config.model.path"),
        ({"overrides": ['model.path="a\\0b"']}, "config.model.path"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(member, body, field):
    response = create(member, **body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert field in error["fields"], error
    assert error["message"]
    assert not Run.objects.exists()
    assert not AuditEvent.objects.filter(action="run.create").exists()


def test_malformed_json_is_a_400(member):
    response = member.post("/api/runs/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert not Run.objects.exists()


# --- who sees and does what ---------------------------------------------------------------


def test_viewers_cannot_create_runs_and_outsiders_cannot_find_the_project(world):
    response = create(world.client("viewer"))
    assert response.status_code == 403
    assert "member role" in response.json()["error"]["message"]
    assert create(world.client("outsider")).status_code == 404
    assert create(world.client("member"), project="no-such").status_code == 404
    assert create(world.client(None)).status_code in (401, 403)
    assert Run.objects.count() == 0


def test_outsiders_get_404_on_detail_and_see_no_runs_in_lists(world, run):
    outsider = world.client("outsider")
    assert outsider.get(f"/api/runs/{run['id']}/").status_code == 404
    assert outsider.get("/api/runs/").json()["results"] == []
    assert outsider.get("/api/runs/?project=alpha").json()["results"] == []
    for verb in ("cancel", "resume", "clone", "priority"):
        response = outsider.post(f"/api/runs/{run['id']}/{verb}/", {"priority": 1}, format="json")
        assert response.status_code == 404
    assert outsider.patch(f"/api/runs/{run['id']}/", {"name": "x"}, format="json").status_code == (
        404
    )
    viewer = world.client("viewer")
    assert [r["id"] for r in viewer.get("/api/runs/").json()["results"]] == [run["id"]]
    assert viewer.get(f"/api/runs/{run['id']}/").status_code == 200


@pytest.mark.parametrize("verb", ["cancel", "resume", "clone", "priority"])
def test_viewers_cannot_act_on_runs(world, run, verb):
    response = world.client("viewer").post(
        f"/api/runs/{run['id']}/{verb}/", {"priority": 1}, format="json"
    )
    assert response.status_code == 403
    assert Run.objects.count() == 1
    assert Run.objects.get().status == RunStatus.QUEUED


def test_lists_filter_by_project_status_tag_and_name(world, member):
    a = create(member, name="lr sweep a", tags=["sweep"], priority=1).json()
    b = create(member, name="lr sweep b", tags=["sweep", "best"], priority=9).json()
    c = create(member, name="baseline").json()
    set_status(c["id"], RunStatus.FAILED)

    def ids(query: str) -> list[int]:
        response = member.get(f"/api/runs/?{query}")
        assert response.status_code == 200, response.json()
        return [r["id"] for r in response.json()["results"]]

    assert ids("project=alpha") == [c["id"], b["id"], a["id"]]
    assert ids("project=other") == []
    assert ids("status=failed") == [c["id"]]
    assert ids("status=queued&status=failed") == [c["id"], b["id"], a["id"]]
    assert ids("tag=best") == [b["id"]]
    assert ids("search=SWEEP&ordering=-priority") == [b["id"], a["id"]]
    assert ids("ordering=name") == [c["id"], a["id"], b["id"]]
    assert member.get("/api/runs/?status=exploded").status_code == 400
    assert "config" not in member.get("/api/runs/").json()["results"][0]


# --- editing, cloning ---------------------------------------------------------------------


def test_the_config_is_immutable_through_patch(world, member, run):
    response = member.patch(
        f"/api/runs/{run['id']}/",
        {"config": {"actor": {"optim": {"lr": 1}}}, "name": "renamed"},
        format="json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert "config" in error["fields"]
    assert "Clone the run" in error["message"]
    stored = Run.objects.get(pk=run["id"])
    assert stored.config == run["config"]
    assert stored.name == "r1"  # nothing partially applied


def test_patch_changes_name_notes_tags_and_priority(world, member, run):
    response = member.patch(
        f"/api/runs/{run['id']}/",
        {"name": "renamed", "notes": "better", "tags": ["a"], "priority": -3},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["name"], body["notes"], body["tags"], body["priority"]) == (
        "renamed",
        "better",
        ["a"],
        -3,
    )
    assert AuditEvent.objects.filter(action="run.update", actor=world.member).exists()
    too_many = member.patch(
        f"/api/runs/{run['id']}/", {"tags": [str(i) for i in range(40)]}, format="json"
    )
    assert too_many.status_code == 400
    assert member.put(f"/api/runs/{run['id']}/", {"name": "x"}, format="json").status_code == 405


def test_clone_keeps_the_parent_and_applies_edits(world, member, run):
    response = member.post(
        f"/api/runs/{run['id']}/clone/",
        {
            "name": "lower lr",
            "config": {"rollout": {"temperature": 0.7}},
            "overrides": ["actor.optim.lr=1e-6"],
            "priority": 3,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    clone = response.json()
    assert clone["parent"] == run["id"]
    assert clone["status"] == "queued"
    assert (clone["name"], clone["priority"]) == ("lower lr", 3)
    assert clone["config"]["actor"]["optim"]["lr"] == 1e-6
    assert clone["config"]["rollout"]["temperature"] == 0.7
    # Everything not edited is the parent's.
    assert clone["config"]["data"] == run["config"]["data"]
    assert clone["config"]["rollout"]["n"] == run["config"]["rollout"]["n"]
    assert clone["preset"] == run["preset"]
    assert Run.objects.get(pk=run["id"]).config == run["config"]  # the parent is untouched
    assert AuditEvent.objects.filter(action="run.clone", object_id=str(clone["id"])).exists()
    assert clone["status_history"][0]["reason"] == f"cloned from run {run['id']}"


def test_a_clone_without_edits_copies_name_and_resources(member, run):
    Run.objects.filter(pk=run["id"]).update(resources={"cpus": 3, "gpus": 0, "memory_gb": 1})
    clone = member.post(f"/api/runs/{run['id']}/clone/", {}, format="json").json()
    assert clone["name"] == "r1 (clone)"
    assert clone["resources"] == {"cpus": 3.0, "gpus": 0.0, "memory_gb": 1.0}
    assert clone["config"] == run["config"]


def test_a_clone_with_a_bad_edit_is_rejected_by_field(member, run):
    response = member.post(
        f"/api/runs/{run['id']}/clone/", {"overrides": ["rollout.top_p=2"]}, format="json"
    )
    assert response.status_code == 400
    assert "config.rollout.top_p" in response.json()["error"]["fields"]
    assert Run.objects.count() == 1


# --- cancel, resume, priority -------------------------------------------------------------


def test_cancelling_a_queued_run_cancels_it_at_once(world, member, run):
    response = member.post(f"/api/runs/{run['id']}/cancel/", {"reason": "wrong lr"}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "cancelled"
    assert body["finished_at"] is not None
    assert body["status_history"][-1] == {
        **body["status_history"][-1],
        "from_status": "queued",
        "to_status": "cancelled",
        "reason": "wrong lr",
        "actor": "member",
    }
    assert AuditEvent.objects.filter(action="run.cancel", actor=world.member).count() == 1


@pytest.mark.parametrize("status", [RunStatus.STARTING, RunStatus.RUNNING])
def test_cancelling_a_started_run_asks_its_job_to_stop(member, run, status):
    set_status(run["id"], status)
    response = member.post(f"/api/runs/{run['id']}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelling"
    again = member.post(f"/api/runs/{run['id']}/cancel/")
    assert again.status_code == 200  # asking twice is harmless
    assert AuditEvent.objects.filter(action="run.cancel").count() == 1
    assert RunStatusChange.objects.filter(run_id=run["id"], to_status="cancelling").count() == 1


@pytest.mark.parametrize("status", [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED])
def test_cancelling_a_finished_run_is_a_conflict(member, run, status):
    set_status(run["id"], status)
    response = member.post(f"/api/runs/{run['id']}/cancel/")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict"
    assert f"already {status.value}" in error["message"]
    assert Run.objects.get(pk=run["id"]).status == status


@pytest.mark.parametrize("status", [RunStatus.FAILED, RunStatus.CANCELLED])
def test_resuming_a_failed_or_cancelled_run_queues_it_again(world, member, run, status):
    Run.objects.filter(pk=run["id"]).update(status=status, finished_at="2026-01-01T00:00:00Z")
    response = member.post(f"/api/runs/{run['id']}/resume/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "queued"
    assert body["finished_at"] is None
    assert body["status_history"][-1]["from_status"] == status.value
    assert AuditEvent.objects.filter(action="run.resume", actor=world.member).exists()


@pytest.mark.parametrize(
    "status", [RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.CANCELLING, RunStatus.SUCCEEDED]
)
def test_resuming_a_run_that_did_not_fail_or_stop_is_a_conflict(member, run, status):
    set_status(run["id"], status)
    response = member.post(f"/api/runs/{run['id']}/resume/")
    assert response.status_code == 409
    assert "only failed or cancelled runs can be resumed" in response.json()["error"]["message"]
    assert not AuditEvent.objects.filter(action="run.resume").exists()


def test_priority_changes_are_bounded_and_audited(world, member, run):
    response = member.post(f"/api/runs/{run['id']}/priority/", {"priority": 42}, format="json")
    assert response.status_code == 200
    assert response.json()["priority"] == 42
    event = AuditEvent.objects.get(action="run.priority")
    assert event.detail == {"previous": 0, "priority": 42}
    for bad in ({"priority": 5000}, {}, {"priority": None}):
        response = member.post(f"/api/runs/{run['id']}/priority/", bad, format="json")
        assert response.status_code == 400
        assert "priority" in response.json()["error"]["fields"]
    assert Run.objects.get(pk=run["id"]).priority == 42


def test_status_history_records_every_change_with_its_actor(world, member, run):
    run_id = run["id"]
    assert lifecycle.transition(run_id, {RunStatus.QUEUED}, RunStatus.STARTING, "launching")
    assert lifecycle.transition(run_id, {RunStatus.STARTING}, RunStatus.RUNNING, "ray: RUNNING")
    assert lifecycle.transition(
        run_id, {RunStatus.RUNNING}, RunStatus.FAILED, "trainer exited 1", last_error="OOM"
    )
    member.post(f"/api/runs/{run_id}/resume/")
    body = member.get(f"/api/runs/{run_id}/").json()
    steps = [(h["from_status"], h["to_status"], h["actor"]) for h in body["status_history"]]
    assert steps == [
        ("", "queued", "member"),
        ("queued", "starting", None),
        ("starting", "running", None),
        ("running", "failed", None),
        ("failed", "queued", "member"),
    ]
    assert body["last_error"] == "OOM"
    assert body["started_at"] is not None
    assert body["attempts"] == []
    assert body["status_reason"] == "resumed by user"


# --- the state machine --------------------------------------------------------------------


def test_transition_refuses_moves_the_state_machine_does_not_have(run):
    with pytest.raises(ValueError, match="succeeded"):
        lifecycle.transition(run["id"], {RunStatus.SUCCEEDED}, RunStatus.QUEUED)
    with pytest.raises(ValueError, match="no transition queued -> running"):
        lifecycle.transition(run["id"], {RunStatus.QUEUED}, RunStatus.RUNNING)


def test_a_stale_transition_changes_nothing_and_records_nothing(run):
    before = RunStatusChange.objects.count()
    assert not lifecycle.transition(run["id"], {RunStatus.RUNNING}, RunStatus.SUCCEEDED)
    assert Run.objects.get(pk=run["id"]).status == RunStatus.QUEUED
    assert RunStatusChange.objects.count() == before


@pytest.mark.django_db(transaction=True)
def test_two_racing_transitions_cannot_both_win(world):
    """A worker starting the run and a user cancelling it, released at the same instant,
    on separate database connections: exactly one wins, every time."""
    for _ in range(10):
        run = Run.objects.create(
            project=world.project, name="race", config={}, created_by=world.member
        )
        barrier = threading.Barrier(4)
        results: dict[str, bool] = {}

        def attempt(
            name: str,
            new: RunStatus,
            run_id: int = run.pk,
            barrier: threading.Barrier = barrier,
            results: dict[str, bool] = results,
        ) -> None:
            try:
                barrier.wait()
                results[name] = lifecycle.transition(run_id, {RunStatus.QUEUED}, new, name)
            finally:
                connection.close()

        threads = [
            threading.Thread(target=attempt, args=(f"start-{i}", RunStatus.STARTING))
            for i in range(2)
        ] + [
            threading.Thread(target=attempt, args=(f"cancel-{i}", RunStatus.CANCELLED))
            for i in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        winners = [name for name, won in results.items() if won]
        assert len(results) == 4
        assert len(winners) == 1, results
        run.refresh_from_db()
        changes = list(RunStatusChange.objects.filter(run=run))
        assert [(c.from_status, c.to_status, c.reason) for c in changes] == [
            ("queued", run.status, winners[0])
        ]


# --- config schema, presets and validation ------------------------------------------------


def test_the_config_schema_is_served_to_signed_in_users(world):
    response = world.client("outsider").get("/api/config/schema")
    assert response.status_code == 200
    schema = response.json()
    assert schema == RunConfig.model_json_schema()
    assert "actor" in schema["properties"]
    assert APIClient().get("/api/config/schema").status_code in (401, 403)


def test_presets_are_served_fully_resolved(member):
    presets = member.get("/api/config/presets").json()
    assert [p["name"] for p in presets] == sorted(PRESETS)
    by_name = {p["name"]: p["config"] for p in presets}
    assert by_name["ppo-gae"] == load_config(preset="ppo-gae").model_dump(mode="json")
    assert by_name["ppo-gae"]["algorithm"]["adv_estimator"] == "gae"


def test_validate_resolves_a_config_or_lists_its_errors_without_creating_a_run(member):
    ok = member.post(
        "/api/config/validate",
        {"preset": "dapo", "overrides": ["actor_rollout_ref.rollout.n=4"]},
        format="json",
    ).json()
    assert ok["valid"] is True
    assert ok["config"]["rollout"]["n"] == 4
    assert ok["config"]["actor"]["clip_ratio_high"] == 0.28
    bad = member.post(
        "/api/config/validate",
        {"config": {"actor": {"optim": {"lr": 0}}, "rollout": {"top_p": 5}}},
        format="json",
    ).json()
    assert bad["valid"] is False
    assert set(bad["errors"]) == {"config.actor.optim.lr", "config.rollout.top_p"}
    response = member.post("/api/config/validate", {"config": 3}, format="json")
    assert response.status_code == 400
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"config": {"reward": {"executor": "inprocess"}}},
        {"overrides": ["reward.executor=inprocess"]},
    ],
    ids=["tree", "override"],
)
def test_a_run_whose_reward_would_run_in_process_is_refused(member, body):
    response = create(member, **body)
    assert response.status_code == 400
    message = response.json()["error"]["fields"]["config.reward.executor"][0]
    assert "unsandboxed" in message and "set it to 'sandbox'" in message
    assert not Run.objects.exists()


def test_a_run_sandboxes_its_reward_by_default(member):
    response = create(member)
    assert response.status_code == 201
    assert response.json()["config"]["reward"]["executor"] == "sandbox"


def test_a_runs_reward_error_rate_is_the_share_of_rows_whose_reward_failed(member):
    from studio.telemetry.models import MetricPoint

    failing = create(member, preset="grpo-tiny-arith").json()["id"]
    healthy = create(member, preset="grpo-tiny-arith").json()["id"]
    fresh = create(member, preset="grpo-tiny-arith").json()["id"]
    points = [(failing, 1, 0.0, False), (failing, 2, 0.5, False), (failing, 3, 1.0, True)]
    points += [(healthy, 1, 0.0, False)]
    MetricPoint.objects.bulk_create(
        MetricPoint(
            run_id=run, attempt=1, seq=step, step=step, key="reward/error_rate", value=value,
            superseded=superseded,
        )
        for run, step, value, superseded in points
    )  # fmt: skip
    listed = {r["id"]: r["reward_error_rate"] for r in member.get("/api/runs/").json()["results"]}
    assert (listed[failing], listed[healthy], listed[fresh]) == (0.25, 0.0, None)
    assert member.get(f"/api/runs/{failing}/").json()["reward_error_rate"] == 0.25


def test_runs_can_be_listed_by_whether_they_saved_a_checkpoint(member):
    from studio.runs.models import Checkpoint

    saved = create(member, preset="grpo-tiny-arith").json()["id"]
    unsaved = create(member, preset="grpo-tiny-arith").json()["id"]
    Checkpoint.objects.create(run_id=saved, attempt=1, step=2, uri="/nowhere/step_2")

    def listed(flag: str) -> set[int]:
        return {r["id"] for r in member.get(f"/api/runs/?has_checkpoint={flag}").json()["results"]}

    assert (listed("true"), listed("false")) == ({saved}, {unsaved})
