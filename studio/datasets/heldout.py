"""Which rows of a dataset version validate a run instead of training it.

Rows labelled as held out (`extra_info.split` of val, validation, test or dev) are the
validation rows when a version has any. Otherwise a run holds out 10% of the rows (at
most 500), chosen by a hash of each row's content: the same rows for every run of the
version, whatever their order, and a row's duplicates are held out with it, so no
held-out row is ever trained on.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pyarrow as pa

from studio.datasets.splits import is_validation

HELD_OUT_FRACTION_DENOMINATOR = 10  # 10%
HELD_OUT_MAX_ROWS = 500


def split_label(extra_info: Any) -> str | None:
    if isinstance(extra_info, str):  # some writers store it as a JSON string
        try:
            extra_info = json.loads(extra_info)
        except ValueError:
            return None
    if isinstance(extra_info, dict):
        label = extra_info.get("split")
        return label.lower() if isinstance(label, str) else None
    if isinstance(extra_info, list):  # a parquet map arrives as (key, value) pairs
        return split_label(dict(item for item in extra_info if len(item) == 2))
    return None


def row_hash(row: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()


def held_out_mask(table: pa.Table) -> list[bool]:
    """True for each row that validates rather than trains."""
    if "extra_info" in table.column_names:
        labelled = [is_validation(split_label(v)) for v in table.column("extra_info").to_pylist()]
        if any(labelled):
            return labelled
    rows = table.to_pylist()
    count = min(len(rows) // HELD_OUT_FRACTION_DENOMINATOR, HELD_OUT_MAX_ROWS)
    hashes = [row_hash(row) for row in rows]
    chosen = set(sorted(hashes)[:count])
    return [h in chosen for h in hashes]
