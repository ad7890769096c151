"""Dataset readers: every supported file becomes a list of `PromptRecord`.

Formats (`DataConfig.format`):

- ``verl``: verl's parquet, accepted unchanged: ``data_source``, ``prompt``
  (chat messages ``[{role, content}]``), ``ability``, ``reward_model``
  (``{style, ground_truth}``) and ``extra_info`` (``{split, index, ...}``).
  The same fields as JSON lines are read too.
- ``prompt_answer``: a table (parquet, JSONL or CSV) with a prompt column and an
  answer column, named by ``prompt_key``/``answer_key`` (TRL style). Mapping:
  prompt -> one user message (or the messages, if the cell already holds a chat),
  answer -> ``ground_truth``, a ``data_source`` column if present else
  ``DataConfig.data_source``, every other column -> ``extra_info``.
- ``auto``: ``verl`` when a ``reward_model`` column is present, else
  ``prompt_answer`` when both the prompt and answer columns are.

Only pyarrow is imported here (no torch): the studio uses these readers to
validate and preview uploads.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from trainer.config.schema import DataConfig
from trainer.data.parquet_reads import bounded_batches, open_compact, read_footer
from trainer.data.read_limits import (
    Bound,
    ReadLimitExceeded,
    ReadLimits,
    RowBudget,
    check_declared,
)

Row = dict[str, Any]
TableFormat = Literal["verl", "prompt_answer"]

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
CSV_SUFFIXES = (".csv",)


class DataFormatError(ValueError):
    """A dataset file is not in a supported shape; the message names file, row and column."""

    def __init__(
        self, path: str | Path, message: str, row: int | None = None, column: str | None = None
    ) -> None:
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.row = row  # 1-based data row (CSV header and blank JSONL lines not counted)
        self.column = column


class DataLimitError(DataFormatError):
    """The file passed a `ReadLimits` bound (named by `bound`)."""

    def __init__(self, path: str | Path, message: str, bound: Bound) -> None:
        super().__init__(path, message)
        self.bound = bound


@dataclass(frozen=True)
class PromptRecord:
    """One prompt of a dataset, whatever its file format."""

    index: int  # extra_info["index"] when it is an int, else the 0-based row position
    data_source: str  # selects the reward function (verl semantics)
    messages: list[dict[str, str]]  # chat messages; a plain string prompt is one user message
    ground_truth: Any  # reward_model.ground_truth (or the answer column), type as stored
    extra_info: dict[str, Any]  # passed to the reward function unchanged
    position: int = -1  # 0-based row of its file (-1: a prompt that came from no file)


def read_rows(path: str | Path, limits: ReadLimits | None = None) -> list[Row]:
    """Raw rows of a parquet, JSONL/JSON or CSV file (chosen by suffix). With `limits`
    (untrusted uploads) every bound is checked while streaming; passing one raises
    `DataFormatError` naming it. To refuse a file without holding its rows, `scan_rows`
    it first."""
    return list(iter_rows(path, RowBudget(limits)))


def scan_rows(path: str | Path, limits: ReadLimits) -> RowBudget:
    """Stream through the file checking `limits`, keeping nothing: memory stays at one
    record batch (or line) however large the file decodes, so a compressed bomb is
    refused having cost almost nothing. A parquet file's batches are only measured,
    never turned into rows. Returns what was counted."""
    budget = RowBudget(limits)
    for _ in iter_rows(path, budget, decode=False):
        pass
    return budget


def iter_rows(path: str | Path, budget: RowBudget, decode: bool = True) -> Iterator[Row]:
    """The file's rows one at a time, counted against `budget` (`decode` False: a parquet
    file is counted, and yields nothing)."""
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(path, "file not found")
    suffix = path.suffix.lower()
    allowed = PARQUET_SUFFIXES + JSONL_SUFFIXES + CSV_SUFFIXES
    if suffix not in allowed:
        raise DataFormatError(path, f"unsupported file type {suffix!r}; allowed: {list(allowed)}")
    try:
        if budget.limits is not None and suffix not in PARQUET_SUFFIXES:
            check_declared(path, budget.limits, is_parquet=False)
        if suffix in PARQUET_SUFFIXES:
            yield from _parquet_rows(path, budget, decode)
        elif suffix in JSONL_SUFFIXES:
            yield from _json_rows(path, budget)
        else:
            yield from _csv_rows(path, budget)
    except ReadLimitExceeded as exc:
        raise DataLimitError(path, str(exc), exc.bound) from None


def _parquet_rows(path: Path, budget: RowBudget, decode: bool) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        if budget.limits is None:  # the trainer's own files: one read, no counting
            yield from pq.read_table(path).to_pylist()
            return
        # Text columns stay dictionaries until a batch is measured (parquet_reads).
        parquet = open_compact(path, read_footer(path, budget.limits))
        for batch in bounded_batches(parquet, budget):
            if decode:
                yield from batch.to_pylist()
    except ReadLimitExceeded:
        raise
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise DataFormatError(path, f"not a readable parquet file ({exc})") from exc


def _csv_rows(path: Path, budget: RowBudget) -> Iterator[Row]:
    number = 0
    with path.open(newline="", encoding="utf-8-sig") as handle:  # -sig: Excel's BOM
        reader = csv.DictReader(handle)
        try:
            for row in reader:
                number += 1
                budget.add(1, sum(len(str(value)) for value in row.values()))
                for column, value in row.items():
                    budget.check_value(value, number, column)
                yield dict(row)
        except csv.Error as exc:  # e.g. a field over the csv module's own size limit
            raise DataFormatError(path, f"unreadable CSV ({exc})", row=number + 1) from None


def json_problem(exc: Exception) -> str:
    """What json.loads refused, in words (its message, or why it gave up)."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0]  # e.g. "Exceeds the limit (4300 digits) for integer ..."


