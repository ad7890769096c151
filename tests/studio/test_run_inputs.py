"""A run is made of the project's resources: path-bearing config fields are refused over
the API (derived from the schema's path types), references are checked for the run's
project, held-out rows never train, and only the launcher turns references into paths."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from rest_framework.test import APIClient

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from studio.model_registry.models import RegisteredModel
from studio.references.run_inputs import REF
from studio.rewards.models import RewardFunction, RewardVersion
from studio.runs.bootstrap import bootstrap_secret
from studio.runs.launch import claim, trainer_config
from studio.runs.models import Run
from studio.runs.tokens import issue_ingest_token
from tests.studio.conftest import World, write_model_folder
from tests.verl_data import counting_answers, parquet_bytes, verl_rows
from trainer.config.paths import EVERY_ITEM, path_fields
from trainer.config.verl import VERL_KEY_MAP

PATHS = path_fields()


def upload(
    world: World, project: Any, name: str, rows: list[dict[str, Any]], tmp: Path
) -> DatasetVersion:
    source = tmp / f"{project.slug}-{name}.parquet"
    source.write_bytes(parquet_bytes(rows))
    dataset, _ = Dataset.objects.get_or_create(
        project=project, name=name, defaults={"created_by": world.owner}
    )
    return add_version(
        dataset, source, "rows.parquet", ColumnMapping(), message="", user=world.owner
    )


@pytest.fixture
def member(world: World) -> APIClient:
    return world.client("member")


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return tmp_path


@pytest.fixture
def version(world: World, media: Path) -> DatasetVersion:
    return upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)


def create(client: APIClient, **body: Any):
    return client.post("/api/runs/", {"project": "alpha", "name": "r", **body}, format="json")


def tree_setting(steps: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A partial config tree that sets the field at `steps` (into a list's first item)."""
    *parents, last = steps
    node: dict[str, Any] = {last: [value] if last.endswith("_files") else value}
    for step in reversed(parents):
        node = [node] if step == EVERY_ITEM else {step: node}  # type: ignore[assignment]
    return node


def place_of(steps: tuple[str, ...]) -> str:
    return ".".join("0" if s == EVERY_ITEM else s for s in steps)


# --- no request names a path ---------------------------------------------------------------


@pytest.mark.parametrize("path_field", PATHS, ids=[f.dotted for f in PATHS])
@pytest.mark.parametrize("target", ["/etc/passwd", "http://127.0.0.1:8265/api/jobs/"])
def test_every_path_field_in_a_config_tree_is_refused_and_nothing_is_stored(
    world, member, version, path_field, target
):
    response = create(
        member, dataset_version=version.pk, config=tree_setting(path_field.steps, target)
    )
    assert response.status_code == 400, response.json()
    fields = response.json()["error"]["fields"]
    [message] = fields[f"config.{place_of(path_field.steps)}"]
    assert "a request may not do" in message
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "path_field", [f for f in PATHS if EVERY_ITEM not in f.steps], ids=lambda f: f.dotted
)
def test_every_path_field_in_an_override_is_refused(world, member, version, path_field):
    value = "[/srv/other-tenant/train.parquet]" if path_field.many else "/srv/x"
    response = create(
        member, dataset_version=version.pk, overrides=[f"{path_field.dotted}={value}"]
    )
    assert response.status_code == 400
    assert f"config.{path_field.dotted}" in response.json()["error"]["fields"]
    assert not Run.objects.exists()


VERL_PATH_KEYS = sorted(k for k, ours in VERL_KEY_MAP.items() if ours in {f.dotted for f in PATHS})


@pytest.mark.parametrize("verl_key", VERL_PATH_KEYS)
def test_verl_overrides_that_name_paths_are_refused(world, member, version, verl_key):
    value = "[/srv/x.parquet]" if verl_key.endswith("_files") else "/srv/x"
    response = create(member, dataset_version=version.pk, overrides=[f"{verl_key}={value}"])
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_a_verl_tool_config_path_is_refused_before_any_file_is_read(member, tmp_path):
    response = member.post(
        "/api/config/validate",
        {"overrides": [f"actor_rollout_ref.rollout.multi_turn.tool_config_path={tmp_path / 'no'}"]},
        format="json",
    )
    [message] = response.json()["errors"]["overrides"]
    assert "tool_config_path" in message and "a request may not do" in message
    assert "cannot read" not in message  # refused, not attempted


