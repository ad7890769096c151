"""The built-in reward functions: a closed registry with verl's signature.

Every entry is ``compute_score(data_source, solution_str, ground_truth, extra_info, **kw)``
from a self-contained module in `trainer.rewards.templates`; `builtin_source` returns
that module's text, the studio's "new from template" starting point. `weighted`
combines built-ins into one reward whose parts are reported as components.
"""

from __future__ import annotations

import importlib
import importlib.resources
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from trainer.rewards.contract import InvalidReturn, as_finite_float

RewardFn = Callable[..., Any]

BUILTIN_NAMES: tuple[str, ...] = (
    "exact_match",
    "numeric",
    "arith",
    "gsm8k",
    "boxed_math",
    "countdown",
    "format_regex",
    "length_penalty",
    "verl_default",
    "verl_code",
)


# Templates a reward function can start from: every built-in, plus batch-form starting
# points. These are not built-ins (`reward.function`): the registry keeps one signature.
BATCH_TEMPLATE_NAMES: tuple[str, ...] = ("exact_match_batch",)
TEMPLATE_NAMES: tuple[str, ...] = (*BUILTIN_NAMES, *BATCH_TEMPLATE_NAMES)


def _load(name: str) -> RewardFn:
    module = importlib.import_module(f"trainer.rewards.templates.{name}")
    fn: RewardFn = module.compute_score
    return fn


BUILTIN_REWARDS: Mapping[str, RewardFn] = MappingProxyType({n: _load(n) for n in BUILTIN_NAMES})

exact_match = BUILTIN_REWARDS["exact_match"]
numeric = BUILTIN_REWARDS["numeric"]
arith = BUILTIN_REWARDS["arith"]
gsm8k = BUILTIN_REWARDS["gsm8k"]
boxed_math = BUILTIN_REWARDS["boxed_math"]
countdown = BUILTIN_REWARDS["countdown"]
format_regex = BUILTIN_REWARDS["format_regex"]
length_penalty = BUILTIN_REWARDS["length_penalty"]
# verl's default_compute_score: a scorer per data_source (templates/verl_default.py).
verl_default = BUILTIN_REWARDS["verl_default"]
# verl's scorer of code rows (prime_code): runs the response against the test cases.
verl_code = BUILTIN_REWARDS["verl_code"]


def _unknown(name: str, choices: tuple[str, ...] = BUILTIN_NAMES) -> KeyError:
    return KeyError(f"unknown built-in reward {name!r}; choose one of: {', '.join(choices)}")


def builtin_source(name: str) -> str:
    """Source code of a built-in or another template (`TEMPLATE_NAMES`), a standalone
    module defining ``compute_score``."""
    if name not in TEMPLATE_NAMES:
        raise _unknown(name, TEMPLATE_NAMES)
    resource = importlib.resources.files("trainer.rewards.templates").joinpath(f"{name}.py")
    return resource.read_text(encoding="utf-8")


def weighted(
    components: Mapping[str, float], options: Mapping[str, Mapping[str, Any]] | None = None
) -> RewardFn:
    """A reward ``sum(weight * builtin)`` returning ``{"score": total, name: value, ...}``.

    ``components`` maps built-in names to weights, e.g. ``{"gsm8k": 1.0,
    "length_penalty": 0.2}``; ``options`` gives a component its keyword arguments.
    Component values are reported unweighted, so each can be charted on its own scale.
    """
    if not components:
        raise ValueError("weighted() needs at least one component")
    for name in components:
        if name not in BUILTIN_REWARDS:
            raise _unknown(name)
    extra = dict(options or {})
    for name in extra:
        if name not in components:
            raise ValueError(f"options for {name!r}, which is not a component")
    parts = [
        (name, float(weight), BUILTIN_REWARDS[name], dict(extra.get(name, {})))
        for name, weight in components.items()
    ]

    def compute_score(
        data_source: str,
        solution_str: str,
        ground_truth: Any,
        extra_info: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        total = 0.0
        for name, weight, fn, opts in parts:
            raw = fn(data_source, solution_str, ground_truth, extra_info, **opts)
            if isinstance(raw, dict):
                raw = raw["score"]
            try:
                value = as_finite_float(raw, f"component {name!r}")
            except InvalidReturn as exc:
                raise ValueError(str(exc)) from None
            out[name] = value
            total += weight * value
        return {"score": total, **out}

    compute_score.__name__ = "weighted_" + "_".join(components)
    return compute_score