def _json_items(path: Path, budget: RowBudget) -> Iterator[tuple[int, Any]]:
    with path.open(encoding="utf-8") as handle:
        if handle.read(4096).lstrip().startswith("["):
            # A JSON array of objects is parsed whole: its size on disk, checked against
            # the decoded-size bound before this, is what it costs.
            handle.seek(0)
            try:
                loaded = json.loads(handle.read())
            except (ValueError, RecursionError) as exc:  # also: a huge number, deep nesting
                raise DataFormatError(path, f"invalid JSON ({json_problem(exc)})") from None
            for number, item in enumerate(loaded, start=1):
                budget.add(1, 0)
                budget.check_value(item, number)
                yield number, item
            return
        handle.seek(0)
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            budget.add(1, len(line))
            try:
                item = json.loads(line)
            except (ValueError, RecursionError) as exc:  # also: a huge number, deep nesting
                raise DataFormatError(
                    path, f"line {number}: invalid JSON ({json_problem(exc)})"
                ) from None
            budget.check_value(item, number)
            yield number, item


def _json_rows(path: Path, budget: RowBudget) -> Iterator[Row]:
    for number, item in _json_items(path, budget):
        if not isinstance(item, dict):
            raise DataFormatError(
                path, f"item {number}: expected a JSON object, got {type(item).__name__}"
            )
        yield item


def columns_of(rows: Iterable[Row]) -> set[str]:
    columns: set[str] = set()
    for row in rows:
        columns.update(row)
    return columns


def detect_format(columns: set[str], cfg: DataConfig, path: str | Path = "<data>") -> TableFormat:
    """The table format for `cfg.format`, checking the columns it needs are present."""
    if cfg.format == "verl" or (cfg.format == "auto" and "reward_model" in columns):
        for needed in ("data_source", cfg.prompt_key, "reward_model"):
            if needed not in columns:
                raise DataFormatError(
                    path, f"verl data needs a {needed!r} column; columns are {sorted(columns)}"
                )
        return "verl"
    if cfg.format == "prompt_answer" or (cfg.prompt_key in columns and cfg.answer_key in columns):
        for needed, flag in ((cfg.prompt_key, "prompt_key"), (cfg.answer_key, "answer_key")):
            if needed not in columns:
                raise DataFormatError(
                    path,
                    f"prompt_answer data needs a {needed!r} column (data.{flag}); "
                    f"columns are {sorted(columns)}",
                )
        return "prompt_answer"
    raise DataFormatError(
        path,
        f"cannot tell the format from the columns {sorted(columns)}: verl data has "
        f"'reward_model'; prompt_answer data has {cfg.prompt_key!r} and {cfg.answer_key!r} "
        "(set data.prompt_key / data.answer_key to your column names)",
    )


def _messages(value: Any, path: Path, row: int, column: str) -> list[dict[str, str]]:
    if value is None:
        raise DataFormatError(path, "missing prompt", row=row, column=column)
    if isinstance(value, str):
        if not value.strip():
            raise DataFormatError(path, "empty prompt", row=row, column=column)
        return [{"role": "user", "content": value}]
    expected = "a string or a non-empty list of {role, content} messages"
    if not isinstance(value, list) or not value:
        shown = "an empty list" if value == [] else f"{type(value).__name__} {value!r:.60}"
        raise DataFormatError(path, f"expected {expected}, got {shown}", row=row, column=column)
    messages: list[dict[str, str]] = []
    for i, message in enumerate(value):
        if not (
            isinstance(message, dict)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), str)
        ):
            raise DataFormatError(
                path,
                f"message {i} must be {{'role': str, 'content': str}}, got {message!r:.80}",
                row=row,
                column=column,
            )
        messages.append({"role": message["role"], "content": message["content"]})
    if not any(m["content"].strip() for m in messages):
        raise DataFormatError(path, "empty prompt (every message is blank)", row=row, column=column)
    return messages