def test_a_clone_may_not_set_a_path_either(world, member, version):
    parent = create(member, dataset_version=version.pk).json()
    response = member.post(
        f"/api/runs/{parent['id']}/clone/",
        {"overrides": ["logging.jsonl_path=/tmp/x"]},
        format="json",
    )
    assert response.status_code == 400
    assert "config.logging.jsonl_path" in response.json()["error"]["fields"]
    assert Run.objects.count() == 1


def test_the_legitimate_request_succeeds_and_stores_references_only(world, member, version):
    response = create(member, dataset_version=version.pk, overrides=["trainer.total_steps=3"])
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    for path_field in PATHS:
        values = [v for v in _values(run.config, path_field.steps) if v is not None]
        for value in values:
            items = value if isinstance(value, list) else [value]
            assert all(str(item).startswith(REF) for item in items), (path_field.dotted, value)


def _values(tree: Any, steps: tuple[str, ...]) -> list[Any]:
    if not steps:
        return [tree]
    if steps[0] == EVERY_ITEM:
        return [v for item in tree for v in _values(item, steps[1:])]
    return _values(tree.get(steps[0]), steps[1:]) if isinstance(tree, dict) else []


# --- references belong to the run's project ----------------------------------------------


def test_a_run_cannot_reference_another_projects_resources(world, member, version, media):
    theirs = upload(world, world.other_project, "secret", verl_rows(counting_answers(12)), media)
    function = RewardFunction.objects.create(
        project=world.other_project, name="f", created_by=world.outsider
    )
    reward = RewardVersion.objects.create(
        function=function, number=1, code="x", author=world.outsider
    )
    model = RegisteredModel.objects.create(
        project=world.other_project,
        name="m",
        kind="demo",
        role="policy",
        relative_path="demo-model",
        created_by=world.outsider,
    )
    attempts = {
        "dataset_version": {"dataset_version": theirs.pk},
        "dataset": {"dataset": theirs.dataset_id},
        "reward_version": {"dataset_version": version.pk, "reward_version": reward.pk},
        "model": {"dataset_version": version.pk, "model": model.pk},
        "validation_version": {
            "dataset_version": version.pk,
            "validation": "dataset_version",
            "validation_version": theirs.pk,
        },
        "reward_models.reward.model.path": {
            "dataset_version": version.pk,
            "reward_models": {"reward.model.path": model.pk},
        },
    }
    for field_name, body in attempts.items():
        response = create(member, **body)
        assert response.status_code == 400, (field_name, response.json())
        [message] = response.json()["error"]["fields"][field_name]
        # The same words as for an id that exists nowhere: nothing leaks.
        nowhere = create(member, **{**body, **_replace_id(body, 10**9)}).json()["error"]["fields"][
            field_name
        ]
        assert message.replace(str(_the_id(body)), "N") == nowhere[0].replace(str(10**9), "N")
    assert not Run.objects.exists()


def _the_id(body: dict[str, Any]) -> int:
    last = list(body.values())[-1]
    return int(next(iter(last.values()))) if isinstance(last, dict) else int(last)


def _replace_id(body: dict[str, Any], new: int) -> dict[str, Any]:
    key = list(body)[-1]
    value = body[key]
    return {key: {k: new for k in value} if isinstance(value, dict) else new}


def test_a_dataset_without_a_version_means_its_latest_version_recorded_exactly(
    world, member, version, media
):
    newer = upload(world, world.project, "counting", verl_rows(counting_answers(30)), media)
    body = create(member, dataset=version.dataset_id).json()
    assert body["dataset_version"] == newer.pk
    assert body["inputs"]["dataset"] == {
        "dataset": version.dataset_id,
        "name": "counting",
        "version": newer.pk,
        "number": 2,
        "rows": 30,
    }
    assert create(member).json()["error"]["fields"]["dataset"]  # no data chosen: refused


