"""Labelled rollout samples exported as a new version of a dataset (verl parquet).

A GRPO group repeats its prompt in every sample, so rows are unique by
(data_source, prompt, ground truth): the first labelled sample of a prompt (lowest id)
gives the row, and ``extra_info.source_sample`` points back at it. The file is read
back with the trainer's own reader before it is stored, so an exported version is
one a run can train on.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Prefetch

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import IngestedFile, sha256_of
from studio.datasets.stats import dataset_stats
from studio.datasets.versions import staging_folder, store_version
from studio.runs.models import Run
from studio.telemetry.models import RolloutSample, SampleLabel
from trainer.config.schema import DataConfig
from trainer.data.formats import DataFormatError, records_from_rows


class NothingToExport(ValueError):
    """The run has no live samples with the requested label."""


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
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for sample in samples:
        identity = (sample.data_source, sample.prompt, sample.ground_truth)
        if identity in seen:
            continue
        seen.add(identity)
        names = label or ",".join(sorted({item.label for item in sample.labels.all()}))
        rows.append(
            {
                "data_source": sample.data_source,
                "prompt": [{"role": "user", "content": sample.prompt}],
                "reward_model": {"style": "rule", "ground_truth": sample.ground_truth},
                "extra_info": {
                    "split": sample.split,
                    "index": len(rows),
                    "source_run": run.pk,
                    "source_sample": sample.pk,
                    "label": names,
                },
            }
        )
    return rows


def export_labelled(
    run: Run,
    dataset: Dataset,
    label: str | None,
    author: User,
    on_created: Callable[[DatasetVersion], None] = lambda version: None,
) -> DatasetVersion:
    """Write the labelled samples of `run` as the next version of `dataset`.

    `on_created` runs inside the transaction that creates the version (the caller's
    audit event), so either both are written or neither, and the file is removed.
    """
    rows = verl_rows(run, labelled_samples(run, label), label)
    if not rows:
        wanted = f"the label {label!r}" if label else "a label"
        raise NothingToExport(f"run {run.pk} has no live samples with {wanted}")
    filename = f"run-{run.pk}-labelled.parquet"
    staging = staging_folder()
    try:
        path = staging / filename
        pq.write_table(pa.Table.from_pylist(rows), path)
        table = pq.read_table(path)
        cfg = DataConfig(format="verl")
        try:
            records = records_from_rows(table.to_pylist(), cfg, filename)
        except DataFormatError as exc:  # e.g. a sample with an empty prompt
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
        return store_version(dataset, ingested, message=message, user=author, on_created=on_created)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
