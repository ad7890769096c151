"""Nudging the workers to move a sweep on after a commit (studio.runs.dispatch's pattern:
a lost nudge loses nothing, the beat's `advance_sweeps` catches up)."""

from __future__ import annotations

from django.db import transaction

from studio.runs.dispatch import send

ADVANCE = "workers.advance_sweep"


def advance_soon(sweep_id: int) -> None:
    transaction.on_commit(lambda: send(ADVANCE, [sweep_id]))