def test_inputs_are_shown_with_the_run(world, member, version):
    body = create(member, dataset_version=version.pk).json()
    inputs = body["inputs"]
    assert inputs["model"]["name"] == "demo-model" and inputs["model"]["kind"] == "demo"
    assert inputs["validation"] == "held_out"
    assert inputs["validation_dataset"]["version"] == version.pk
    assert inputs["reward"] == {
        "function": None,
        "name": "arith by data source",
        "version": None,
        "number": None,
        "kwargs": {},
    }


def test_the_rewards_keyword_arguments_are_shown_with_it(world, member, version):
    config = {"reward": {"function": "gsm8k", "kwargs": {"method": "flexible"}}}
    body = create(member, dataset_version=version.pk, config=config).json()
    assert body["inputs"]["reward"]["name"] == "gsm8k"
    assert body["inputs"]["reward"]["kwargs"] == {"method": "flexible"}
    refused = create(
        member, dataset_version=version.pk, config={"reward": {"kwargs": {"ground_truth": 1}}}
    )
    assert refused.status_code == 400
    assert "one of verl's own arguments" in json.dumps(refused.json())


# --- held-out rows never train -----------------------------------------------------------


def _rows(client: APIClient, run_id: int, split: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/ingest/runs/{run_id}/dataset?split={split}")
    assert response.status_code == 200, response.content[:300]
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return pq.read_table(io.BytesIO(body)).to_pylist()


def _trainer(run_id: int) -> APIClient:
    attempt = claim(run_id)
    assert attempt is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_ingest_token(attempt)}")
    return client


def test_no_held_out_row_is_trained_on(world, member, version):
    run_id = create(member, dataset_version=version.pk).json()["id"]
    trainer = _trainer(run_id)
    train, held = _rows(trainer, run_id, "train"), _rows(trainer, run_id, "val")
    indices = lambda rows: {r["extra_info"]["index"] for r in rows}  # noqa: E731
    assert len(held) == 2  # 10% of 25 rows
    assert not indices(train) & indices(held)
    assert indices(train) | indices(held) == set(range(25))
    # The same rows for another run of the version: chosen by content, not by chance.
    other = create(member, dataset_version=version.pk).json()["id"]
    assert indices(_rows(_trainer(other), other, "val")) == indices(held)


def test_rows_labelled_as_held_out_are_the_validation_rows(world, member, media):
    labels = ["train"] * 8 + ["test"] * 2
    labelled = upload(
        world, world.project, "labelled", verl_rows(counting_answers(10), splits=labels), media
    )
    run_id = create(member, dataset_version=labelled.pk).json()["id"]
    trainer = _trainer(run_id)
    assert [r["extra_info"]["index"] for r in _rows(trainer, run_id, "val")] == [8, 9]
    assert len(_rows(trainer, run_id, "train")) == 8


def test_validation_on_another_version_and_none(world, member, version, media):
    other = upload(world, world.project, "checks", verl_rows(counting_answers(5)), media)
    body = create(
        member,
        dataset_version=version.pk,
        validation="dataset_version",
        validation_version=other.pk,
    ).json()
    trainer = _trainer(body["id"])
    assert len(_rows(trainer, body["id"], "val")) == 5
    assert len(_rows(trainer, body["id"], "train")) == 25  # nothing held out of training
    none = create(member, dataset_version=version.pk, validation="none").json()
    assert Run.objects.get(pk=none["id"]).config["data"]["val_files"] == []


# --- only the launcher turns references into paths ----------------------------------------


def test_the_launcher_resolves_every_reference_and_writes_no_reference_out(
    world, member, version, studio_var_dir
):
    run_id = create(member, dataset_version=version.pk).json()["id"]
    attempt = claim(run_id)
    assert attempt is not None
    tree = trainer_config(Run.objects.get(pk=run_id), attempt)
    assert tree["model"]["path"] == str(studio_var_dir / "demo-model")
    assert tree["data"]["train_files"] == [
        f"http://127.0.0.1:8000/api/ingest/runs/{run_id}/dataset?split=train"
    ]
    assert tree["data"]["val_files"] == [
        f"http://127.0.0.1:8000/api/ingest/runs/{run_id}/dataset?split=val"
    ]
    assert tree["checkpoint"]["dir"].endswith(f"run-{run_id}")
    assert tree["logging"]["spool_dir"] == "var/spool" and tree["logging"]["jsonl_path"] is None
    assert REF not in repr(tree)


