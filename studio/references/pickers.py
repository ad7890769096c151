"""What the run form needs to offer a kind's id as a plain choice from a list, published in
the OpenAPI schema of the kind's request field as `x-input-kind` (the frontend renders one
generic picker for every request field that has it: features/runs/components/
InputKindPickers.tsx).

A kind opts in by passing a `Picker` to its `id_field`. The model, training data,
validation and reward kinds don't: their pickers offer more than one list (a dataset or an
exact version, the built-in reward) and stay hand-written.

The app doesn't ship the whole schema (over 500 KB): `scripts/gen-api.sh` writes the run
requests' fields that carry the extension, cut from it, to `frontend/src/api/
input-kinds.json` (`picker_schema`), and tests/studio/test_api_types_fresh.py fails when
that file is stale.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

from studio.paths import REPO_ROOT
from trainer.config import RunConfig

EXTENSION = "x-input-kind"
REQUESTS = ("RunCreateRequest", "RunCloneRequest")
PICKER_SCHEMA = REPO_ROOT / "frontend" / "src" / "api" / "input-kinds.json"


def config_default(path: str) -> Any:
    """The config's default at dotted `path` (what the form's config means when unset)."""
    node: Any = RunConfig().model_dump(mode="json")
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            raise KeyError(f"Config path {path!r} has no default: no {key!r} in the config.")
        node = node[key]
    return node


@dataclass(frozen=True)
class Shown:
    """When the picker applies: the config's value at `path` (its default when the form's
    config leaves it unset) is one of `among`, or a number above `above`."""

    path: str
    among: tuple[Any, ...] | None = None
    above: float | None = None

    def __post_init__(self) -> None:
        if (self.among is None) == (self.above is None):
            raise ValueError(f"Shown({self.path!r}) takes one of `among` and `above`.")

    def schema(self) -> dict[str, Any]:
        test = {"in": list(self.among)} if self.among is not None else {"above": self.above}
        return {"path": self.path, "default": config_default(self.path), **test}


@dataclass(frozen=True)
class Picker:
    """A choice of one item of a project's list endpoint (`list`, asked with
    `?project=<slug>`), offering the items whose fields equal `where` (the list is fetched
    once per endpoint and shared by the pickers reading it). `option` labels an item
    (`{field}` placeholders); `unset` is the empty option of a new run (a clone's is its
    parent's choice, read from the run's `inputs` under the field's name); `none` is said
    when nothing matches."""

    label: str
    help: str
    list: str
    unset: str
    where: Mapping[str, str] = field(default_factory=dict)
    option: str = "{name}"
    none: str = ""
    shown: Shown | None = None

    def schema(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "help": self.help,
            "list": self.list,
            "where": dict(self.where),
            "option": self.option,
            "unset": self.unset,
            "none": self.none,
            "shown": self.shown.schema() if self.shown else None,
        }


class KindIdField(serializers.IntegerField):
    """An id request field whose kind is chosen with a generic picker."""

    def __init__(self, *, picker: Picker, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.picker = picker


class KindIdFieldSchema(OpenApiSerializerFieldExtension):
    """The integer's schema as drf-spectacular maps it, plus the picker."""

    target_class = KindIdField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        return {**schema, EXTENSION: self.target.picker.schema()}


def picker_schema(openapi: Mapping[str, Any]) -> dict[str, Any]:
    """The run requests' fields that carry a picker, cut from the OpenAPI document with its
    shape (so the frontend reads the cut and the whole document alike)."""
    schemas = openapi["components"]["schemas"]
    cut = {
        name: {
            "properties": {
                key: prop for key, prop in schemas[name]["properties"].items() if EXTENSION in prop
            }
        }
        for name in REQUESTS
    }
    return {"components": {"schemas": cut}}


def picker_schema_text(openapi: Mapping[str, Any]) -> str:
    return json.dumps(picker_schema(openapi), indent=1) + "\n"


def write_picker_schema(openapi_file: str = str(REPO_ROOT / "frontend" / "openapi.json")) -> None:
    with open(openapi_file) as f:
        PICKER_SCHEMA.write_text(picker_schema_text(json.load(f)))
