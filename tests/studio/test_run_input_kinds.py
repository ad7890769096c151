"""The critic's model and a saved LoRA adapter are run inputs like the others: chosen by id
among the project's models, stored as references in `critic.model.path` and
`actor.lora.adapter_path`, kept by a clone, resolved by the launcher, shown and reported;
verl's tool and interaction files are refused naming the config fields that replace them."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from studio.datasets.models import DatasetVersion
from studio.model_registry.models import ModelKind, RegisteredModel
from studio.model_registry.services import add_model_record
from studio.reports.data import report_runs
from studio.runs.folders import checkpoint_dir
from studio.runs.launch import claim, trainer_config
from studio.runs.models import Checkpoint, Run
from tests.studio.conftest import World, write_model_folder

GAE = {"algorithm": {"adv_estimator": "gae"}}
LORA = {"actor": {"lora": {"rank": 4, "alpha": 8.0}}}


def create(client: APIClient, **body: Any):
    return client.post("/api/runs/", {"project": "alpha", "name": "r", **body}, format="json")


def server_model(
    world: World, root: Path, name: str, vocab: dict[str, int] | None = None, project=None
) -> RegisteredModel:
    folder = write_model_folder(root / name)
    if vocab is not None:
        tokenizer = {"model": {"type": "BPE", "vocab": vocab}, "added_tokens": []}
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    return add_model_record(
        project or world.project,
        world.owner,
        ModelKind.SERVER,
        name=name,
        root=str(root),
        relative_path=name,
    )


@pytest.fixture
def roots(settings, tmp_path: Path) -> Path:
    root = tmp_path / "models"
    root.mkdir()
    settings.RLSTUDIO_MODEL_ROOTS = [str(root)]
    return root


# --- the critic's model -------------------------------------------------------------------


def test_a_critic_model_is_chosen_by_id_kept_by_a_clone_and_resolved_at_launch(
    world, member, version, roots
):
    critic = server_model(world, roots, "critic")
    theirs = server_model(world, roots, "theirs", project=world.other_project)

    refused = create(member, dataset_version=version.pk, config=GAE, critic_model=theirs.pk)
    assert refused.status_code == 400
    assert refused.json()["error"]["fields"]["critic_model"] == [
        f"No model {theirs.pk} in project 'alpha'."
    ]

    response = create(member, dataset_version=version.pk, config=GAE, critic_model=critic.pk)
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["config"]["critic"]["model"]["path"] == f"resource:model/{critic.pk}"
    assert run["inputs"]["critic_model"] == {"id": critic.pk, "name": "critic", "kind": "server"}

    clone = member.post(f"/api/runs/{run['id']}/clone/", {}, format="json")
    assert clone.status_code == 201, clone.json()
    assert clone.json()["config"]["critic"]["model"]["path"] == f"resource:model/{critic.pk}"

    attempt = claim(run["id"])
    assert attempt is not None
    tree = trainer_config(Run.objects.get(pk=run["id"]), attempt)
    assert tree["critic"]["model"]["path"] == str(roots / "critic")
    (reported,) = report_runs([Run.objects.get(pk=run["id"])])
    assert reported["inputs"]["Critic model"] == "critic (server)"


def test_without_a_critic_model_the_critic_starts_from_the_runs_model(world, member, version):
    run = create(member, dataset_version=version.pk, config=GAE).json()
    assert run["config"]["critic"]["model"]["path"] is None
    assert run["inputs"]["critic_model"] is None
    # Naming the run's own model is the same choice, stored the same way.
    same = create(member, dataset_version=version.pk, config=GAE, critic_model=run["model"])
    assert same.status_code == 201, same.json()
    assert same.json()["config"]["critic"]["model"]["path"] is None


def test_a_critic_model_for_an_estimator_without_a_critic_is_refused_and_a_clone_drops_it(
    world, member, version, roots
):
    critic = server_model(world, roots, "critic")
    refused = create(member, dataset_version=version.pk, critic_model=critic.pk)  # grpo
    assert refused.status_code == 400
    [message] = refused.json()["error"]["fields"]["critic_model"]
    assert "adv_estimator='grpo' trains no critic" in message and "gae" in message

    run = create(member, dataset_version=version.pk, config=GAE, critic_model=critic.pk).json()
    grpo = {"config": {"algorithm": {"adv_estimator": "grpo"}}}
    clone = member.post(f"/api/runs/{run['id']}/clone/", grpo, format="json")
    assert clone.status_code == 201, clone.json()
    assert clone.json()["config"]["critic"]["model"]["path"] is None


def test_a_critic_model_with_an_unknown_estimator_gets_the_configs_error(
    world, member, version, roots
):
    critic = server_model(world, roots, "critic")
    unknown = {"algorithm": {"adv_estimator": "nope"}}
    refused = create(member, dataset_version=version.pk, config=unknown, critic_model=critic.pk)
    assert refused.status_code == 400
    assert "config.algorithm.adv_estimator" in refused.json()["error"]["fields"]


def test_a_critic_model_with_another_vocabulary_or_role_is_refused(world, member, version, roots):
    actor = server_model(world, roots, "actor", vocab={"a": 0, "b": 1})
    same = server_model(world, roots, "same", vocab={"a": 0, "b": 1})
    other = server_model(world, roots, "other", vocab={"b": 0, "a": 1})
    body = {"dataset_version": version.pk, "config": GAE, "model": actor.pk}

    assert create(member, **body, critic_model=same.pk).status_code == 201
    refused = create(member, **body, critic_model=other.pk)
    assert refused.status_code == 400
    [message] = refused.json()["error"]["fields"]["critic_model"]
    assert "another tokenizer vocabulary" in message and "'actor'" in message

    reward = RegisteredModel.objects.get(
        pk=member.post(
            "/api/models/",
            {"project": "alpha", "folder": _offered(member, "demo-reward-model")},
            format="json",
        ).json()["id"]
    )
    refused = create(member, **body, critic_model=reward.pk)
    assert refused.status_code == 400
    assert "choose a causal LM" in refused.json()["error"]["fields"]["critic_model"][0]


def _offered(member: APIClient, name: str) -> str:
    offered = member.get("/api/models/available/?project=alpha").json()
    return next(o["folder"] for o in offered if o["name"] == name)


# --- a saved LoRA adapter -----------------------------------------------------------------


def _safetensors(path: Path, tensors: dict[str, list[int]]) -> None:
    header = json.dumps(
        {k: {"dtype": "F32", "shape": s, "data_offsets": [0, 0]} for k, s in tensors.items()}
    ).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header)


def adapter_of_a_lora_run(
    world: World, member: APIClient, version: DatasetVersion, rank: int = 4, alpha: float = 8.0
) -> tuple[Run, RegisteredModel]:
    """A LoRA run whose final export is peft's adapter folder, added as a model."""
    body = {"dataset_version": version.pk, "config": LORA, "name": "lora"}
    run = Run.objects.get(pk=create(member, **body).json()["id"])
    folder = Path(checkpoint_dir(run.pk))
    (folder / "step_2").mkdir(parents=True)
    export = folder / "hf"
    export.mkdir()
    (export / "adapter_config.json").write_text(
        json.dumps({"r": rank, "lora_alpha": alpha, "target_modules": ["v_proj", "q_proj"]})
    )
    _safetensors(export / "adapter_model.safetensors", {"q_proj.lora_A.weight": [rank, 8]})
    Checkpoint.objects.create(run=run, attempt=1, step=2, uri=str(folder / "step_2"))
    added = member.post(
        "/api/models/", {"project": "alpha", "checkpoint_run": run.pk}, format="json"
    )
    assert added.status_code == 201, added.json()
    return run, RegisteredModel.objects.get(pk=added.json()["id"])


