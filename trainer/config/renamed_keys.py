"""Keys that moved: read under their old spelling with a note, as verl's ignored keys are.

A YAML file, a stored tree or a dotted override may still spell a moved key the old way
(`model.cpu_linear_kernel`, ...; trainer.config.speed_section.RENAMED_KEYS): the loader
reads it as the key it became and says so once in the run's log. Both spellings in one
part is refused, since which should win is not clear.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainer.config.overrides import ConfigError
from trainer.config.speed_section import RENAMED_KEYS


@dataclass(frozen=True)
class RenamedKey:
    """An old key that was read as the key it became."""

    old: str
    new: str
    value: Any

    def describe(self) -> str:
        return (
            f"{self.old}={self.value!r} is read as {self.new}: the key moved to the "
            f"`speed` section; spell it {self.new}"
        )


def renamed_override(key: str, value: Any) -> tuple[str, RenamedKey | None]:
    """A dotted override's key as it is spelled today, and the note if it moved."""
    new = RENAMED_KEYS.get(key)
    return (key, None) if new is None else (new, RenamedKey(key, new, value))


def move_renamed(tree: dict[str, Any], where: str) -> list[RenamedKey]:
    """Move every old key of a nested tree (in place) to its new place; the notes.
    `where` names the tree in an error ("the config file")."""
    notes: list[RenamedKey] = []
    for old, new in RENAMED_KEYS.items():
        old_section, old_leaf = old.split(".")
        section = tree.get(old_section)
        if not isinstance(section, dict) or old_leaf not in section:
            continue
        new_section, new_leaf = new.split(".")
        target = tree.setdefault(new_section, {})
        if not isinstance(target, dict):
            continue  # validation names the section that is not a mapping
        if new_leaf in target:
            raise ConfigError(
                f"{where} sets both {old} and {new}; {old} is the old spelling of {new}: "
                f"keep only {new}."
            )
        value = section.pop(old_leaf)
        target[new_leaf] = value
        notes.append(RenamedKey(old, new, value))
    return notes
