"""Which rows are held out: `extra_info.split` labels that mean validation."""

from __future__ import annotations

VALIDATION_SPLITS = frozenset({"val", "validation", "test", "dev"})


def is_validation(label: object) -> bool:
    """A split label names validation data, whatever its case (`Val`, `TEST`, ...)."""
    return isinstance(label, str) and label.strip().lower() in VALIDATION_SPLITS
