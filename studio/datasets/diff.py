"""What changed between two versions of a dataset: the columns (added, removed, retyped)
and the rows (added, removed, changed).

A row is known by its `extra_info.index` where it has one (verl's data scripts number
their rows), else by a hash of its prompt, so a row whose answer was fixed reads as
changed, not as one removed and one added. A key seen twice in one version gets its
occurrence (`#2`) so duplicates pair up in order.

The work is bounded by the versions themselves: both are checked against the import
bounds before either is read (studio.datasets.stored: a version over them is refused,
422). Both files are read with pyarrow one record batch at a time; only a key and a
digest per row are kept, and the rows of the page asked for are read back by position,
while they fit in the page's bound in bytes (studio.datasets.pages: a page that would
pass it is cut, and says where the next one starts). Versions never change, so the row
matching of a pair is kept (a few recent pairs per process) for the next page.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from studio.datasets.files import json_safe, stored_batches
from studio.datasets.models import DatasetVersion
from studio.datasets.pages import PageBudget, page_max_bytes
from studio.datasets.stored import check_readable
from trainer.data.decoded_size import decoded_bytes_per_row

ColumnChangeKind = Literal["added", "removed", "type_changed"]
RowChangeKind = Literal["added", "removed", "changed"]
ROW_CHANGES: tuple[RowChangeKind, ...] = ("added", "removed", "changed")
PAGE_MAX = 100
BATCH_ROWS = 4096
# The side a change has no row on (an added row's before, a removed one's after).
NO_ROW: tuple[int, pa.RecordBatch | None] = (0, None)


@dataclass(frozen=True)
class ColumnChange:
    name: str
    change: ColumnChangeKind
    before: str | None  # the arrow type in the older version; None: absent there
    after: str | None


@dataclass(frozen=True)
class RowChange:
    key: str  # "index 17" or "prompt 3f9a…", as the rows were matched
    change: RowChangeKind
    before: dict[str, Any] | None  # the row as stored (None when added)
    after: dict[str, Any] | None  # None when removed
    columns: list[str]  # the columns whose values differ (changed rows only)


@dataclass(frozen=True)
class DiffCounts:
    added: int
    removed: int
    changed: int
    unchanged: int


@dataclass(frozen=True)
class DiffPage:
    from_number: int
    to_number: int
    columns: list[ColumnChange]
    counts: DiffCounts
    total: int  # rows of `change` kind (all changes when no kind was asked for)
    offset: int
    limit: int
    rows: list[RowChange] = field(default_factory=list)
    truncated: bool = False  # cut short of `limit` changes by the page's bound in bytes
    message: str = ""  # why it was cut
    next_offset: int = 0  # where the next page starts


@dataclass(frozen=True)
class _Matched:
    """The row matching of two versions: for each change, its row positions."""

    columns: list[ColumnChange]
    changes: list[tuple[str, RowChangeKind, int | None, int | None]]  # key, kind, from, to
    unchanged: int


def schema_changes(before: pa.Schema, after: pa.Schema) -> list[ColumnChange]:
    """Columns added, removed or given another type, in the newer version's order (then
    the removed ones, in the older version's)."""
    old = {f.name: str(f.type) for f in before}
    new = {f.name: str(f.type) for f in after}
    changes = [
        ColumnChange(name, "added", None, kind)
        if name not in old
        else ColumnChange(name, "type_changed", old[name], kind)
        for name, kind in new.items()
        if name not in old or old[name] != kind
    ]
    changes += [
        ColumnChange(name, "removed", kind, None) for name, kind in old.items() if name not in new
    ]
    return changes


