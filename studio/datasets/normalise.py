"""Turn an uploaded file into a validated parquet file plus its stats.

Nothing here touches storage or the database: `ingest` writes the normalised parquet
into a staging folder the caller owns, and the caller moves it into storage inside the
transaction that creates the version (see `studio.api.datasets.datasets`).

Reading and validation are the trainer's own (`trainer.data.formats`), so a file the
studio accepts is a file a run can read, with the same row/column error messages.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from studio.datasets.limits import import_limits
from studio.datasets.sniff import SourceFormat, UploadError, check_content, source_format_of
from studio.datasets.stats import dataset_stats
from studio.datasets.stored import RECORD_KEY, decoded_record
from trainer.config.schema import DataConfig
from trainer.data.formats import (
    DataFormatError,
    Row,
    columns_of,
    detect_format,
    read_rows,
    records_from_rows,
    scan_rows,
)

FormatChoice = Literal["auto", "verl", "prompt_answer"]
NORMALISED_NAME = "data.parquet"


@dataclass(frozen=True)
class ColumnMapping:
    """How to read a table; the same fields as the trainer's `DataConfig`."""

    format: FormatChoice = "auto"
    prompt_key: str = "prompt"
    answer_key: str = "answer"
    data_source: str = "default"  # for rows without a data_source column

    def data_config(self) -> DataConfig:
        try:
            return DataConfig(**asdict(self))
        except ValidationError as exc:
            raise UploadError(f"invalid column mapping: {exc.errors()[0]['msg']}") from None


@dataclass(frozen=True)
class IngestedFile:
    path: Path  # the normalised parquet, inside the staging folder
    source_format: SourceFormat
    data_format: Literal["verl", "prompt_answer"]
    mapping: dict[str, str]  # DataConfig fields a run needs to read the file
    row_count: int
    columns: list[dict[str, str]]  # [{"name", "type"}] of the parquet schema
    stats: dict[str, Any]
    checksum: str  # sha256 of the normalised parquet
    size_bytes: int


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _named(exc: DataFormatError, filename: str) -> UploadError:
    """The trainer's message, with the temporary path replaced by the uploaded name."""
    message = str(exc)
    if message.startswith(exc.path):
        message = filename + message[len(exc.path) :]
    return UploadError(message, row=exc.row, column=exc.column)


def _ordered_columns(rows: list[Row]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def table_from_rows(rows: list[Row], filename: str) -> pa.Table:
    """One arrow column per key; a column whose values mix types is named with its row."""
    arrays: dict[str, pa.Array] = {}
    for column in _ordered_columns(rows):
        values = [row.get(column) for row in rows]
        try:
            arrays[column] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            row, kind = _first_odd_row(values)
            where = f", row {row}" if row else ""
            raise UploadError(
                f"{filename}{where}, column {column!r}: values of different types in one "
                f"column ({kind}); make every value of a column the same type ({exc})",
                row=row,
                column=column,
            ) from None
    return pa.table(arrays)


def _first_odd_row(values: list[Any]) -> tuple[int | None, str]:
    first: type | None = None
    for number, value in enumerate(values, start=1):
        if value is None:
            continue
        if first is None:
            first = type(value)
        elif type(value) is not first and not {type(value), first} <= {int, float}:
            return number, f"{type(value).__name__} after {first.__name__}"
    return None, "nested values that do not share one shape"


def ingest(upload: Path, filename: str, mapping: ColumnMapping, staging: Path) -> IngestedFile:
    """Validate `upload` (named `filename` by the user) and write it as parquet to
    ``staging/data.parquet``. Raises `UploadError` with a message naming row/column."""
    source_format = source_format_of(filename)
    check_content(upload, filename, source_format)
    size_on_disk = upload.stat().st_size
    source = {"filename": filename, "size_bytes": size_on_disk, "sha256": sha256_of(upload)}
    cfg = mapping.data_config()
    # The trainer picks a reader by suffix; give it the file under its claimed type.
    readable = staging / f"upload{Path(filename).suffix.lower()}"
    shutil.copyfile(upload, readable)
    try:
        # Counted first, keeping nothing, so a file over a bound is refused before its
        # rows are held; only a file within every bound is then read for real.
        measured = scan_rows(readable, import_limits())
        rows = read_rows(readable)
    except DataFormatError as exc:
        raise _named(exc, filename) from None
    except UnicodeDecodeError as exc:  # already checked; kept as a clear error regardless
        raise UploadError(f"{filename}: not UTF-8 text ({exc.reason})") from None
    except RecursionError:
        raise UploadError(f"{filename}: values are nested too deeply") from None
    try:
        records = records_from_rows(rows, cfg, filename)
        data_format = detect_format(columns_of(rows), cfg, filename)
    except DataFormatError as exc:
        raise _named(exc, filename) from None
    normalised = staging / NORMALISED_NAME
    if source_format == "parquet":
        readable.replace(normalised)  # verl parquet is kept byte for byte
        schema = pq.read_schema(normalised)
    else:
        table = table_from_rows(rows, filename)
        try:
            pq.write_table(table, normalised)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
            raise UploadError(f"{filename}: cannot be stored as parquet: {exc}") from None
        readable.unlink()
        schema = table.schema
    return IngestedFile(
        path=normalised,
        source_format=source_format,
        data_format=data_format,
        mapping={
            "prompt_key": cfg.prompt_key,
            "answer_key": cfg.answer_key,
            "data_source": cfg.data_source,
        },
        row_count=len(records),
        columns=[{"name": field.name, "type": str(field.type)} for field in schema],
        stats={
            **dataset_stats(records),
            "upload": source,
            # What every read of the version is checked against (studio.datasets.stored).
            # A text file decodes to at least its size on disk, which its bound counts.
            RECORD_KEY: decoded_record(measured, 0 if source_format == "parquet" else size_on_disk),
        },
        checksum=sha256_of(normalised),
        size_bytes=normalised.stat().st_size,
    )