def test_a_lora_runs_adapter_export_is_a_model_with_the_adapter_role(world, member, version, media):
    _, adapter = adapter_of_a_lora_run(world, member, version)
    assert adapter.role == "adapter"
    assert adapter.info["adapter"] == {
        "r": 4,
        "lora_alpha": 8.0,
        "target_modules": ["q_proj", "v_proj"],
    }
    listed = member.get("/api/models/?project=alpha&role=adapter").json()["results"]
    assert [m["id"] for m in listed] == [adapter.pk]
    # An adapter is not a model to train or score with.
    refused = create(member, dataset_version=version.pk, model=adapter.pk)
    assert refused.status_code == 400 and "model" in refused.json()["error"]["fields"]


def test_an_adapter_is_chosen_by_id_sets_the_lora_shape_and_is_resolved_at_launch(
    world, member, version, media
):
    lora_run, adapter = adapter_of_a_lora_run(world, member, version)
    response = create(member, dataset_version=version.pk, lora_adapter=adapter.pk)
    assert response.status_code == 201, response.json()
    run = response.json()
    lora = run["config"]["actor"]["lora"]
    assert lora["adapter_path"] == f"resource:model/{adapter.pk}"
    assert (lora["rank"], lora["alpha"], lora["target_modules"]) == (4, 8.0, ["q_proj", "v_proj"])
    assert run["inputs"]["lora_adapter"]["id"] == adapter.pk

    clone = member.post(f"/api/runs/{run['id']}/clone/", {}, format="json")
    assert clone.status_code == 201, clone.json()
    assert clone.json()["config"]["actor"]["lora"]["adapter_path"] == f"resource:model/{adapter.pk}"

    attempt = claim(run["id"])
    assert attempt is not None
    tree = trainer_config(Run.objects.get(pk=run["id"]), attempt)
    assert tree["actor"]["lora"]["adapter_path"] == str(Path(checkpoint_dir(lora_run.pk)) / "hf")
    (reported,) = report_runs([Run.objects.get(pk=run["id"])])
    assert reported["inputs"]["LoRA adapter"] == f"{adapter.name} (checkpoint)"


