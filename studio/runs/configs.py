"""Resolve a run's config with trainer.config and turn its errors into form errors.

Errors are keyed by the config path the user typed ("config.actor.optim.lr"), so
the browser's form can put each message next to its field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainer.config import (
    ConfigError,
    IgnoredKey,
    RenamedKey,
    RunConfig,
    build_config,
    compose,
    schema_paths,
)
from trainer.config.paths import set_place
from trainer.config.resources_section import WorkerResources
from trainer.config.verl import is_verl_key
from trainer.distributed import reward_model_groups

FieldErrors = dict[str, list[str]]

# Every reward the studio launches runs in the sandbox: in-process is for trusted code on
# your own machine (`python -m trainer run`), never for a run started here.
INPROCESS_REFUSED = (
    "reward.executor='inprocess' would run the reward code inside the trainer process, "
    "unsandboxed; the studio runs every reward in the sandbox: remove reward.executor or "
    "set it to 'sandbox'."
)


VERL_PREFIXES = ("actor_rollout_ref.", "custom_reward_function.")


class InvalidConfig(Exception):
    def __init__(self, errors: FieldErrors) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Resolved:
    config: RunConfig
    tree: dict[str, Any] = field(repr=False)  # config.model_dump(mode="json")
    # verl overrides accepted with no effect here, each with the reason.
    ignored: tuple[IgnoredKey, ...] = ()
    # moved keys read under their old spelling (trainer.config.renamed_keys).
    renamed: tuple[RenamedKey, ...] = ()


def _allowed_keys(section: str) -> list[str]:
    prefix = f"{section}." if section else ""
    return sorted({p[len(prefix) :].split(".")[0] for p in schema_paths() if p.startswith(prefix)})


def _errors_of(exc: ConfigError) -> FieldErrors:
    if not exc.issues:
        # Not a schema problem: an unknown preset, a bad or unknown override, ...
        return {"overrides": [str(exc)]}

    errors: FieldErrors = {}
    for issue in exc.issues:
        message = issue.message
        if issue.kind == "extra_forbidden":
            section = issue.path.rpartition(".")[0]
            message = (
                f"Unknown config key {issue.path!r}; allowed keys"
                f"{f' in {section!r}' if section else ''}: {', '.join(_allowed_keys(section))}."
            )
        where = f"config.{issue.path}" if issue.path else "config"
        if issue.path.startswith(VERL_PREFIXES) or (  # a verl key of the overrides
            is_verl_key(issue.path) and issue.path not in schema_paths()
        ):
            where, message = "overrides", f"{issue.path}: {message}"
        errors.setdefault(where, []).append(message)
    return errors


def resolve(
    config: dict[str, Any] | None = None,
    overrides: list[str] | None = None,
    preset: str | None = None,
    stored: dict[str, Any] | None = None,
    fill: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Resolved:
    """Defaults <- preset <- `stored` (a cloned run's config) <- config tree <- dotted
    overrides (ours or verl's), none of which may name a path, then what `fill` returns
    for the composed tree (dotted place -> value: the run's references,
    studio.references.run_inputs.filled_paths)."""
    try:
        composed = compose(
            preset=preset or None,
            stored=stored,
            base=config or None,
            overrides=overrides,
            server_paths=False,
        )
        tree = composed.tree
        for place, value in (fill(tree) if fill else {}).items():
            set_place(tree, place, value)
        resolved = build_config(tree)
    except ConfigError as exc:
        raise InvalidConfig(_errors_of(exc)) from exc
    if resolved.reward.executor == "inprocess":
        raise InvalidConfig({"config.reward.executor": [INPROCESS_REFUSED]})
    tree = resolved.model_dump(mode="json")
    nul = _nul_paths(tree, "config")
    if nul:
        # Postgres can't store NUL in JSON; say so here rather than fail on insert.
        raise InvalidConfig({path: ["Contains a NUL character (\\x00)."] for path in nul})
    return Resolved(resolved, tree, composed.ignored, composed.renamed)


def _nul_paths(value: Any, path: str) -> list[str]:
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _nul_paths(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _nul_paths(v, f"{path}.{i}")]
    return []


def resources_of(config: RunConfig) -> dict[str, float]:
    """The run's whole resource request, from the per-worker numbers in its config: the
    trainer's workers, and those of each reward model with a worker group of its own."""
    groups: list[WorkerResources] = [config.resources]
    groups += [model.resources for _, model in reward_model_groups(config)]
    return {
        "cpus": sum(g.num_workers * g.cpus_per_worker for g in groups),
        "gpus": sum(g.num_workers * g.gpus_per_worker for g in groups),
        "memory_gb": sum(g.num_workers * g.memory_gb for g in groups),
    }
