"""The registry of run inputs: every kind of thing a run is made of (its model, training
data, validation data, reward, reward models, ...) is one `InputKind`, declared once in
`studio.references.kinds`, and every layer walks the registry instead of naming kinds:

- the request: `request_fields` (the create and clone serializers' fields, so the OpenAPI
  schema and the generated client and forms follow);
- creation: `choose` (each id checked for the run's project), `references` (what the
  stored config holds in the kind's path-bearing fields), `model_fields` (the Run
  columns that index it);
- clone: `inherit` (the parent's choice);
- launch: `resolvers` (a stored reference -> the path or URL the trainer reads);
- the summary every view shows and the report: `summary_fields`, `summary`,
  `report_lines`.

Adding a kind is one module in `kinds/` and its line in `kinds/__init__.py`, plus what
stores it (a Run column and its migration) and the trainer's path field it fills.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rest_framework import serializers

from studio.projects.models import Project
from studio.references.reference import Reference
from trainer.config.paths import Resource, path_fields

if TYPE_CHECKING:
    from studio.datasets.models import DatasetVersion
    from studio.model_registry.models import RegisteredModel
    from studio.rewards.models import RewardVersion
    from studio.runs.models import Run

V = TypeVar("V")


class InputError(Exception):
    """A reference that can't be used; `errors` are keyed by request field."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


class UnresolvedReference(Exception):
    """A stored reference the launcher can't turn into a path (studio.runs.launch refuses
    the launch with this message)."""


@dataclass(frozen=True)
class RunInputs:
    """What a run is made of: kind name -> that kind's chosen value. The accessors name
    the built-in kinds for the code that reads one of them (the reward check, evaluations)."""

    values: Mapping[str, Any]

    def __getitem__(self, kind: str) -> Any:
        return self.values[kind]

    def replace(self, **values: Any) -> RunInputs:
        unknown = set(values) - set(self.values)
        if unknown:
            raise KeyError(f"No input kind {sorted(unknown)}; known: {sorted(self.values)}.")
        return RunInputs({**self.values, **values})

    @property
    def model(self) -> RegisteredModel:
        return self.values["model"]

    @property
    def dataset_version(self) -> DatasetVersion:
        return self.values["training_data"]

    @property
    def validation(self) -> str:
        return self.values["validation"].mode

    @property
    def validation_version(self) -> DatasetVersion | None:
        return self.values["validation"].version

    @property
    def reward_version(self) -> RewardVersion | None:
        return self.values["reward"]

    @property
    def reward_models(self) -> dict[str, RegisteredModel]:
        return self.values["reward_models"]


@dataclass(frozen=True)
class Choice:
    """What a kind's `choose` may read besides the request: the run's project, who asks,
    the path values of the preset and config (for demo models), and the kinds chosen
    before it (in registry order)."""

    project: Project
    user: Any
    defaults: Mapping[str, Any]
    chosen: Mapping[str, Any]


@dataclass
class Launch:
    """One launch's resolution: the run, the URL its rows are served at, and what the
    trainer receives beside its config (the reward code, from the reward reference)."""

    run: Run
    dataset_url: Callable[[int, str], str]
    reward_code: str | None = None


# A stored reference -> the path or URL this launch uses (None: drop it from a list, the
# job supplies it another way).
Resolver = Callable[[Launch, Reference], "str | None"]


class InputKind(ABC, Generic[V]):
    """One kind of run input. `name` keys it in RunInputs; `resource` is the trainer's
    path kind whose fields it fills (trainer.config.paths), if any."""

    name: str
    resource: Resource | None = None
    resolvers: Mapping[str, Resolver] = {}
    related: tuple[str, ...] = ()  # the Run lookups `summary` reads, selected by list views

    @abstractmethod
    def request_fields(self) -> dict[str, serializers.Field]:
        """The create and clone requests' fields for this kind (fresh instances)."""

    @abstractmethod
    def choose(self, data: Mapping[str, Any], inherited: V | None, context: Choice) -> V:
        """The value the request (`data`: its validated fields) names, else `inherited`
        (a clone's parent's), else the default; InputError for anything not of the
        project or not usable."""

    @abstractmethod
    def inherit(self, parent: Run) -> V | None:
        """The value `parent` was made with, for a clone."""

    @abstractmethod
    def model_fields(self, value: V) -> dict[str, Any]:
        """The Run columns that record `value`."""

    @abstractmethod
    def references(self, value: V, inputs: RunInputs, tree: dict[str, Any]) -> dict[str, Any]:
        """Dotted config place -> what the stored config holds there (references, and
        the settings the choice implies)."""

    @abstractmethod
    def summary_fields(self) -> dict[str, serializers.Field]:
        """The fields `summary` fills in the run's `inputs` (fresh instances)."""

    @abstractmethod
    def summary(self, run: Run) -> dict[str, Any]:
        """This kind's entries of the run's `inputs`, as every view shows them."""

    @abstractmethod
    def report_lines(self, summary: Mapping[str, Any], held_out: int | None) -> dict[str, str]:
        """Report row name -> text, from the run's whole summary."""

    def places(self) -> list[str]:
        """The dotted places of the path fields of this kind's `resource`."""
        if self.resource is None:
            return []
        return [f.dotted for f in path_fields() if f.kind.resource == self.resource]


_KINDS: dict[str, InputKind[Any]] = {}
_RESOLVERS: dict[str, Resolver] = {}


def register(kind: InputKind[Any]) -> None:
    """Add `kind` after the registered ones (kinds choose in this order)."""
    if kind.name in _KINDS:
        raise ValueError(f"Input kind {kind.name!r} is registered already.")
    for reference_kind, resolver in kind.resolvers.items():
        register_resolver(reference_kind, resolver)
    _KINDS[kind.name] = kind


def register_resolver(reference_kind: str, resolver: Resolver) -> None:
    """A reference kind's launch resolver; several input kinds may share one (a model
    reference resolves alike for the trained model and a reward model)."""
    known = _RESOLVERS.setdefault(reference_kind, resolver)
    if known is not resolver:
        raise ValueError(f"References of kind {reference_kind!r} have a resolver already.")


def unregister(name: str) -> None:
    kind = _KINDS.pop(name)
    for reference_kind, resolver in kind.resolvers.items():
        if _RESOLVERS.get(reference_kind) is resolver and not any(
            resolver is k.resolvers.get(reference_kind) for k in _KINDS.values()
        ):
            del _RESOLVERS[reference_kind]


@contextmanager
def registered(kind: InputKind[Any]) -> Iterator[InputKind[Any]]:
    """`kind` registered for the duration (a test's throwaway kind)."""
    register(kind)
    try:
        yield kind
    finally:
        unregister(kind.name)


def input_kinds() -> list[InputKind[Any]]:
    import studio.references.kinds  # noqa: F401  (registers the built-in kinds)

    return list(_KINDS.values())


def resolver_for(reference_kind: str) -> Resolver | None:
    import studio.references.kinds  # noqa: F401

    return _RESOLVERS.get(reference_kind)


def request_fields() -> dict[str, serializers.Field]:
    return {name: f for kind in input_kinds() for name, f in kind.request_fields().items()}


def summary_fields() -> dict[str, serializers.Field]:
    return {name: f for kind in input_kinds() for name, f in kind.summary_fields().items()}
