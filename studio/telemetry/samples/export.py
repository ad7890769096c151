"""Labelled rollout samples exported as a dataset version (verl parquet): version 1 of a
new dataset of the run's project, or the next version of an existing one.

A GRPO group repeats its prompt in every sample, so rows are unique by
(data_source, prompt, ground truth): the first labelled sample of a prompt (lowest id)
gives the row, and ``extra_info.source_sample`` points back at it. The file is read
back with the trainer's own reader before it is stored, so an exported version is
one a run can train on. `preview_export` says what an export would store (rows, rows
per label, the version it would become) without storing anything.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Prefetch

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import IngestedFile, sha256_of
from studio.datasets.services import create_dataset
from studio.datasets.stats import dataset_stats
from studio.datasets.versions import staging_folder, store_version
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample, SampleLabel
from studio.telemetry.samples.source_rows import source_records
from trainer.config.schema import DataConfig
from trainer.data.formats import DataFormatError, records_from_rows


class NothingToExport(ValueError):
    """The run has no live samples with the requested label."""


class DatasetNameTaken(ValueError):
    """The run's project already has a dataset with the new dataset's name."""


@dataclass(frozen=True)
class ExportTarget:
    """Where an export goes: an existing `dataset` of the run's project, or a new
    dataset named `new_name` (exactly one of the two)."""

    dataset: Dataset | None = None
    new_name: str | None = None

    def __post_init__(self) -> None:
        if (self.dataset is None) == (self.new_name is None):
            raise ValueError("an export goes to an existing dataset or a new one")


@dataclass(frozen=True)
class ExportPreview:
    """What an export would store, and where."""

    rows: int  # one per prompt
    samples: int  # labelled samples (a GRPO group's samples share one prompt)
    labels: list[tuple[str, int]]  # samples per label, most first (a sample may have several)
    from_text: int  # rows made from a sample's shown prompt: its dataset row is unknown
    examples: list[dict[str, Any]]  # the first rows, as they would be written
    dataset: Dataset | None  # None: a new dataset
    name: str  # the dataset's name (the new one's, or the existing one's)
    number: int  # the version number the export would get
    latest_number: int | None  # the existing dataset's latest version, if any
    latest_rows: int | None


def _wanted(label: str | None) -> str:
    return f"the label {label!r}" if label else "a label"


def _check_name_free(run: Run, name: str) -> None:
    if Dataset.objects.filter(project=run.project, name=name).exists():
        raise DatasetNameTaken(
            f"A dataset named {name!r} already exists in {run.project.slug!r}; pick another "
            "name or add a version to it."
        )


def _rows_of(
    run: Run, label: str | None, samples: list[RolloutSample] | None = None
) -> list[dict[str, Any]]:
    """The verl rows of the export, refused like the export refuses them."""
    if samples is None:
        samples = labelled_samples(run, label)
    rows = verl_rows(run, samples, label)
    if not rows:
        raise NothingToExport(f"run {run.pk} has no live samples with {_wanted(label)}")
    try:
        records_from_rows(rows, DataConfig(format="verl"), f"run-{run.pk}-labelled.parquet")
    except DataFormatError as exc:  # e.g. a sample with an empty prompt
        raise NothingToExport(f"the labelled samples do not make a valid dataset: {exc}") from None
    return rows


def preview_export(run: Run, target: ExportTarget, label: str | None) -> ExportPreview:
    """What `export_labelled(run, target, label, ...)` would store now; stores nothing."""
    if target.new_name is not None:
        _check_name_free(run, target.new_name)
    samples = labelled_samples(run, label)
    rows = _rows_of(run, label, samples)
    counts = Counter(
        name
        for sample in samples
        for name in ([label] if label else {item.label for item in sample.labels.all()})
    )
    labels = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    latest = None
    if target.dataset is not None:
        latest = target.dataset.versions.order_by("-number").first()
    return ExportPreview(
        rows=len(rows),
        samples=len(samples),
        labels=labels,
        from_text=sum(1 for row in rows if row["extra_info"].get("from_sample_text")),
        examples=[_example(row) for row in rows[:PREVIEW_ROWS]],
        dataset=target.dataset,
        name=target.dataset.name if target.dataset is not None else str(target.new_name),
        number=latest.number + 1 if latest is not None else 1,
        latest_number=latest.number if latest is not None else None,
        latest_rows=latest.row_count if latest is not None else None,
    )


PREVIEW_ROWS = 3


def _example(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the confirmation shows it: the prompt's messages, ground truth, labels."""
    return {
        "data_source": row["data_source"],
        "prompt": row["prompt"],
        "ground_truth": str(row["reward_model"]["ground_truth"])[:500],
        "label_names": row["extra_info"]["label"],
    }