def _digest(value: Any) -> str:
    text = json.dumps(json_safe(value), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def row_key(row: dict[str, Any], prompt_column: str | None) -> str:
    """`extra_info.index` where the row has one, else a hash of its prompt (of the whole
    row when the version has no prompt column)."""
    extra = row.get("extra_info")
    if isinstance(extra, str):  # stored as JSON text by some writers
        try:
            extra = json.loads(extra)
        except ValueError:
            extra = None
    if isinstance(extra, dict) and extra.get("index") is not None:
        return f"index {json_safe(extra['index'])}"
    prompt = row.get(prompt_column) if prompt_column is not None else row
    return f"prompt {_digest(prompt)[:12]}"


def _prompt_column(version: DatasetVersion, schema: pa.Schema) -> str | None:
    mapping = version.column_mapping
    mapped = mapping.get("prompt_key") if isinstance(mapping, dict) else None
    for name in ("prompt", mapped):
        if name is not None and name in schema.names:
            return str(name)
    return None


def _keyed_rows(version: DatasetVersion) -> tuple[pa.Schema, list[tuple[str, str]]]:
    """The version's schema and, per row in order, its key and the digest of its values."""
    keyed: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    with version.file.open("rb") as handle:
        parquet = pq.ParquetFile(handle)
        schema = parquet.schema_arrow
        prompt = _prompt_column(version, schema)
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                key = row_key(row, prompt)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    key = f"{key} #{seen[key]}"
                keyed.append((key, _digest(row)))
    return schema, keyed


@lru_cache(maxsize=4)
def _match(from_id: int, to_id: int) -> _Matched:
    before_version = DatasetVersion.objects.get(pk=from_id)
    after_version = DatasetVersion.objects.get(pk=to_id)
    before_schema, before = _keyed_rows(before_version)
    after_schema, after = _keyed_rows(after_version)
    position = {key: (i, digest) for i, (key, digest) in enumerate(before)}
    changes: list[tuple[str, RowChangeKind, int | None, int | None]] = []
    unchanged = 0
    for j, (key, digest) in enumerate(after):
        found = position.pop(key, None)
        if found is None:
            changes.append((key, "added", None, j))
        elif found[1] != digest:
            changes.append((key, "changed", found[0], j))
        else:
            unchanged += 1
    removed = sorted(position.items(), key=lambda item: item[1][0])
    changes += [(key, "removed", i, None) for key, (i, _) in removed]
    return _Matched(schema_changes(before_schema, after_schema), changes, unchanged)


def _rows_at(
    version: DatasetVersion, positions: list[int], max_bytes: int
) -> dict[int, tuple[int, pa.RecordBatch]]:
    """The rows at `positions`, each with its decoded size, taken in file order while
    together they decode to at most `max_bytes` (measured before a row is copied): the
    rest are left out, and the page ends at the first change that needs one."""
    wanted = sorted(set(positions))
    found: dict[int, tuple[int, pa.RecordBatch]] = {}
    if not wanted:
        return found
    taken = 0
    with version.file.open("rb") as handle:
        parquet = pq.ParquetFile(handle)
        for at, batch in stored_batches(parquet, wanted[0], wanted[-1] + 1):
            here = [p for p in wanted if at <= p < at + batch.num_rows]
            sizes = decoded_bytes_per_row(batch).to_pylist() if here else []
            fitting: list[int] = []
            for position in here:
                taken += sizes[position - at]
                if taken > max_bytes:
                    break
                fitting.append(position)
            if fitting:  # copied out, so the batch itself is not kept
                picked = batch.take(pa.array([p - at for p in fitting], type=pa.int64()))
                for k, position in enumerate(fitting):
                    found[position] = (sizes[position - at], picked.slice(k, 1))
            if taken > max_bytes:
                break
    return found


def _differing(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    names = list(after) + [name for name in before if name not in after]
    return [name for name in names if before.get(name) != after.get(name)]


def diff_versions(
    before: DatasetVersion,
    after: DatasetVersion,
    offset: int = 0,
    limit: int = 50,
    change: RowChangeKind | None = None,
    max_bytes: int | None = None,
) -> DiffPage:
    """The column changes, the counts, and one page of changed rows (`change`: only that
    kind) between `before` and `after`, two versions of one dataset. The page holds at
    most `max_bytes` (RLSTUDIO_PREVIEW_MAX_BYTES); either version over the import bounds
    raises `VersionOutOfBounds`."""
    check_readable(before)
    check_readable(after)
    matched = _match(before.pk, after.pk)
    kinds = [c[1] for c in matched.changes]
    counts = DiffCounts(
        added=kinds.count("added"),
        removed=kinds.count("removed"),
        changed=kinds.count("changed"),
        unchanged=matched.unchanged,
    )
    wanted = [c for c in matched.changes if change is None or c[1] == change]
    limit = max(0, min(limit, PAGE_MAX))
    page = wanted[offset : offset + limit]
    max_bytes = page_max_bytes() if max_bytes is None else max_bytes
    old = _rows_at(before, [c[2] for c in page if c[2] is not None], max_bytes)
    new = _rows_at(after, [c[3] for c in page if c[3] is not None], max_bytes)
    budget = PageBudget(max_bytes)
    rows = []
    for key, kind, i, j in page:
        found_before = old.get(i) if i is not None else NO_ROW
        found_after = new.get(j) if j is not None else NO_ROW
        if found_before is None or found_after is None:  # left out by `_rows_at`: too large
            budget.cut()
            break
        if not budget.fits_decoded(found_before[0] + found_after[0]):
            break
        row_before, row_after = _row(found_before[1]), _row(found_after[1])
        differs = _differing(row_before, row_after) if row_before and row_after else []
        row_change = RowChange(key, kind, row_before, row_after, differs)
        if not budget.fits_sent(asdict(row_change)):
            break
        rows.append(row_change)
    if budget.truncated and not rows:
        raise budget.too_large(f"The change of {page[0][0]} between these versions")
    return DiffPage(
        from_number=before.number,
        to_number=after.number,
        columns=matched.columns,
        counts=counts,
        total=len(wanted),
        offset=offset,
        limit=limit,
        rows=rows,
        truncated=budget.truncated,
        message=budget.message(len(rows), offset + len(rows)),
        next_offset=offset + len(rows),
    )


def _row(batch: pa.RecordBatch | None) -> dict[str, Any] | None:
    """The one row of `batch`, JSON-safe (None: no row on this side)."""
    if batch is None:
        return None
    row: dict[str, Any] = json_safe(batch.to_pylist()[0])
    return row
