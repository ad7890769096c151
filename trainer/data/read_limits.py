"""Bounds on reading an untrusted dataset file: decoded size, rows, cell length and time.

A parquet file is compressed: 34 KB can hold 300 MB of repeated text, and an 820-byte
file can hold one 1 MiB string that 1,500 rows refer to (dictionary encoding), so the
file's size says nothing about what reading it costs. The checks here run in two places:

- `check_declared` reads only the parquet footer (trainer.data.parquet_reads: its row
  count, the declared size of every column, counted as decoded where the footer can
  know it) or, for text files, the size on disk, and refuses before a value is decoded;
- `RowBudget` counts while the reader streams (record batches, lines, CSV rows), so a
  footer that understates its sizes, a dictionary-encoded column, or a text file, is
  stopped as soon as it passes a bound, holding at most one batch beyond it. A batch
  is measured as decoded (trainer.data.decoded_size): every row is charged for the
  dictionary values it refers to.

The trainer reads its own files without limits; the studio passes them for uploads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

# Measured where the arrow arrays are (dictionaries included); re-exported for callers.
from trainer.data.decoded_size import decoded_bytes
from trainer.data.decoded_size import longest_text_in as longest_text_in

if TYPE_CHECKING:
    import pyarrow as pa

Bound = Literal["decoded_bytes", "rows", "cell_chars", "seconds", "footer", "encoding"]


class ReadLimitExceeded(ValueError):
    """A file passed one of its `ReadLimits`; the message names the bound."""

    def __init__(self, message: str, bound: Bound) -> None:
        super().__init__(message)
        self.bound = bound


def human_size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


@dataclass(frozen=True)
class ReadLimits:
    max_decoded_bytes: int
    max_rows: int
    max_cell_chars: int
    max_seconds: float
    hint: str = ""  # appended to every refusal (e.g. which settings raise the bounds)

    def refuse(self, what: str, bound: Bound) -> ReadLimitExceeded:
        return ReadLimitExceeded(f"{what}{'; ' + self.hint if self.hint else ''}", bound)

    def check_rows(self, rows: int) -> None:
        if rows > self.max_rows:
            raise self.refuse(f"more than {self.max_rows:,} rows (the limit on rows)", "rows")

    def check_decoded(self, decoded_bytes: int, declared: bool = False) -> None:
        if decoded_bytes <= self.max_decoded_bytes:
            return
        limit = human_size(self.max_decoded_bytes)
        if declared:
            what = (
                f"the file declares {human_size(decoded_bytes)} of data; the limit on decoded size"
            )
            raise self.refuse(f"{what} is {limit}", "decoded_bytes")
        what = f"the file decodes to more than {limit} of data (the limit on decoded size)"
        raise self.refuse(what, "decoded_bytes")

    def check_cell(self, chars: int, row: int | None = None, column: str | None = None) -> None:
        if chars > self.max_cell_chars:
            where = "".join(
                [f"row {row}" if row else "", f", column {column!r}" if column else ""]
            ).lstrip(", ")
            raise self.refuse(
                f"{where + ': ' if where else ''}a value of {chars:,} characters; the limit "
                f"on one value is {self.max_cell_chars:,} characters",
                "cell_chars",
            )


@dataclass
class RowBudget:
    """What a streaming reader has read so far, checked against `limits` as it goes."""

    limits: ReadLimits | None
    rows: int = 0
    decoded_bytes: int = 0
    longest_value: int = 0  # characters (bytes for binary) of the longest value seen
    started: float = field(default_factory=time.monotonic)

    def add(self, rows: int, decoded_bytes: int) -> None:
        self.rows += rows
        self.decoded_bytes += decoded_bytes
        limits = self.limits
        if limits is None:
            return
        limits.check_rows(self.rows)
        limits.check_decoded(self.decoded_bytes)
        elapsed = time.monotonic() - self.started
        if elapsed > limits.max_seconds:
            raise limits.refuse(
                f"reading took longer than {limits.max_seconds:g} s (the limit on time), "
                f"after {self.rows:,} rows",
                "seconds",
            )

    def add_batch(self, batch: pa.RecordBatch) -> None:
        """An arrow batch, counted as decoded (its dictionaries expanded): the longest value
        it refers to first, then its size."""
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            self.check_cell(longest_text_in(column), column=name)
        self.add(batch.num_rows, decoded_bytes(batch))

    def check_cell(self, chars: int, row: int | None = None, column: str | None = None) -> None:
        self.longest_value = max(self.longest_value, chars)
        if self.limits is not None:
            self.limits.check_cell(chars, row, column)

    def check_value(self, value: Any, row: int, column: str | None = None) -> None:
        """Every string inside a decoded (JSON or CSV) value is within the cell bound."""
        if self.limits is not None:
            self.check_cell(longest_text(value), row, column)


def longest_text(value: Any) -> int:
    """The longest string anywhere inside a JSON-shaped value."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((longest_text(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((longest_text(v) for v in value), default=0)
    return 0


def check_declared(path: Path, limits: ReadLimits, is_parquet: bool) -> int:
    """Refuse a file whose declared size passes the bounds, before decoding anything.
    Returns the decoded size it declares (for text files, their size on disk)."""
    size = path.stat().st_size
    if not is_parquet:
        limits.check_decoded(size, declared=True)
        return size
    # Imported here: parquet_reads builds on this module's bounds.
    from trainer.data.parquet_reads import declared_decoded_bytes, read_footer

    return declared_decoded_bytes(read_footer(path, limits))
