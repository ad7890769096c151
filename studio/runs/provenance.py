"""Runs kept as provenance records (Run.provenance): runs stored before runs referenced
resources whose files were gone when they were brought to references
(studio.references.stored_runs). What they were made of is shown; nothing launches,
resumes or clones them, since no stored version holds what they trained on."""

from __future__ import annotations

from typing import Any, TypedDict


class Provenance(TypedDict):
    paths: dict[str, Any]  # config place -> what the run's config named there
    missing: list[str]  # why no resource stands for it, one line per place


def relaunch_refusal(run: Any) -> str | None:
    """Why `run` can't be launched, resumed, cloned or evaluated again (None: it can)."""
    if run.provenance is None:
        return None
    missing = "; ".join(run.provenance.get("missing", [])) or "its files are gone"
    return (
        f"Run {run.pk} is a provenance record of a run from before runs referenced "
        f"resources ({missing}); it is shown, not launched, resumed or cloned. Create a "
        "run on the project's models and dataset versions instead."
    )
