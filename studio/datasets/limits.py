"""The bounds on one dataset import, from settings (docs/operations.md lists them).

An upload is untrusted: a 34 KB parquet file can decode to 300 MB, and an 820-byte one
whose rows all refer to one dictionary value to 1.5 GiB. Every import, in the web
process or a worker, reads with these `ReadLimits` (trainer.data.read_limits): the
declared size is checked before anything is decoded, and every bound again while the
file streams, dictionaries counted as decoded. Every read of a stored version is
checked against them too (studio.datasets.stored)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from django.conf import settings

from studio.datasets.sniff import SourceFormat, UploadError
from trainer.data.formats import DataFormatError, DataLimitError, scan_rows
from trainer.data.read_limits import ReadLimitExceeded, ReadLimits, check_declared

SETTINGS_HINT = (
    "an administrator can raise RLSTUDIO_IMPORT_MAX_DECODED_BYTES, _ROWS, _CELL_CHARS or _SECONDS"
)


def import_limits() -> ReadLimits:
    return ReadLimits(
        max_decoded_bytes=settings.RLSTUDIO_IMPORT_MAX_DECODED_BYTES,
        max_rows=settings.RLSTUDIO_IMPORT_MAX_ROWS,
        max_cell_chars=settings.RLSTUDIO_IMPORT_MAX_CELL_CHARS,
        max_seconds=settings.RLSTUDIO_IMPORT_MAX_SECONDS,
        hint=SETTINGS_HINT,
    )


def import_in_worker(path: Path, filename: str, source_format: SourceFormat) -> bool:
    """Whether the upload decodes to more than the web process imports itself
    (RLSTUDIO_ASYNC_IMPORT_BYTES); raises `UploadError` for one over a bound.

    A text file decodes to its size. A parquet file's footer gives only a lower bound
    (dictionary-encoded text is counted once), so it is streamed, keeping nothing, until
    it passes the web's share: at most one record batch is in memory at a time."""
    limits = import_limits()
    in_web = settings.RLSTUDIO_ASYNC_IMPORT_BYTES
    try:
        declared = check_declared(path, limits, is_parquet=source_format == "parquet")
        # What it says it decodes to, and its size on disk: both only bound it from below.
        if max(declared, path.stat().st_size) > in_web or source_format != "parquet":
            return max(declared, path.stat().st_size) > in_web
        scan_rows(path, replace(limits, max_decoded_bytes=in_web))
    except ReadLimitExceeded as exc:
        raise UploadError(f"{filename}: {exc}") from None
    except DataLimitError as exc:
        if exc.bound == "decoded_bytes":
            return True  # more than the web's share: the worker reads it, bounded again
        raise UploadError(filename + str(exc)[len(exc.path) :]) from None
    except (DataFormatError, OSError, ValueError):
        return False  # unreadable: the import itself says why, naming row and column
    return False
