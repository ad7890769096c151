"""A reference to a resource, as a run's stored config holds it in a path-bearing field:
`resource:<kind>/<id>[/<part>]` (`resource:dataset-version/12/train`), or a folder of the
run's own by its place, `resource:run/checkpoint.dir`. `Reference` is the typed value;
`text` writes it and `Reference.parse` reads it back, the only two places the grammar is
spelled out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REF = "resource:"


class MalformedReference(ValueError):
    """A string that is not a reference."""


@dataclass(frozen=True)
class Reference:
    """`kind`: the kind of resource (model, dataset-version, ...); `pk`: its id, None for a
    reference by place (a run folder); `part`: which part of it (a dataset version's
    `train` or `held-out` rows, a run folder's config place), "" for the whole."""

    kind: str
    pk: int | None
    part: str = ""

    @property
    def text(self) -> str:
        key = [str(self.pk)] if self.pk is not None else []
        return REF + "/".join([self.kind, *key, *([self.part] if self.part else [])])

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: Any) -> Reference:
        """The reference `text` spells; MalformedReference for anything else."""
        if not isinstance(text, str) or not text.startswith(REF):
            raise MalformedReference(f"{text!r} is not a reference ({REF}<kind>/<id>).")
        kind, _, rest = text[len(REF) :].partition("/")
        if not kind or not rest:
            raise MalformedReference(f"{text!r} names no resource ({REF}<kind>/<id>).")
        first, _, part = rest.partition("/")
        if first.isdigit():
            return cls(kind, int(first), part)
        return cls(kind, None, rest)  # by place: resource:run/checkpoint.dir

    @classmethod
    def parse_or_none(cls, text: Any) -> Reference | None:
        try:
            return cls.parse(text)
        except MalformedReference:
            return None


def is_reference(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(REF)
