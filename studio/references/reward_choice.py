"""A run or evaluation that chose no reward: its rows' data sources must each have a
scorer in the trainer's resolution table (`trainer.rewards.resolution`), or it is
refused at creation, asking for a reward, instead of failing at the trainer's data load.
"""

from __future__ import annotations

from studio.datasets.models import DatasetVersion
from studio.references.run_inputs import RunInputs
from trainer.config import RunConfig
from trainer.rewards.resolution import (
    UnresolvedRewardError,
    resolve_data_sources,
    rows_pick_their_scorer,
)


def _data_source_counts(version: DatasetVersion) -> dict[str, int] | None:
    """Rows per data source, from the version's stats (None where they were not kept)."""
    found = version.stats.get("data_sources") if isinstance(version.stats, dict) else None
    if not isinstance(found, list):
        return None
    return {str(entry["name"]): int(entry["count"]) for entry in found}


def unresolved_reward_errors(inputs: RunInputs, config: RunConfig) -> dict[str, list[str]]:
    """{"reward_version": [why]} when the rows pick their scorer (no reward and no reward
    model chosen) and some rows' data source has none; {} otherwise."""
    reward_models = len(config.reward.model_sections())
    if not rows_pick_their_scorer(config.reward.function, reward_models):
        return {}
    versions = [inputs.dataset_version]
    if inputs.validation_version is not None:
        versions.append(inputs.validation_version)
    for version in versions:
        counts = _data_source_counts(version)
        if counts is None:
            continue  # the trainer checks the rows at load
        try:
            resolve_data_sources(counts, f"{version.dataset.name} v{version.number}")
        except UnresolvedRewardError as exc:
            return {"reward_version": [str(exc)]}
    return {}