def labelled_samples(run: Run, label: str | None) -> list[RolloutSample]:
    """Live samples of `run` carrying `label` (any label when None), oldest first."""
    labels = SampleLabel.objects.filter(sample=OuterRef("pk"))
    if label is not None:
        labels = labels.filter(label=label)
    return list(
        RolloutSample.objects.filter(run=run, superseded=False)
        .filter(Exists(labels))
        .defer("search", "token_data", "turns")
        .prefetch_related(Prefetch("labels", queryset=SampleLabel.objects.order_by("label")))
        .order_by("id")
    )


def verl_rows(run: Run, samples: list[RolloutSample], label: str | None) -> list[dict[str, Any]]:
    """One verl row per labelled prompt: the dataset version's own row where the sample
    says which it was (its prompt before any chat template, its ground truth and extra
    info), else the sample's prompt text (`extra_info.from_sample_text`)."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    sources = source_records(run, samples)
    # Only when some sample has it, so an export without extras keeps verl's columns.
    with_extras = any(sample.reward_extra for sample in samples)
    for sample in samples:
        record = sources.get(sample.pk)
        identity: tuple[Any, ...] = (
            ("row", sample.split, sample.source_row)
            if record is not None
            else ("text", sample.data_source, sample.prompt, sample.ground_truth)
        )
        if identity in seen:
            continue
        seen.add(identity)
        names = label or ",".join(sorted({item.label for item in sample.labels.all()}))
        own = {**record.extra_info} if record is not None else {"from_sample_text": True}
        rows.append(
            {
                "data_source": record.data_source if record else sample.data_source,
                "prompt": record.messages
                if record
                else [{"role": "user", "content": sample.prompt}],
                "reward_model": {
                    "style": "rule",
                    "ground_truth": record.ground_truth if record else sample.ground_truth,
                },
                "extra_info": {
                    **own,
                    "split": sample.split,
                    "index": len(rows),
                    "source_run": run.pk,
                    "source_sample": sample.pk,
                    "label": names,
                    # What the reward said about this response beyond its score, as JSON
                    # text: parquet has no column type for dicts whose keys vary by row.
                    **(
                        {"reward_extra_info": json.dumps(sample.reward_extra, ensure_ascii=False)}
                        if with_extras
                        else {}
                    ),
                },
            }
        )
    return rows


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    """The rows as one table. Rows copied from a dataset keep their ground truth's type;
    beside rows made from sample text (strings) the types may disagree, and then every
    ground truth is written as text, as the samples show it."""
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        as_text = [
            {**row, "reward_model": {**row["reward_model"], "ground_truth": str(truth)}}
            for row in rows
            for truth in [row["reward_model"]["ground_truth"]]
        ]
        return pa.Table.from_pylist(as_text)


def export_labelled(
    run: Run,
    target: ExportTarget,
    label: str | None,
    author: User,
    on_created: Callable[[DatasetVersion], None] = lambda version: None,
) -> DatasetVersion:
    """Write the labelled samples of `run` as version 1 of a new dataset of the run's
    project (`target.new_name`) or as the next version of `target.dataset`.

    `on_created` runs inside the transaction that creates the version (and the new
    dataset, with its own `dataset.create` audit event): the caller's audit event, so
    either all are written or none, and the file is removed.
    """
    if target.new_name is not None:
        _check_name_free(run, target.new_name)
    rows = _rows_of(run, label)
    filename = f"run-{run.pk}-labelled.parquet"
    staging = staging_folder()
    try:
        path = staging / filename
        pq.write_table(_table(rows), path)
        table = pq.read_table(path)
        cfg = DataConfig(format="verl")
        try:
            records = records_from_rows(table.to_pylist(), cfg, filename)
        except DataFormatError as exc:
            raise NothingToExport(
                f"the labelled samples do not make a valid dataset: {exc}"
            ) from None
        checksum, size = sha256_of(path), path.stat().st_size
        ingested = IngestedFile(
            path=path,
            source_format="parquet",
            data_format="verl",
            mapping={
                "prompt_key": cfg.prompt_key,
                "answer_key": cfg.answer_key,
                "data_source": cfg.data_source,
            },
            row_count=len(rows),
            columns=[{"name": f.name, "type": str(f.type)} for f in table.schema],
            stats={
                **dataset_stats(records),
                "upload": {"filename": filename, "size_bytes": size, "sha256": checksum},
            },
            checksum=checksum,
            size_bytes=size,
        )
        message = (
            f"{len(rows)} prompts labelled {label!r} in run {run.name!r}"
            if label
            else f"{len(rows)} labelled prompts from run {run.name!r}"
        )[:300]
        with transaction.atomic():
            dataset = target.dataset
            if dataset is None:
                name = str(target.new_name)
                try:
                    dataset = create_dataset(
                        run.project, name, f"Labelled samples of run {run.name!r}.", author
                    )
                except IntegrityError:  # created at the same time by someone else
                    raise DatasetNameTaken(
                        f"A dataset named {name!r} was just created in {run.project.slug!r}; "
                        "pick another name."
                    ) from None
            return store_version(
                dataset, ingested, message=message, user=author, on_created=on_created
            )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