def test_a_stored_path_in_a_referencing_run_is_refused_at_launch(world, member, version):
    from studio.runs.launch import LaunchRefused

    run_id = create(member, dataset_version=version.pk).json()["id"]
    run = Run.objects.get(pk=run_id)
    run.config["model"]["path"] = "/etc"
    run.save()
    attempt = claim(run_id)
    assert attempt is not None
    with pytest.raises(LaunchRefused, match="holds a path"):
        trainer_config(Run.objects.get(pk=run_id), attempt)


# --- models ------------------------------------------------------------------------------


def test_models_are_added_from_folders_the_server_offers_never_by_path(
    world, member, settings, tmp_path
):
    root = tmp_path / "models"
    write_model_folder(root / "org" / "policy")
    outside = write_model_folder(tmp_path / "elsewhere" / "secret")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    settings.RLSTUDIO_MODEL_ROOTS = [str(root)]
    offered = member.get("/api/models/available/?project=alpha").json()
    names = {o["name"] for o in offered}
    assert "org/policy" in names and "escape" not in names  # no way out of the root
    assert {"demo-model", "demo-reward-model"} <= names
    [folder] = [o["folder"] for o in offered if o["name"] == "org/policy"]
    added = member.post("/api/models/", {"project": "alpha", "folder": folder}, format="json")
    assert added.status_code == 201, added.json()
    assert added.json()["info"]["architecture"] == "LlamaForCausalLM"
    assert added.json()["role"] == "policy"
    refused = member.post(
        "/api/models/", {"project": "alpha", "folder": str(outside)}, format="json"
    )
    assert refused.status_code == 400 and "folder" in refused.json()["error"]["fields"]


def test_a_model_from_another_projects_run_is_refused(world, member):
    theirs = Run.objects.create(
        project=world.other_project, name="x", config={}, created_by=world.outsider
    )
    response = member.post(
        "/api/models/", {"project": "alpha", "checkpoint_run": theirs.pk}, format="json"
    )
    assert response.status_code == 400
    assert "No checkpoint of run" in response.json()["error"]["fields"]["checkpoint_run"][0]


# --- the job's one-time secret -------------------------------------------------------------


def _redeem(run_id: int, secret: str, attempt: int = 1):
    return APIClient().post(
        f"/api/ingest/runs/{run_id}/bootstrap",
        {"attempt": attempt},
        format="json",
        HTTP_AUTHORIZATION=f"Bootstrap {secret}",
    )


def test_the_bootstrap_secret_opens_the_run_once(world, member, version):
    run_id = create(member, dataset_version=version.pk).json()["id"]
    attempt = claim(run_id)
    assert attempt is not None
    secret = bootstrap_secret(attempt)

    first = _redeem(run_id, secret)

    assert first.status_code == 200, first.json()
    body = first.json()
    assert body["token"].startswith("rli_") and body["reward_code"] is None
    assert body["config"]["model"]["path"].endswith("demo-model")
    # The token it handed out works for the run's endpoints...
    trainer = APIClient()
    trainer.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    assert trainer.get(f"/api/ingest/runs/{run_id}/dataset?split=train").status_code == 200
    # ...and the secret, read later from Ray's job list, opens nothing.
    again = _redeem(run_id, secret)
    assert again.status_code == 403
    assert "already used" in again.json()["error"]["message"]


def test_a_wrong_secret_or_a_cancelled_run_gets_nothing(world, member, version):
    run_id = create(member, dataset_version=version.pk).json()["id"]
    attempt = claim(run_id)
    assert attempt is not None
    secret = bootstrap_secret(attempt)
    assert _redeem(run_id, "rlb_guess").status_code == 403
    assert _redeem(run_id, secret, attempt=2).status_code == 403
    member.post(f"/api/runs/{run_id}/cancel/", {}, format="json")
    assert _redeem(run_id, secret).status_code == 403
    # The positive control: a fresh secret of a live attempt works.
    other = create(member, dataset_version=version.pk).json()["id"]
    live = claim(other)
    assert live is not None
    assert _redeem(other, bootstrap_secret(live)).status_code == 200