def test_an_adapter_of_another_shape_model_or_project_is_refused(
    world, member, version, media, roots
):
    _, adapter = adapter_of_a_lora_run(world, member, version)
    body = {"dataset_version": version.pk, "lora_adapter": adapter.pk}

    other_rank = create(member, **body, config={"actor": {"lora": {"rank": 8}}})
    assert other_rank.status_code == 400
    [message] = other_rank.json()["error"]["fields"]["lora_adapter"]
    assert "rank 4 and alpha 8.0" in message and "actor.lora.rank=8" in message

    other_model = server_model(world, roots, "other")
    refused = create(member, **body, model=other_model.pk)
    assert refused.status_code == 400
    assert (
        "was trained on model 'demo-model'" in refused.json()["error"]["fields"]["lora_adapter"][0]
    )

    policy = create(member, dataset_version=version.pk, lora_adapter=other_model.pk)
    assert policy.status_code == 400
    assert "choose a LoRA adapter" in policy.json()["error"]["fields"]["lora_adapter"][0]

    theirs = server_model(world, roots, "theirs", project=world.other_project)
    refused = create(member, dataset_version=version.pk, lora_adapter=theirs.pk)
    assert refused.json()["error"]["fields"]["lora_adapter"] == [
        f"No model {theirs.pk} in project 'alpha'."
    ]


# --- paths in requests --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "fields"),
    [
        ("tool_config_path", ["rollout.multi_turn.environment", "tool_timeout_s", "search_topk"]),
        ("interaction_config_path", ["rollout.multi_turn.interaction", "max_user_turns"]),
    ],
)
def test_a_verl_tool_or_interaction_file_is_refused_naming_the_fields_to_set(
    member, tmp_path, key, fields
):
    override = f"actor_rollout_ref.rollout.multi_turn.{key}={tmp_path / 'x.yaml'}"
    response = member.post("/api/config/validate", {"overrides": [override]}, format="json")
    [message] = response.json()["errors"]["overrides"]
    assert "a request may not do" in message
    assert all(field in message for field in fields), message


@pytest.mark.parametrize(
    ("place", "request_field"),
    [("critic.model.path", "critic_model"), ("actor.lora.adapter_path", "lora_adapter")],
)
def test_the_path_fields_are_refused_naming_the_request_field(
    member, version, place, request_field
):
    response = create(member, dataset_version=version.pk, overrides=[f"{place}=/srv/x"])
    assert response.status_code == 400
    assert f"`{request_field}`" in json.dumps(response.json())
