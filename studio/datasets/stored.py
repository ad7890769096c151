"""A stored dataset version is read only while it is within the import bounds.

Every import is measured as it streams (decoded size with dictionaries expanded, rows,
the longest value: studio/datasets/limits.py), and `decoded_record` keeps the measure in
the version's stats. A read (preview, diff, download, a test-run's rows) compares that
record with the bounds in force, which costs nothing. A version without a record (an
export of labelled samples, or one stored before records were kept) is measured once,
streaming and compactly, like an upload (trainer.data.parquet_reads); the measure is then
recorded. A version over a bound is refused with `VersionOutOfBounds` (422, naming the
bound), never decoded whole.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any, TypeGuard

from rest_framework import exceptions, status

from studio.datasets.limits import import_limits
from studio.datasets.models import DatasetVersion
from trainer.data.parquet_reads import bounded_batches, open_compact, read_footer
from trainer.data.read_limits import ReadLimitExceeded, ReadLimits, RowBudget

RECORD_KEY = "decoded"  # in DatasetVersion.stats


class VersionOutOfBounds(exceptions.APIException):
    """A stored version passes a bound; a worker reading it fails with the same message."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "version_out_of_bounds"
    default_detail = "This dataset version is over the import bounds and is not read."


def decoded_record(budget: RowBudget, at_least_bytes: int = 0) -> dict[str, int]:
    """What an import measured, for the version's stats (`at_least_bytes`: a text file's
    size on disk, which its decoded size is counted as)."""
    return {
        "bytes": max(budget.decoded_bytes, at_least_bytes),
        "rows": budget.rows,
        "longest_value_chars": budget.longest_value,
    }


def check_readable(version: DatasetVersion) -> None:
    """Raise `VersionOutOfBounds` unless `version` is within every import bound."""
    limits = import_limits()
    record = version.stats.get(RECORD_KEY) if isinstance(version.stats, dict) else None
    if _is_record(record):
        problem = _recorded_problem(record, limits)
    else:
        problem, record = _measured(version.pk, version.checksum, limits)
        if record is not None:
            _keep(version, record)
    if problem:
        raise VersionOutOfBounds(
            f"Version {version.number} of dataset {version.dataset.name!r} is not read: "
            f"{problem}. Upload its data again as a new version within the bounds."
        )


def _is_record(record: Any) -> TypeGuard[dict[str, int]]:
    keys = ("bytes", "rows", "longest_value_chars")
    return isinstance(record, dict) and all(isinstance(record.get(k), int) for k in keys)


def _recorded_problem(record: dict[str, int], limits: ReadLimits) -> str:
    try:
        limits.check_rows(record["rows"])
        limits.check_decoded(record["bytes"])
        limits.check_cell(record["longest_value_chars"])
    except ReadLimitExceeded as exc:
        return str(exc)
    return ""


@lru_cache(maxsize=64)
def _measured(pk: int, checksum: str, limits: ReadLimits) -> tuple[str, dict[str, int] | None]:
    """(the bound it passes, or ""; its record when within every bound). Versions never
    change, so a process measures each at most once for the same bounds."""
    version = DatasetVersion.objects.get(pk=pk)
    # No time bound: it passed the import's; a slow read must not look like a bad file.
    budget = RowBudget(replace(limits, max_seconds=float("inf")))
    try:
        with version.file.open("rb") as handle:
            parquet = open_compact(handle, read_footer(handle, limits))
            for _ in bounded_batches(parquet, budget):
                pass
    except ReadLimitExceeded as exc:
        return str(exc), None
    return "", decoded_record(budget)


def _keep(version: DatasetVersion, record: dict[str, int]) -> None:
    """Record the measure, so no process measures this version again."""
    stats = {**version.stats, RECORD_KEY: record}
    DatasetVersion.objects.filter(pk=version.pk).update(stats=stats)
    version.stats = stats
