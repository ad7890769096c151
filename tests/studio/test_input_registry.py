"""The registry of run inputs is the one place a kind of input is declared: a throwaway
kind registered here is requested, checked for the project, stored as a reference,
cloned, resolved at launch, summarised and reported with no other code naming it; and
references are typed values that read back what they write."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from studio.datasets.models import DatasetVersion
from studio.references.choices import one
from studio.references.pickers import EXTENSION, REQUESTS, Picker, Shown, picker_schema
from studio.references.ref_serializers import id_field
from studio.references.reference import MalformedReference, Reference
from studio.references.registry import (
    Choice,
    InputKind,
    Launch,
    RunInputs,
    UnresolvedReference,
    input_kinds,
    registered,
)
from studio.reports.data import report_runs
from studio.runs.launch import claim, trainer_config, trainer_launch
from studio.runs.models import Run
from studio.runs.serializers import RunCloneSerializer, RunCreateSerializer
from tests.studio.conftest import World
from tests.studio.test_run_inputs import create, upload
from tests.verl_data import counting_answers, verl_rows

BUILT_IN_NAMES = [
    "model",
    "training_data",
    "validation",
    "reward",
    "reward_models",
    "critic_model",
    "lora_adapter",
]
GLOSSARY_PLACE = "logging.jsonl_path"  # an optional path field no built-in kind fills
GLOSSARY_ROOT = "/srv/glossaries"


def resolve_glossary(launch: Launch, reference: Reference) -> str:
    versions = DatasetVersion.objects.filter(dataset__project_id=launch.run.project_id)
    if reference.pk is None or not versions.filter(pk=reference.pk).exists():
        raise UnresolvedReference(f"Glossary {reference.pk} is not of this run's project.")
    return f"{GLOSSARY_ROOT}/{reference.pk}.jsonl"


GLOSSARY_PICKER = Picker(
    label="Glossary",
    help="A dataset version whose rows are the glossary.",
    list="/api/datasets/",
    option="{name}",
    unset="(no glossary)",
    shown=Shown("logging.console", among=(True,)),
)


class GlossaryInput(InputKind["DatasetVersion | None"]):
    """A throwaway kind: a dataset version of the project as a glossary. It has no Run
    column: the reference in the stored config is its whole record."""

    name = "glossary"
    resolvers = {"glossary": resolve_glossary}

    def request_fields(self) -> dict[str, serializers.Field]:
        return {"glossary": id_field("A dataset version to use as a glossary.", GLOSSARY_PICKER)}

    def choose(
        self, data: Mapping[str, Any], inherited: DatasetVersion | None, context: Choice
    ) -> DatasetVersion | None:
        if data.get("glossary") is None:
            return inherited
        versions = DatasetVersion.objects.filter(dataset__project=context.project)
        return one(versions, data["glossary"], "glossary", "dataset version", context.project)

    def inherit(self, parent: Run) -> DatasetVersion | None:
        found = Reference.parse_or_none(parent.config["logging"]["jsonl_path"])
        if found is None or found.kind != "glossary" or found.pk is None:
            return None
        return DatasetVersion.objects.get(pk=found.pk)

    def model_fields(self, value: DatasetVersion | None) -> dict[str, Any]:
        return {}

    def references(
        self, value: DatasetVersion | None, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        return {GLOSSARY_PLACE: Reference("glossary", value.pk).text if value else None}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {"glossary": serializers.IntegerField(allow_null=True)}

    def summary(self, run: Run) -> dict[str, Any]:
        value = self.inherit(run)
        return {"glossary": value.pk if value else None}

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        glossary = summary["glossary"]
        return {"Glossary": f"version {glossary}" if glossary else "none"}


@pytest.fixture
def glossary_kind() -> Iterator[InputKind[Any]]:
    with registered(GlossaryInput()) as kind:
        yield kind


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return tmp_path


def test_a_registered_kind_is_walked_through_creation_clone_evaluation_launch_summary_and_report(
    world: World, media: Path, studio_var_dir: Path, glossary_kind: InputKind[Any]
):
    member = world.client("member")
    rows = verl_rows(counting_answers(25))
    version = upload(world, world.project, "counting", rows, media)
    glossary = upload(world, world.project, "glossary", rows, media)
    theirs = upload(world, world.other_project, "theirs", rows, media)

    # The request: the kind's field is in the create and clone requests.
    assert "glossary" in RunCreateSerializer().fields
    assert "glossary" in RunCloneSerializer().fields

    # Creation: checked for the project, stored as a reference.
    refused = create(member, dataset_version=version.pk, glossary=theirs.pk)
    assert refused.status_code == 400
    assert "glossary" in refused.json()["error"]["fields"]
    response = create(member, dataset_version=version.pk, glossary=glossary.pk)
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["config"]["logging"]["jsonl_path"] == f"resource:glossary/{glossary.pk}"

    # The summary every view shows.
    assert run["inputs"]["glossary"] == glossary.pk
    assert member.get(f"/api/runs/{run['id']}/").json()["inputs"]["glossary"] == glossary.pk

    # Clone: the parent's choice is kept.
    clone = member.post(f"/api/runs/{run['id']}/clone/", {}, format="json")
    assert clone.status_code == 201, clone.json()
    assert clone.json()["config"]["logging"]["jsonl_path"] == f"resource:glossary/{glossary.pk}"

    # Evaluation creation: of the run's validation rows, it keeps the run's choice; on a
    # dataset version, it has the kind's own default.
    evaluation = {"project": "alpha", "name": "e", "models": [{"model": run["model"]}]}
    of_run = member.post(
        "/api/evaluations/", {**evaluation, "validation_of_run": run["id"]}, format="json"
    )
    assert of_run.status_code == 201, of_run.json()
    stored = Run.objects.get(pk=of_run.json()["id"]).config["logging"]["jsonl_path"]
    assert stored == f"resource:glossary/{glossary.pk}"
    on_version = member.post(
        "/api/evaluations/", {**evaluation, "dataset_version": version.pk}, format="json"
    )
    assert on_version.status_code == 201, on_version.json()
    assert Run.objects.get(pk=on_version.json()["id"]).config["logging"]["jsonl_path"] is None

    # Launch: the stored reference is resolved by the kind's resolver.
    attempt = claim(run["id"])
    assert attempt is not None
    tree = trainer_config(Run.objects.get(pk=run["id"]), attempt)
    assert tree["logging"]["jsonl_path"] == f"{GLOSSARY_ROOT}/{glossary.pk}.jsonl"

    # The report.
    (reported,) = report_runs([Run.objects.get(pk=run["id"])])
    assert reported["inputs"]["Glossary"] == f"version {glossary.pk}"


def test_a_registered_kind_is_gone_once_its_registration_ends(glossary_kind):
    assert glossary_kind in input_kinds()
    with pytest.raises(ValueError, match="registered already"), registered(GlossaryInput()):
        pass
    names = [kind.name for kind in input_kinds()]
    assert names == [*BUILT_IN_NAMES, "glossary"]


def test_the_built_in_kinds_are_the_registry_without_a_throwaway_one():
    names = [kind.name for kind in input_kinds()]
    assert names == BUILT_IN_NAMES
    assert "glossary" not in RunCreateSerializer().fields


def test_a_registered_kinds_picker_is_in_the_openapi_schema_of_its_request_field(
    glossary_kind: InputKind[Any],
):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    cut = picker_schema(schema)["components"]["schemas"]
    for request in REQUESTS:
        field = schema["components"]["schemas"][request]["properties"]["glossary"]
        assert field["type"] == "integer" and field["nullable"] is True
        assert field[EXTENSION] == {
            "label": "Glossary",
            "help": "A dataset version whose rows are the glossary.",
            "list": "/api/datasets/",
            "where": {},
            "option": "{name}",
            "unset": "(no glossary)",
            "none": "",
            "shown": {"path": "logging.console", "default": True, "in": [True]},
        }
        assert sorted(cut[request]["properties"]) == ["critic_model", "glossary", "lora_adapter"]


def test_every_picker_lists_from_an_endpoint_that_takes_the_project():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for request in REQUESTS:
        pickers = picker_schema(schema)["components"]["schemas"][request]["properties"]
        assert sorted(pickers) == ["critic_model", "lora_adapter"]
        for name, field in pickers.items():
            listing = schema["paths"][field[EXTENSION]["list"]]["get"]
            query = {p["name"] for p in listing["parameters"] if p["in"] == "query"}
            assert "project" in query, f"{name} lists from {field[EXTENSION]['list']}"


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("resource:model/4", Reference("model", 4)),
        ("resource:dataset-version/12/train", Reference("dataset-version", 12, "train")),
        ("resource:dataset-version/12/held-out", Reference("dataset-version", 12, "held-out")),
        ("resource:run/checkpoint.dir", Reference("run", None, "checkpoint.dir")),
    ],
)
def test_a_reference_reads_back_what_it_writes(text: str, reference: Reference):
    assert Reference.parse(text) == reference
    assert reference.text == text


@pytest.mark.parametrize("text", ["var/demo-model", "resource:", "resource:model", None, 4])
def test_anything_else_is_not_a_reference(text: Any):
    with pytest.raises(MalformedReference):
        Reference.parse(text)
    assert Reference.parse_or_none(text) is None


def test_launch_serves_the_reward_code_its_stored_reference_names(world: World, media: Path):
    from studio.rewards.models import RewardFunction, RewardVersion

    member = world.client("member")
    version = upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)
    function = RewardFunction.objects.create(
        project=world.project, name="f", created_by=world.owner
    )
    reward = RewardVersion.objects.create(
        function=function, number=1, code="def compute_score(*a, **k):\n    return 1.0\n",
        author=world.owner,
    )  # fmt: skip
    run_id = create(member, dataset_version=version.pk, reward_version=reward.pk).json()["id"]
    run = Run.objects.get(pk=run_id)
    assert run.config["reward"]["custom_path"] == f"resource:reward-version/{reward.pk}"
    attempt = claim(run_id)
    assert attempt is not None
    launched = trainer_launch(run, attempt)
    assert launched.reward_code == reward.code
    assert launched.config["reward"]["custom_path"] is None  # the job writes its own file


def test_a_stored_reward_reference_to_another_projects_version_is_refused_at_launch(
    world: World, media: Path
):
    from studio.rewards.models import RewardFunction, RewardVersion
    from studio.runs.launch import LaunchRefused

    member = world.client("member")
    version = upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)
    function = RewardFunction.objects.create(
        project=world.other_project, name="theirs", created_by=world.outsider
    )
    theirs = RewardVersion.objects.create(
        function=function, number=1, code="def compute_score(*a, **k):\n    return 0.0\n",
        author=world.outsider,
    )  # fmt: skip
    run_id = create(member, dataset_version=version.pk).json()["id"]
    run = Run.objects.get(pk=run_id)
    run.config["reward"]["custom_path"] = Reference("reward-version", theirs.pk).text
    run.save(update_fields=["config"])
    attempt = claim(run_id)
    assert attempt is not None
    with pytest.raises(LaunchRefused, match=f"Reward version {theirs.pk} is not"):
        trainer_launch(run, attempt)
