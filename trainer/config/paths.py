"""Config fields that name a file, folder or URL: a type of their own.

A field declared with one of the path types below (`ModelPath`, `TrainFile`, ...) carries
a `PathKind` marker: a file or folder on the machine that runs the trainer, or for data
files also an http(s) URL. `path_fields()`
finds every such field by walking the schema, so whoever builds on it (the studio's
refusal of paths in requests, the launcher that fills them in) covers a new field as soon
as it is declared with one of these types; there is no list to keep in step.

The standalone CLI takes these fields as they are. The studio never accepts them from a
request: a run there references studio resources, and only its launcher turns those
into paths (studio/references/launch_paths.py).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

# What the studio offers instead of a path, per field (shown in its refusal).
Resource = Literal[
    "model",
    "critic_model",
    "dataset",
    "validation",
    "reward",
    "reward_model",
    "run_folder",
    "evaluated_model",
    "lora_adapter",
]
EVERY_ITEM = "*"  # a path step into each element of a list of sections


@dataclass(frozen=True)
class PathKind:
    """Marks a string as naming a server path (`url=False`) or a path or URL."""

    resource: Resource
    url: bool = False

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # The run form reads this to leave the field out: the studio fills it in.
        schema = handler(core_schema)
        schema["format"] = "path-or-url" if self.url else "server-path"
        schema["x-studio-resource"] = self.resource
        return schema


# The path types, one per kind of thing a path names. `list[TrainFile]` is a list of them.
ModelPath = Annotated[str, PathKind("model")]
CriticModelPath = Annotated[str, PathKind("critic_model")]
RewardModelPath = Annotated[str, PathKind("reward_model")]
RewardCodePath = Annotated[str, PathKind("reward")]
TrainFile = Annotated[str, PathKind("dataset", url=True)]
ValidationFile = Annotated[str, PathKind("validation", url=True)]
RunFolderPath = Annotated[str, PathKind("run_folder")]
EvaluatedModelPath = Annotated[str, PathKind("evaluated_model")]
LoraAdapterPath = Annotated[str, PathKind("lora_adapter")]


@dataclass(frozen=True)
class PathField:
    """One path-bearing field: its place in the tree and what replaces it in the studio."""

    steps: tuple[str, ...]  # e.g. ("reward", "extra_models", "*", "path")
    kind: PathKind
    many: bool  # a list of paths
    optional: bool  # None (its default) means "none"

    @property
    def dotted(self) -> str:
        return ".".join(self.steps)


def _markers(annotation: Any) -> tuple[PathKind | None, bool]:
    """The PathKind inside `annotation` (through Optional, list and Annotated) and
    whether it is a list of them."""
    origin = get_origin(annotation)
    if origin is Annotated:
        found = [m for m in annotation.__metadata__ if isinstance(m, PathKind)]
        return (found[0] if found else None), False
    if origin in (list, tuple):
        kind, _ = _markers(get_args(annotation)[0]) if get_args(annotation) else (None, False)
        return kind, kind is not None
    if origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            kind, many = _markers(arg)
            if kind is not None:
                return kind, many
    return None, False


def _section_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The config section class inside `annotation`, and whether it is a list of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if get_origin(annotation) is list:
        inner, _ = _section_of(get_args(annotation)[0])
        return inner, inner is not None
    return None, False


def path_fields(
    model: type[BaseModel] | None = None, prefix: tuple[str, ...] = ()
) -> list[PathField]:
    """Every path-bearing field of the schema (RunConfig by default), in declaration order."""
    if model is None:
        from trainer.config.schema import RunConfig

        model = RunConfig
    found: list[PathField] = []
    for name, info in model.model_fields.items():
        steps = (*prefix, name)
        kind = next((m for m in info.metadata if isinstance(m, PathKind)), None)
        many = False
        if kind is None:
            kind, many = _markers(info.annotation)
        if kind is not None:
            found.append(PathField(steps, kind, many, optional=info.default is None))
            continue
        section, listed = _section_of(info.annotation)
        if section is not None:
            found += path_fields(section, (*steps, EVERY_ITEM) if listed else steps)
    return found


def path_values(tree: Any, steps: tuple[str, ...], where: str = "") -> list[tuple[str, Any]]:
    """(dotted place, value) of each value at `steps` present in `tree` (lists of
    sections stepped into with their index: `reward.extra_models.0.path`)."""
    if not steps:
        return [(where, tree)]
    head, rest = steps[0], steps[1:]
    if head == EVERY_ITEM:
        if not isinstance(tree, list):
            return []
        return [
            found
            for i, item in enumerate(tree)
            for found in path_values(item, rest, f"{where}.{i}")
        ]
    if not isinstance(tree, dict) or head not in tree:
        return []
    return path_values(tree[head], rest, f"{where}.{head}" if where else head)


def set_place(tree: dict[str, Any], place: str, value: Any) -> None:
    """Set a dotted place such as `reward.extra_models.0.path` in `tree`, creating
    sections on the way (a numeric step indexes an existing list)."""
    *parents, last = place.split(".")
    node: Any = tree
    for step in parents:
        if isinstance(node, list):
            node = node[int(step)]
        else:
            node = node.setdefault(step, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