def test_a_reward_version_reaches_the_trainer_only_through_the_bootstrap(world, member, version):
    function = RewardFunction.objects.create(
        project=world.project, name="f", created_by=world.owner
    )
    code = "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
    code += "    return 1.0\n"
    reward = RewardVersion.objects.create(
        function=function, number=1, code=code, author=world.owner
    )
    run_id = create(member, dataset_version=version.pk, reward_version=reward.pk).json()["id"]
    attempt = claim(run_id)
    assert attempt is not None
    body = _redeem(run_id, bootstrap_secret(attempt)).json()
    assert body["reward_code"] == code
    assert body["config"]["reward"]["function"] == "custom"
    assert body["config"]["reward"]["executor"] == "sandbox"


def test_a_clone_keeps_its_parents_reward_version_or_drops_it_for_the_built_in(
    world, member, version
):
    function = RewardFunction.objects.create(
        project=world.project, name="f", created_by=world.owner
    )
    reward = RewardVersion.objects.create(
        function=function,
        number=1,
        code="def compute_score(*a, **k):\n    return 1.0\n",
        author=world.owner,
    )
    parent = create(member, dataset_version=version.pk, reward_version=reward.pk).json()
    clone = f"/api/runs/{parent['id']}/clone/"
    kept = member.post(clone, {}, format="json").json()
    assert kept["inputs"]["reward"]["version"] == reward.pk
    assert kept["config"]["reward"]["function"] == "custom"

    builtin = member.post(clone, {"builtin_reward": True}, format="json").json()
    assert builtin["inputs"]["reward"]["version"] is None
    assert Run.objects.get(pk=builtin["id"]).reward_version is None
    assert builtin["config"]["reward"]["function"] is None  # by its rows' data source
    assert builtin["config"]["reward"]["custom_path"] is None

    both = member.post(clone, {"builtin_reward": True, "reward_version": reward.pk}, format="json")
    assert both.status_code == 400
    assert "builtin_reward" in both.json()["error"]["fields"]


def test_a_run_that_chose_no_reward_needs_data_a_scorer_knows_or_gets_a_400(
    world, member, version, media
):
    # "counting" rows are the demo's `arith` data: their source chooses the scorer.
    assert create(member, dataset_version=version.pk).status_code == 201
    mine = upload(
        world, world.project, "mine", verl_rows(counting_answers(12), data_source="my_task"), media
    )
    refused = create(member, dataset_version=mine.pk)
    assert refused.status_code == 400
    why = refused.json()["error"]["fields"]["reward_version"][0]
    assert "'my_task' (12 rows)" in why and "mine v1" in why and "Choose a reward" in why
    assert not Run.objects.filter(dataset_version=mine).exists()
    chosen = create(member, dataset_version=mine.pk, overrides=["reward.function=exact_match"])
    assert chosen.status_code == 201, chosen.json()
    # Validation data is checked too.
    on_mine = create(
        member, dataset_version=version.pk, validation="dataset_version", validation_version=mine.pk
    )
    assert "reward_version" in on_mine.json()["error"]["fields"]


def test_a_presets_demo_reward_model_is_the_default_and_can_be_left_out(world, member, version):
    body = create(member, dataset_version=version.pk, preset="ppo-rm-tiny").json()
    [chosen] = body["inputs"]["reward_models"]
    assert (chosen["name"], chosen["place"]) == ("demo-reward-model", "reward.model.path")
    assert Run.objects.get(pk=body["id"]).config["reward"]["model"]["path"] == (
        f"resource:model/{chosen['id']}"
    )
    without = create(member, dataset_version=version.pk, preset="ppo-rm-tiny", reward_models={})
    assert without.json()["inputs"]["reward_models"] == []
    assert Run.objects.get(pk=without.json()["id"]).config["reward"]["model"]["path"] is None
