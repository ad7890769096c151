"""The reward a run scores with: a reward function version of the project, or the
config's built-in reward (None). `reward.custom_path` holds
`resource:reward-version/<id>`; at launch that reference is what the trainer's reward
code comes from (the job writes it to a file of its own, so the path itself is dropped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from studio.datasets.models import DatasetVersion
from studio.references.choices import one
from studio.references.ref_serializers import RewardRefSerializer, id_field
from studio.references.reference import Reference
from studio.references.registry import (
    Choice,
    InputError,
    InputKind,
    Launch,
    RunInputs,
    UnresolvedReference,
)
from studio.rewards.models import RewardVersion
from trainer.config import RunConfig
from trainer.config.presets import PRESETS
from trainer.rewards.resolution import scorer_for

if TYPE_CHECKING:
    from studio.runs.models import Run

REFERENCE_KIND = "reward-version"


def reward_settings(version: RewardVersion) -> dict[str, Any]:
    """The reward settings a reward version implies. Code typed into the studio is
    untrusted: it always runs in the sandbox pool."""
    return {
        "reward.function": "custom",
        "reward.custom_name": version.entrypoint,
        "reward.executor": "sandbox",
    }


def _project_version(project_id: int, reference: Reference) -> RewardVersion | None:
    if reference.kind != REFERENCE_KIND or reference.pk is None:
        return None
    return RewardVersion.objects.filter(pk=reference.pk, function__project_id=project_id).first()


def resolve_reward_version(launch: Launch, reference: Reference) -> None:
    """The reward code the trainer receives beside its config; no path (None)."""
    version = _project_version(launch.run.project_id, reference)
    if version is None:
        raise UnresolvedReference(
            f"Reward version {reference.pk} is not a reward version of this run's project."
        )
    launch.reward_code = version.code


def stored_reward_version(run: Run) -> RewardVersion | None:
    """The reward version the run's stored config references (what its launch runs)."""
    for place in KIND.places():
        section = run.config
        for step in place.split("."):
            section = section.get(step) if isinstance(section, dict) else None
        found = Reference.parse_or_none(section)
        if found is not None:
            return _project_version(run.project_id, found)
    return None


def reward_code(run: Run) -> str | None:
    """The code the run scores with: its stored reward reference's (a provenance record's
    config names no reference: None, its reward version shows in its inputs)."""
    version = stored_reward_version(run)
    return version.code if version else None


def with_builtin_reward(config: dict[str, Any], preset: str) -> dict[str, Any]:
    """A parent's config with its reward version's settings replaced by the built-in
    reward its preset names (or none: each row's data source chooses), for a clone that
    drops the version."""
    builtin = RunConfig.model_validate(PRESETS.get(preset, {})).reward
    reward = {
        **config.get("reward", {}),
        "function": builtin.function,
        "custom_path": None,
        "custom_name": builtin.custom_name,
    }
    return {**config, "reward": reward}


def _by_data_source(version: DatasetVersion | None) -> str:
    """The built-in name of a run that chose no reward: its data sources' scorers."""
    sources = version.stats.get("data_sources", []) if version is not None else []
    names = sorted({scorer_for(str(s.get("name"))) or "none" for s in sources})
    return f"{' + '.join(names)} by data source" if names else "by data source"


class RewardInput(InputKind["RewardVersion | None"]):
    name = "reward"
    resource = "reward"
    related = ("reward_version__function",)
    resolvers = {REFERENCE_KIND: resolve_reward_version}

    def request_fields(self) -> dict[str, serializers.Field]:
        return {
            "reward_version": id_field(
                "A reward function version; default: the config's built-in reward."
            ),
            "builtin_reward": serializers.BooleanField(
                required=False,
                help_text="Score with the config's built-in reward, not a reward version: how "
                "a clone drops its parent's reward version. Not together with "
                "`reward_version`.",
            ),
        }

    def choose(
        self, data: Mapping[str, Any], inherited: RewardVersion | None, context: Choice
    ) -> RewardVersion | None:
        wanted = data.get("reward_version")
        builtin = bool(data.get("builtin_reward"))
        if builtin and wanted is not None:
            raise InputError(
                {"builtin_reward": ["Choose a reward version or the built-in reward, not both."]}
            )
        if wanted is not None:
            return one(
                RewardVersion.objects.filter(function__project=context.project).select_related(
                    "function"
                ),
                wanted,
                "reward_version",
                "reward version",
                context.project,
            )
        return None if builtin else inherited

    def inherit(self, parent: Run) -> RewardVersion | None:
        return parent.reward_version

    def model_fields(self, value: RewardVersion | None) -> dict[str, Any]:
        return {"reward_version": value}

    def references(
        self, value: RewardVersion | None, inputs: RunInputs, tree: dict[str, Any]
    ) -> dict[str, Any]:
        reference = Reference(REFERENCE_KIND, value.pk).text if value else None
        filled: dict[str, Any] = {place: reference for place in self.places()}
        return {**filled, **(reward_settings(value) if value is not None else {})}

    def summary_fields(self) -> dict[str, serializers.Field]:
        return {"reward": RewardRefSerializer()}

    def summary(self, run: Run) -> dict[str, Any]:
        version = run.reward_version
        function = version.function if version else None
        reward_config = run.config.get("reward", {})
        builtin = reward_config.get("function") or _by_data_source(run.dataset_version)
        return {
            "reward": {
                "function": function.pk if function else None,
                "name": function.name if function else builtin,
                "version": version.pk if version else None,
                "number": version.number if version else None,
                "kwargs": dict(reward_config.get("kwargs", {})),
            }
        }

    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        reward = summary["reward"]
        if reward["version"]:
            return {"Reward": f"{reward['name']} v{reward['number']}"}
        return {"Reward": f"built-in {reward['name']}"}


KIND = RewardInput()
