"""Reading an untrusted parquet file so that what it decodes to is known before it is.

A parquet footer declares each column's uncompressed size, but for a dictionary-encoded
column that is the size of its dictionary and its indices, not of its rows: one 1 MiB
string referenced by 1,500 rows declares about 1 MB and decodes to 1.5 GiB. So:

- `read_footer` refuses from the footer what it can know there: too many rows, a footer
  too large, fixed-width columns (count times width, whatever their encoding), a text
  encoding that can't be read compactly, and the declared size of text columns, which
  is only a lower bound on what they decode to;
- `open_compact` reads every text column as a dictionary, whatever arrow type the file
  gives it: a dictionary page stays as stored (a plain page is read into one), so a
  record batch costs about what the file stores, not what its rows decode to;
- `bounded_batches` measures each batch as decoded (`decoded_size`, dictionaries
  expanded) and checks every bound before handing it on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trainer.data.decoded_size import OFFSET_BYTES
from trainer.data.read_limits import ReadLimits, RowBudget, human_size

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

# A parquet footer is a few KB per row group; one larger than this is not a dataset.
MAX_FOOTER_BYTES = 16 * 1024**2
# Rows per record batch while measuring. Text stays compact (dictionary indices), so a
# batch costs little however long its values; and pyarrow hands every batch a copy of
# the dictionary built so far (a column's plain pages are added to it), so small
# batches would cost time quadratic in the rows.
PARQUET_BATCH_ROWS = 65_536
# Bytes per value of each fixed-width physical type, as arrow holds it.
FIXED_WIDTHS = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
DECIMAL_BYTES = 32  # a decimal stored as bytes becomes a 128- or 256-bit arrow decimal
# pyarrow cannot read these into a dictionary, and DELTA_BYTE_ARRAY compresses by itself
# (a value stores only what differs from the one before), so neither has a known size.
UNREADABLE_COMPACTLY = ("DELTA_BYTE_ARRAY", "DELTA_LENGTH_BYTE_ARRAY")


class ParquetSource(Protocol):
    """An open file pyarrow can read at random (a stored version, in any storage)."""

    def read(self, size: int = ..., /) -> bytes: ...
    def seek(self, offset: int, whence: int = ..., /) -> int: ...
    def tell(self) -> int: ...


def _footer_length(handle: ParquetSource) -> int:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    length = 0
    if size >= 12:
        handle.seek(size - 8)
        length = int.from_bytes(handle.read(4), "little")
    handle.seek(0)
    return length


def _is_text_column(column: pq.ColumnSchema) -> bool:
    return bool(column.physical_type == "BYTE_ARRAY" and column.logical_type.type != "DECIMAL")


def text_columns(metadata: pq.FileMetaData) -> list[str]:
    """The leaf paths (``prompt.list.element.content``) of every text or binary column."""
    schema = metadata.schema
    return [
        schema.column(i).path
        for i in range(metadata.num_columns)
        if _is_text_column(schema.column(i))
    ]


def declared_decoded_bytes(metadata: pq.FileMetaData) -> int:
    """What the footer says the file decodes to, at least: a fixed-width column's count
    times its width (exact, however it is encoded), and a text column's uncompressed
    size (for a dictionary-encoded one, only its dictionary and indices: the streaming
    count, not this, sees its rows)."""
    schema = metadata.schema
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for i in range(metadata.num_columns):
            column, chunk = schema.column(i), row_group.column(i)
            if _is_text_column(column):
                at_least = chunk.num_values * OFFSET_BYTES  # a value decodes to its offset
                total += max(chunk.total_uncompressed_size, at_least)
            elif column.physical_type == "FIXED_LEN_BYTE_ARRAY":
                total += chunk.num_values * column.length
            elif column.physical_type == "BYTE_ARRAY":
                total += chunk.num_values * DECIMAL_BYTES
            else:
                total += chunk.num_values * FIXED_WIDTHS.get(column.physical_type, 8)
    return total


def _check_columns(metadata: pq.FileMetaData, limits: ReadLimits) -> None:
    schema = metadata.schema
    for i in range(metadata.num_columns):
        column = schema.column(i)
        if column.physical_type == "FIXED_LEN_BYTE_ARRAY":  # every value is this long
            limits.check_cell(column.length, column=column.path)
        if not _is_text_column(column):
            continue
        for group in range(metadata.num_row_groups):
            encodings = metadata.row_group(group).column(i).encodings
            unreadable = [name for name in encodings if name in UNREADABLE_COMPACTLY]
            if unreadable:
                raise limits.refuse(
                    f"column {column.path!r} is stored with the {unreadable[0]} encoding, "
                    "whose decoded size can't be bounded before decoding; save the file with "
                    "plain or dictionary encoding (pyarrow's default)",
                    "encoding",
                )


def read_footer(source: Path | ParquetSource, limits: ReadLimits) -> pq.FileMetaData:
    """The file's footer, once it passes every bound the footer can show."""
    import pyarrow.parquet as pq

    if isinstance(source, Path):
        with source.open("rb") as handle:
            length = _footer_length(handle)
    else:
        length = _footer_length(source)
    if length > MAX_FOOTER_BYTES:
        raise limits.refuse(
            f"the parquet footer is {human_size(length)}; at most "
            f"{human_size(MAX_FOOTER_BYTES)} is read",
            "footer",
        )
    metadata = pq.read_metadata(source)
    limits.check_rows(metadata.num_rows)
    _check_columns(metadata, limits)
    limits.check_decoded(declared_decoded_bytes(metadata), declared=True)
    return metadata


def open_compact(
    source: Path | ParquetSource, metadata: pq.FileMetaData | None = None
) -> pq.ParquetFile:
    """The file, its text columns read as dictionaries (`to_pylist` gives the same values)."""
    import pyarrow.parquet as pq

    if metadata is None:
        metadata = pq.read_metadata(source)
    return pq.ParquetFile(source, metadata=metadata, read_dictionary=text_columns(metadata))


def bounded_batches(
    parquet: pq.ParquetFile, budget: RowBudget, batch_rows: int = PARQUET_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """The file's record batches, each counted against `budget` (`RowBudget.add_batch`)
    before it is handed on."""
    for batch in parquet.iter_batches(batch_size=batch_rows):
        budget.add_batch(batch)
        yield batch
