"""The base of every run-config section."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

Dtype = Literal["float32", "bfloat16", "float16"]


def _on_off(value: object) -> object:
    """true/false (and YAML's on/off, which parse as booleans) mean "on"/"off"."""
    return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


# A speed-up that applies to some runs only: `auto` uses it where it applies, `on` refuses
# a run where it cannot, `off` never uses it.
OnOffAuto = Annotated[Literal["auto", "on", "off"], BeforeValidator(_on_off)]


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