def _index(extra_info: dict[str, Any], position: int) -> int:
    index = extra_info.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else position


def _verl_record(row: Row, position: int, path: Path, cfg: DataConfig) -> PromptRecord:
    number = position + 1
    data_source = row.get("data_source")
    if not isinstance(data_source, str) or not data_source:
        raise DataFormatError(
            path, f"expected a non-empty string, got {data_source!r:.60}", number, "data_source"
        )
    reward_model = row.get("reward_model")
    if not isinstance(reward_model, dict) or "ground_truth" not in reward_model:
        raise DataFormatError(
            path,
            f"expected an object with a 'ground_truth' key, got {reward_model!r:.80}",
            number,
            "reward_model",
        )
    extra_info = row.get("extra_info")
    if extra_info is None:
        extra_info = {}
    if not isinstance(extra_info, dict):
        raise DataFormatError(
            path, f"expected an object, got {type(extra_info).__name__}", number, "extra_info"
        )
    return PromptRecord(
        index=_index(extra_info, position),
        data_source=data_source,
        messages=_messages(row.get(cfg.prompt_key), path, number, cfg.prompt_key),
        ground_truth=reward_model["ground_truth"],
        extra_info=dict(extra_info),
        position=position,
    )


def _prompt_answer_record(row: Row, position: int, path: Path, cfg: DataConfig) -> PromptRecord:
    number = position + 1
    answer = row.get(cfg.answer_key)
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        raise DataFormatError(path, "missing answer", number, cfg.answer_key)
    data_source = row.get("data_source")
    if data_source is None or data_source == "":
        data_source = cfg.data_source
    if not isinstance(data_source, str):
        raise DataFormatError(
            path, f"expected a string, got {type(data_source).__name__}", number, "data_source"
        )
    taken = {cfg.prompt_key, cfg.answer_key, "data_source"}
    extra_info = {key: value for key, value in row.items() if key not in taken}
    extra_info.setdefault("index", position)
    return PromptRecord(
        index=_index(extra_info, position),
        data_source=data_source,
        messages=_messages(row.get(cfg.prompt_key), path, number, cfg.prompt_key),
        ground_truth=answer,
        extra_info=extra_info,
        position=position,
    )


def records_from_rows(
    rows: list[Row], cfg: DataConfig, path: str | Path = "<data>"
) -> list[PromptRecord]:
    """Map raw rows to records (the mapping step, shared by all file types)."""
    path = Path(path)
    if not rows:
        raise DataFormatError(path, "the file has no rows")
    columns = columns_of(rows)
    table_format = detect_format(columns, cfg, path)
    to_record = _verl_record if table_format == "verl" else _prompt_answer_record
    for column in sorted(columns & set(MEDIA_COLUMNS)):
        _refuse_media(rows, column, path)
    return [to_record(row, position, path, cfg) for position, row in enumerate(rows)]


# verl's multimodal columns (its data.image_key, video_key and audio_key defaults): their
# contents go to a vision or audio processor beside the prompt. RL Studio trains text
# models, and a prompt whose image is dropped asks something else, so rows that carry
# any are refused rather than trained on without them.
MEDIA_COLUMNS = ("images", "videos", "audios")


def _refuse_media(rows: list[Row], column: str, path: Path) -> None:
    for number, row in enumerate(rows, start=1):
        value = row.get(column)
        if value is None or (hasattr(value, "__len__") and len(value) == 0):
            continue  # an empty column carries nothing
        raise DataFormatError(
            path,
            f"the {column!r} column holds {column} (verl's multimodal input); RL Studio "
            "trains text models, and training without them changes what each prompt asks",
            number,
            column,
        )


def read_prompt_records(path: str | Path, cfg: DataConfig) -> list[PromptRecord]:
    """Read one dataset file into records; raises `DataFormatError` on bad data."""
    return records_from_rows(read_rows(path), cfg, path)


def read_prompt_files(paths: Iterable[str | Path], cfg: DataConfig) -> list[PromptRecord]:
    """Records of several files, concatenated in order."""
    records: list[PromptRecord] = []
    for path in paths:
        records.extend(read_prompt_records(path, cfg))
    return records
