"""Which reward scores a row when a run chooses none: the one resolution table.

A config whose ``reward.function`` is unset scores each row with the built-in its
``data_source`` names here, as verl scores a row with ``default_compute_score`` by its
data source. The demo's ``arith`` and ``countdown`` rows resolve to their own built-ins;
verl's data sources (GSM8K, MATH, DAPO, Search-R1) to ``verl_default``, and its code
data sources (codecontests, apps, codeforces, taco) to ``verl_code``, which runs the
response against the row's test cases in the reward sandbox: each scores as verl does.
Any other data source has no scorer: the trainer refuses such data at load, before step
1, and the studio refuses to create the run or evaluation (a 400 asking for a reward),
so nothing is ever scored by a guess.

With a reward model and no reward function, the reward model scores every row alone and
no data source is looked up: verl 0.9.1's reward loop does the same (`compute_score`
calls its discriminative reward model when no custom function is set), so a verl command
line with a reward model (the hh-rlhf scripts) trains on the reward model's score.

Standard library only: the studio imports it to check a dataset version's data sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from trainer.rewards.templates import verl_code, verl_default

# The data sources verl's default reward scores (its symbolic-algebra sources are
# refused there, so they are not here).
_VERL_SOURCES = (
    *verl_default.GSM8K,
    *verl_default.MATH,
    *verl_default.DAPO,
    *verl_default.SEARCH_R1,
)

SCORER_BY_DATA_SOURCE: Mapping[str, str] = MappingProxyType(
    {
        "arith": "arith",
        "countdown": "countdown",
        "program": "arith",  # the demo's tools-program task: a number as the final answer
        **dict.fromkeys(_VERL_SOURCES, "verl_default"),
        **dict.fromkeys(verl_code.DATA_SOURCES, "verl_code"),
    }
)
# verl scores every source starting "aime" (AIME 2024, 2025, ...) as DAPO math.
SCORER_BY_PREFIX: tuple[tuple[str, str], ...] = (("aime", "verl_default"),)


class UnresolvedRewardError(ValueError):
    """Rows whose data source has no scorer, in a config that chose no reward."""

    def __init__(self, unknown: Mapping[str, int], where: str = "the data") -> None:
        self.unknown = dict(unknown)
        super().__init__(unresolved_message(self.unknown, where))


def scorer_for(data_source: str) -> str | None:
    """The built-in reward that scores rows of ``data_source``; None when none does."""
    found = SCORER_BY_DATA_SOURCE.get(data_source)
    if found is not None:
        return found
    for prefix, name in SCORER_BY_PREFIX:
        if data_source.startswith(prefix):
            return name
    return None


def known_data_sources() -> list[str]:
    """Every data source with a scorer (prefix rules written ``aime*``)."""
    return [*SCORER_BY_DATA_SOURCE, *(f"{prefix}*" for prefix, _ in SCORER_BY_PREFIX)]


def _known_in_short() -> str:
    """The known data sources in a few words: ours by name, verl's as a count."""
    verl = ("verl_default", "verl_code")
    ours = [s for s, name in SCORER_BY_DATA_SOURCE.items() if name not in verl]
    return (
        f"{', '.join(ours)} and verl's {len(known_data_sources()) - len(ours)} GSM8K, MATH, "
        "DAPO, Search-R1 and code sources (openai/gsm8k, lighteval/MATH, codecontests, ...: "
        "docs/from-verl.md)"
    )


def unresolved_message(unknown: Mapping[str, int], where: str = "the data") -> str:
    shown = ", ".join(
        f"{source!r} ({count} row{'s' if count != 1 else ''})"
        for source, count in sorted(unknown.items())[:5]
    )
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    return (
        f"No reward function was chosen, and no built-in scorer knows the data source of "
        f"{where}: {shown}{more}. Choose a reward (reward.function, or a reward version in "
        f"the studio); a built-in scorer is chosen by data source only for "
        f"{_known_in_short()}"
    )


def resolve_data_sources(counts: Mapping[str, int], where: str = "the data") -> dict[str, str]:
    """Each data source's scorer, for rows counted by data source; raises
    `UnresolvedRewardError` naming every data source without one."""
    resolved = {source: scorer_for(source) for source in counts}
    unknown = {source: counts[source] for source, name in resolved.items() if name is None}
    if unknown:
        raise UnresolvedRewardError(unknown, where)
    return {source: name for source, name in resolved.items() if name is not None}


def count_data_sources(data_sources: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for source in data_sources:
        counts[source] = counts.get(source, 0) + 1
    return counts


def rows_pick_their_scorer(function: str | None, reward_models: int) -> bool:
    """Whether each row's data source picks its scorer: no reward function is chosen and
    no reward model scores the rows alone (see the module doc)."""
    return function is None and reward_models == 0


def require_scorers(
    function: str | None,
    data_sources: Iterable[str],
    where: str = "the data",
    reward_models: int = 0,
) -> dict[str, str]:
    """For a config whose reward function is ``function`` and with ``reward_models`` reward
    models: {} when rows do not pick their scorer, else each data source's scorer
    (`UnresolvedRewardError` when one has none)."""
    if not rows_pick_their_scorer(function, reward_models):
        return {}
    return resolve_data_sources(count_data_sources(data_sources), where)


def describe_resolution(resolved: Mapping[str, str]) -> str:
    """One log line: which built-in scores which data source."""
    pairs = ", ".join(f"{source} by {name}" for source, name in sorted(resolved.items()))
    return f"no reward function chosen: each row is scored by its data source's scorer ({pairs})"
