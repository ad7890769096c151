"""The dataset version row a sample's prompt came from, for a label export to copy.

The trainer reports each sample's row as its position in the file it read
(`SampleRecord.row`); the studio served that file from a dataset version, whole or one
side of its held-out split (`studio.api.trainer_ingest.endpoints.run_split`), so the
position maps back to one row of the version. The row is read with the trainer's own
reader, under the version's column mapping: its prompt as stored (messages or text,
never the chat-templated text a sample shows), its ground truth and its own extra info.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

from studio.datasets.heldout import held_out_mask
from studio.datasets.models import DatasetVersion
from studio.references.reference import Reference
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample
from trainer.config.schema import DataConfig
from trainer.data.formats import DataFormatError, PromptRecord, records_from_rows


@dataclass(frozen=True)
class SourceFile:
    """A file a run read: which version it was served from, and which of its rows."""

    version: DatasetVersion
    side: str  # "all", "train" (not held out) or "held_out"


def _reads_training_rows(run: Run) -> bool:
    """An evaluation asked to answer the rows its source run trained on reads the train
    side as its validation file (studio.evaluations.creation)."""
    files = run.config.get("data", {}).get("val_files") or []
    first = Reference.parse_or_none(files[0]) if files else None
    return first is not None and first.kind == "dataset-version" and first.part == "train"


def source_file(run: Run, split: str) -> SourceFile | None:
    """The version file a run's samples of `split` came from; None where unknown."""
    version = run.dataset_version
    if version is None:  # a provenance record whose files are gone
        return None
    training = split == "train" or (split == "eval" and _reads_training_rows(run))
    if training:
        return SourceFile(version, "train" if run.validation == "held_out" else "all")
    if run.validation == "held_out":
        return SourceFile(version, "held_out")
    if run.validation == "dataset_version" and run.validation_version is not None:
        return SourceFile(run.validation_version, "all")
    return None


def _mapping_config(version: DatasetVersion) -> DataConfig:
    mapping = {
        key: version.column_mapping[key]
        for key in ("prompt_key", "answer_key", "data_source")
        if key in version.column_mapping
    }
    return DataConfig(format=version.data_format, **mapping)


def source_records(run: Run, samples: list[RolloutSample]) -> dict[int, PromptRecord]:
    """Sample id -> the version row its prompt came from, for every sample whose row is
    known (others are left out). Each version file is read once."""
    wanted: dict[tuple[int, str], list[RolloutSample]] = {}
    files: dict[tuple[int, str], SourceFile] = {}
    for sample in samples:
        if sample.source_row is None:
            continue
        found = source_file(run, sample.split)
        if found is None:
            continue
        key = (found.version.pk, found.side)
        files[key] = found
        wanted.setdefault(key, []).append(sample)
    records: dict[int, PromptRecord] = {}
    for key, chosen in wanted.items():
        records.update(_read(files[key], chosen))
    return records


def _read(found: SourceFile, samples: list[RolloutSample]) -> dict[int, PromptRecord]:
    with found.version.file.open("rb") as handle:
        table = pq.read_table(handle)
    positions = list(range(table.num_rows))
    if found.side != "all":
        held = held_out_mask(table)
        positions = [i for i in positions if held[i] == (found.side == "held_out")]
    rows: dict[int, int] = {}  # sample id -> row of the version file
    for sample in samples:
        assert sample.source_row is not None
        if sample.source_row < len(positions):
            rows[sample.pk] = positions[sample.source_row]
    if not rows:
        return {}
    order = sorted(set(rows.values()))
    raw: list[dict[str, Any]] = table.take(order).to_pylist()
    try:
        read = records_from_rows(
            raw, _mapping_config(found.version), found.version.file.name or "rows.parquet"
        )
    except DataFormatError:
        return {}  # a version the trainer could read then reads the same now; be safe
    by_row = dict(zip(order, read, strict=True))
    return {pk: by_row[row] for pk, row in rows.items()}
