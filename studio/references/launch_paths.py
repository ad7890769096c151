"""The launcher's half of the resolver: a stored config's references become the paths
and URLs this launch uses, each by the resolver its reference kind registered
(studio.references.registry). Nothing else writes a path into a trainer's config."""

from __future__ import annotations

from typing import Any

from studio.references.reference import MalformedReference, Reference
from studio.references.registry import Launch, UnresolvedReference, resolver_for
from trainer.config.paths import path_fields, path_values, set_place


def _parsed(items: list[Any], place: str) -> list[Reference]:
    try:
        return [Reference.parse(item) for item in items]
    except MalformedReference:
        raise UnresolvedReference(f"{place} holds a path, not a reference; refused.") from None


def _resolve(launch: Launch, reference: Reference) -> str | None:
    resolver = resolver_for(reference.kind)
    if resolver is None:
        raise UnresolvedReference(f"Unknown reference {reference.text!r} in the run's config.")
    return resolver(launch, reference)


def fill_launch_paths(launch: Launch, tree: dict[str, Any]) -> None:
    """Replace every reference in the path-bearing fields of `tree`, in place; what the
    trainer receives beside its config (the reward code) is left on `launch`."""
    for path_field in path_fields():
        for place, value in path_values(tree, path_field.steps):
            if value is None:
                continue
            items = value if isinstance(value, list) else [value]
            resolved = [_resolve(launch, r) for r in _parsed(items, place)]
            if isinstance(value, list):
                set_place(tree, place, [v for v in resolved if v is not None])
            else:
                set_place(tree, place, resolved[0])
