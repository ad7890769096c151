"""Checks that an uploaded file is what its name claims, before any parser sees it.

Parsers give poor messages for the usual mistakes (an image renamed to .parquet, an
Excel file renamed to .csv, Latin-1 text, a CSV row with a missing comma), so these
are caught here and named in words.
"""

from __future__ import annotations

import codecs
import csv
from pathlib import Path
from typing import Literal

SourceFormat = Literal["parquet", "jsonl", "csv"]

SUFFIX_FORMATS: dict[str, SourceFormat] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
}

PARQUET_MAGIC = b"PAR1"
# Leading bytes of files people upload by mistake, to say what the file really is.
KNOWN_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one)"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office document (.xls/.doc)"),
    (b"SQLite format 3", "an SQLite database"),
    (PARQUET_MAGIC, "a parquet file"),
)
CHUNK = 1024 * 1024


class UploadError(ValueError):
    """The upload can't become a dataset version; the message says why, and where."""

    def __init__(self, message: str, row: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.row = row
        self.column = column


def source_format_of(filename: str) -> SourceFormat:
    suffix = Path(filename).suffix.lower()
    if suffix not in SUFFIX_FORMATS:
        allowed = ", ".join(sorted(SUFFIX_FORMATS))
        raise UploadError(
            f"{filename}: unsupported file type {suffix or '(no extension)'!r}; "
            f"upload one of: {allowed}"
        )
    return SUFFIX_FORMATS[suffix]


def _what_it_is(head: bytes) -> str | None:
    for magic, name in KNOWN_MAGIC:
        if head.startswith(magic):
            return name
    return None


def check_content(path: Path, filename: str, source_format: SourceFormat) -> None:
    """Raise `UploadError` when the bytes do not match the claimed format."""
    size = path.stat().st_size
    if size == 0:
        raise UploadError(f"{filename}: the file is empty (0 bytes)")
    with path.open("rb") as handle:
        head = handle.read(16)
        if source_format == "parquet":
            handle.seek(max(0, size - 4))
            tail = handle.read(4)
            if not (head.startswith(PARQUET_MAGIC) and tail == PARQUET_MAGIC):
                actual = _what_it_is(head)
                looks = f"; it looks like {actual}" if actual and actual != "a parquet file" else ""
                truncated = " (or it was cut short)" if head.startswith(PARQUET_MAGIC) else ""
                raise UploadError(
                    f"{filename}: not a parquet file{truncated}: parquet files start and end "
                    f"with the bytes 'PAR1'{looks}"
                )
            return
    actual = _what_it_is(head)
    if actual is not None:
        raise UploadError(
            f"{filename}: named as {source_format.upper()} text but it is {actual}; "
            "upload a UTF-8 text file (or give the file its real extension)"
        )
    _check_utf8_text(path, filename)
    if source_format == "csv":
        _check_csv_shape(path, filename)


def _check_utf8_text(path: Path, filename: str) -> None:
    """Strict UTF-8 (a BOM is allowed) with no NUL bytes; the error gives line and byte."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    offset = 0
    line = 1
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            nul = chunk.find(b"\x00")
            if nul >= 0:
                at_line = line + chunk.count(b"\n", 0, nul)
                raise UploadError(
                    f"{filename}: line {at_line} (byte {offset + nul}) contains a NUL byte; "
                    "this is binary data, not UTF-8 text"
                )
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                at_line = line + chunk.count(b"\n", 0, exc.start)
                raise UploadError(
                    f"{filename}: not UTF-8 text: invalid byte 0x{chunk[exc.start]:02x} at "
                    f"line {at_line} (byte {offset + exc.start}); save the file as UTF-8"
                ) from None
            line += chunk.count(b"\n")
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise UploadError(
                f"{filename}: not UTF-8 text: the file ends inside a multi-byte character"
            ) from None


def _check_csv_shape(path: Path, filename: str) -> None:
    """A named, unique header, and every data row with as many fields as the header."""
    row = 0
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if not header:
                raise UploadError(f"{filename}: the CSV file has no header row")
            seen: set[str] = set()
            for i, name in enumerate(header, start=1):
                if not name.strip():
                    raise UploadError(
                        f"{filename}: header field {i} is empty; every column needs a name",
                        column=name,
                    )
                if name in seen:
                    raise UploadError(
                        f"{filename}: column {name!r} appears twice in the header", column=name
                    )
                seen.add(name)
            for fields in reader:
                if not fields:
                    continue  # blank line; the reader skips these too
                row += 1
                if len(fields) != len(header):
                    raise UploadError(
                        f"{filename}, row {row} (line {reader.line_num}): {len(fields)} "
                        f"fields, but the header has {len(header)} "
                        f"({', '.join(header)[:200]}); quote fields that contain commas",
                        row=row,
                    )
        except csv.Error as exc:
            raise UploadError(
                f"{filename}, line {reader.line_num}: malformed CSV ({exc})"
            ) from None
    if row == 0:
        raise UploadError(f"{filename}: the CSV file has a header but no data rows")
