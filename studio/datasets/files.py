"""Reading stored dataset versions: row slices for previews, diffs and test-runs.

Every read checks the version against the import bounds first (studio.datasets.stored);
then only the row groups that hold the rows asked for are read, one record batch at a
time. A preview page is bounded in bytes too (studio.datasets.pages).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from studio.datasets.models import DatasetVersion
from studio.datasets.pages import PageBudget
from studio.datasets.stored import check_readable
from trainer.data.decoded_size import decoded_bytes_per_row

BATCH_ROWS = 256  # rows decoded at a time; the version's bounds cap what they can hold


@dataclass(frozen=True)
class RowPage:
    rows: list[dict[str, Any]]  # JSON-safe
    truncated: bool  # cut short of the rows asked for, by the page's bound in bytes
    message: str  # why it was cut ("" when it was not)
    next_offset: int  # where the next page starts


def stored_batches(
    parquet: pq.ParquetFile, start: int, stop: int
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The record batches that hold rows ``start .. stop`` (of the row groups that do),
    each with the number of its first row."""
    first_row = 0  # of the current row group
    for group in range(parquet.num_row_groups):
        group_end = first_row + parquet.metadata.row_group(group).num_rows
        if group_end > start and first_row < stop:
            at = first_row
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group]):
                if at + batch.num_rows > start:
                    yield at, batch
                at += batch.num_rows
                if at >= stop:
                    break
        first_row = group_end
        if first_row >= stop:
            break


def _sliced(version: DatasetVersion, offset: int, limit: int) -> Iterator[pa.RecordBatch]:
    """Rows ``offset .. offset+limit`` of a checked version, a batch at a time."""
    with version.file.open("rb") as handle:
        parquet = pq.ParquetFile(handle)
        for at, batch in stored_batches(parquet, offset, offset + limit):
            start = max(0, offset - at)
            stop = min(batch.num_rows, offset + limit - at)
            if stop > start:
                yield batch.slice(start, stop - start)


def read_slice(version: DatasetVersion, offset: int, limit: int) -> list[dict[str, Any]]:
    """Rows ``offset .. offset+limit`` of a version, as stored (raises `VersionOutOfBounds`
    for a version over the import bounds)."""
    if limit <= 0 or offset >= version.row_count:
        return []
    check_readable(version)
    rows: list[dict[str, Any]] = []
    for batch in _sliced(version, offset, limit):
        rows.extend(batch.to_pylist())
    return rows


def read_page(version: DatasetVersion, offset: int, limit: int, max_bytes: int) -> RowPage:
    """Rows ``offset .. offset+limit``, JSON-safe, while they fit in `max_bytes` (counted
    as decoded before a row becomes Python values, and as JSON); see studio.datasets.pages."""
    if limit <= 0 or offset >= version.row_count:
        return RowPage([], False, "", offset)
    check_readable(version)
    budget = PageBudget(max_bytes)
    rows: list[dict[str, Any]] = []
    for batch in _sliced(version, offset, limit):
        for i, size in enumerate(decoded_bytes_per_row(batch).to_pylist()):
            if not budget.fits_decoded(size):
                break
            row = json_safe(batch.slice(i, 1).to_pylist()[0])
            if not budget.fits_sent(row):
                break
            rows.append(row)
        if budget.truncated:
            break
    if budget.truncated and not rows:
        raise budget.too_large(f"The row at offset {offset} of version {version.number}")
    next_offset = offset + len(rows)
    return RowPage(rows, budget.truncated, budget.message(len(rows), next_offset), next_offset)


def json_safe(value: Any) -> Any:
    """A value any JSON encoder accepts: NaN/inf become None, bytes base64, dates ISO."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return str(value)
