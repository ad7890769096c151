"""Reading stored dataset versions: row slices for previews and test-runs."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from studio.datasets.models import DatasetVersion


def read_slice(version: DatasetVersion, offset: int, limit: int) -> list[dict[str, Any]]:
    """Rows ``offset .. offset+limit`` of a version, reading only the row groups needed."""
    if limit <= 0 or offset >= version.row_count:
        return []
    with version.file.open("rb") as handle:
        parquet = pq.ParquetFile(handle)
        tables: list[pa.Table] = []
        first_row = 0  # index of the first row of the current row group
        for group in range(parquet.num_row_groups):
            rows_in_group = parquet.metadata.row_group(group).num_rows
            group_end = first_row + rows_in_group
            if group_end > offset and first_row < offset + limit:
                table = parquet.read_row_group(group)
                start = max(0, offset - first_row)
                tables.append(table.slice(start, offset + limit - first_row - start))
            first_row = group_end
            if first_row >= offset + limit:
                break
    if not tables:
        return []
    rows: list[dict[str, Any]] = pa.concat_tables(tables).to_pylist()
    return rows


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
