"""The columns of a file a user is about to upload, read from a small sample of it.

The browser sends the first bytes of a CSV or JSONL file (cut anywhere: a partial
last line is dropped) or the last bytes of a parquet file (its footer holds the
schema), so the column mapping can be chosen before the whole file travels. Nothing
is stored; the upload itself is validated in full later (`studio.datasets.ingest`).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from studio.datasets.sniff import PARQUET_MAGIC, UploadError, source_format_of
from trainer.data.formats import json_problem

SAMPLE_MAX_BYTES = 1024 * 1024
EXAMPLE_ROWS = 3
EXAMPLE_CHARS = 200
PROMPT_NAMES = ("prompt", "question", "problem", "input", "instruction", "query")
ANSWER_NAMES = ("answer", "ground_truth", "solution", "target", "output", "label", "response")


@dataclass
class DetectedColumns:
    source_format: Literal["parquet", "jsonl", "csv"]
    columns: list[str]
    examples: list[dict[str, str]] = field(default_factory=list)  # first rows, shortened
    data_format: Literal["verl", "prompt_answer"] = "prompt_answer"
    prompt_key: str = ""
    answer_key: str = ""


def detect_columns(sample: bytes, filename: str, truncated: bool) -> DetectedColumns:
    """Columns of `filename` from `sample` (its head, or a parquet file's tail);
    `truncated` says the file goes on past the sample. Raises `UploadError`."""
    source_format = source_format_of(filename)
    if not sample:
        raise UploadError(f"{filename}: the file is empty (0 bytes)")
    if source_format == "parquet":
        columns, examples = _parquet_columns(sample, filename), list[dict[str, str]]()
    else:
        text = _text_of(sample, filename, truncated)
        if source_format == "csv":
            columns, examples = _csv_columns(text, filename)
        else:
            columns, examples = _jsonl_columns(text, filename)
    if not columns:
        raise UploadError(f"{filename}: no columns found in the first {len(sample)} bytes")
    detected = DetectedColumns(source_format, columns, examples)
    if "reward_model" in columns:
        detected.data_format = "verl"
        detected.prompt_key = "prompt" if "prompt" in columns else columns[0]
        return detected
    detected.prompt_key = _first_present(columns, PROMPT_NAMES) or columns[0]
    others = [c for c in columns if c != detected.prompt_key]
    detected.answer_key = _first_present(others, ANSWER_NAMES) or (others[0] if others else "")
    return detected


def _first_present(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def _text_of(sample: bytes, filename: str, truncated: bool) -> str:
    if truncated:  # the sample may end inside a line, even inside a UTF-8 character
        sample = sample[: sample.rfind(b"\n") + 1] or sample
    try:
        return sample.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UploadError(
            f"{filename}: not UTF-8 text: invalid byte 0x{sample[exc.start]:02x} at byte "
            f"{exc.start}; save the file as UTF-8"
        ) from None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"


def _csv_columns(text: str, filename: str) -> tuple[list[str], list[dict[str, str]]]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = [name for name in (reader.fieldnames or []) if name is not None]
        examples: list[dict[str, str]] = []
        for row in reader:
            if len(examples) == EXAMPLE_ROWS:
                break
            examples.append({k: _short(v) for k, v in row.items() if k is not None and v})
    except csv.Error as exc:
        raise UploadError(f"{filename}: malformed CSV ({exc})") from None
    return columns, examples


def _jsonl_columns(text: str, filename: str) -> tuple[list[str], list[dict[str, str]]]:
    if text.lstrip().startswith("["):
        raise UploadError(
            f"{filename}: a JSON array, not JSON lines; its columns show after the upload "
            "(or save it with one object per line)"
        )
    seen: dict[str, None] = {}
    examples: list[dict[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:  # also: a huge number, deep nesting
            raise UploadError(
                f"{filename}, line {number}: not valid JSON ({json_problem(exc)})"
            ) from None
        if not isinstance(row, dict):
            raise UploadError(
                f"{filename}, line {number}: a {type(row).__name__}, not an object with columns"
            )
        for key in row:
            seen.setdefault(key, None)
        if len(examples) < EXAMPLE_ROWS:
            examples.append({k: _short(v) for k, v in row.items()})
    return list(seen), examples


def _parquet_columns(sample: bytes, filename: str) -> list[str]:
    """Schema from the footer: the sample is the whole file or its tail."""
    if not sample.endswith(PARQUET_MAGIC):
        raise UploadError(f"{filename}: not a parquet file (it does not end with 'PAR1')")
    readable = sample if sample.startswith(PARQUET_MAGIC) else PARQUET_MAGIC + sample
    try:
        schema = pq.read_schema(io.BytesIO(readable))
    except (pa.ArrowInvalid, OSError) as exc:
        raise UploadError(
            f"{filename}: the parquet footer could not be read from the last {len(sample)} "
            f"bytes ({exc})"
        ) from None
    return list(schema.names)
