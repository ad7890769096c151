"""What the runs service is asked (studio.runs.service): typed requests made from a view's
validated serializer data (studio.runs.serializers), so the service reads named fields,
and the defaults live here, once.

`inputs` is open by design: it holds the request fields of every registered input kind
(studio.references.registry.request_fields), which the kinds themselves read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from studio.references.registry import request_fields


def _split(data: Mapping[str, Any], own: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request's own fields and the input kinds' fields; a key that is neither is a
    serializer out of step with the request (TypeError names it)."""
    kinds = set(request_fields())
    unknown = sorted(set(data) - own - kinds)
    if unknown:
        raise TypeError(f"Run request fields {unknown} are neither the request's nor a kind's.")
    return (
        {k: v for k, v in data.items() if k in own},
        {k: v for k, v in data.items() if k in kinds},
    )


@dataclass(frozen=True)
class ConfigRequest:
    """How the run's config is made: preset <- `config` <- `overrides` (studio.runs.configs),
    over a clone's parent config; `inputs` are the input kinds' request fields."""

    preset: str = ""  # a clone has none: it starts from its parent's stored config
    config: dict[str, Any] | None = None
    overrides: list[str] | None = None
    inputs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CreateRun(ConfigRequest):
    name: str = ""
    priority: int = 0
    resources: Mapping[str, float] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    notes: str = ""

    @classmethod
    def from_validated(cls, data: Mapping[str, Any]) -> CreateRun:
        """From RunCreateSerializer's validated data, less its `project` (the view
        resolves the slug; the service takes the Project)."""
        own, inputs = _split({k: v for k, v in data.items() if k != "project"}, _names(cls))
        return cls(**own, inputs=inputs)


@dataclass(frozen=True)
class CloneRun(ConfigRequest):
    """A clone's edits; None keeps the parent's value."""

    name: str | None = None
    priority: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    tags: list[str] | None = None
    notes: str | None = None

    @classmethod
    def from_validated(cls, data: Mapping[str, Any]) -> CloneRun:
        """From RunCloneSerializer's validated data (which has no preset)."""
        own, inputs = _split(data, _names(cls) - {"preset"})
        return cls(**own, inputs=inputs)


@dataclass(frozen=True)
class RunChanges:
    """What a run's owner may change after creation (the config never changes); None
    leaves a field as it is."""

    name: str | None = None
    notes: str | None = None
    tags: list[str] | None = None
    priority: int | None = None

    @classmethod
    def from_validated(cls, data: Mapping[str, Any]) -> RunChanges:
        """From RunUpdateSerializer's validated data."""
        return cls(**data)

    def as_columns(self) -> dict[str, Any]:
        """The Run columns to write: the fields the request set."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


def _names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)} - {"inputs"}
