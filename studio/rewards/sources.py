"""Where a test-run's responses come from: a dataset's reference answers, pasted
completions, or completions sampled from a model (the demo model or a checkpoint).

Each source becomes a list of `TrialRow`s, the calls `testrun.run_trial` makes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from studio.datasets.files import json_safe, read_slice
from studio.datasets.models import DatasetVersion
from studio.rewards.errors import TestRunError
from studio.rewards.sampler import sample_completions
from studio.rewards.testrun import TrialRow
from trainer.config.sampling import SamplingParams
from trainer.config.schema import DataConfig
from trainer.data.formats import DataFormatError, PromptRecord, records_from_rows


def solution_from_reference(ground_truth: Any, template: str) -> str:
    """The reference answer as a response, e.g. template "#### {ground_truth}"."""
    if isinstance(ground_truth, str):
        text = ground_truth
    elif isinstance(ground_truth, (dict, list)):
        text = json.dumps(json_safe(ground_truth), ensure_ascii=False)
    else:
        text = str(ground_truth)
    return template.replace("{ground_truth}", text)


def dataset_records(version: DatasetVersion, offset: int, count: int) -> list[PromptRecord]:
    """`count` rows of a dataset version from `offset`, read as the trainer reads them."""
    raw = read_slice(version, offset, count)
    if not raw:
        return []
    cfg = DataConfig(format=version.data_format, **version.column_mapping)
    try:
        return records_from_rows(raw, cfg, f"{version.dataset.name} v{version.number}")
    except DataFormatError as exc:  # validated at upload; only a changed reader gets here
        raise TestRunError("dataset_unreadable", str(exc)) from None


def _prompt_text(record: PromptRecord) -> str:
    return record.messages[-1]["content"]


def rows_from_references(
    version: DatasetVersion, offset: int, count: int, template: str
) -> list[TrialRow]:
    """Dataset rows, each answered by its reference answer through `template`."""
    return [
        TrialRow(
            data_source=record.data_source,
            solution_str=solution_from_reference(record.ground_truth, template),
            ground_truth=record.ground_truth,
            extra_info=record.extra_info,
            index=offset + position,
            prompt=_prompt_text(record),
        )
        for position, record in enumerate(dataset_records(version, offset, count))
    ]


def rows_from_completions(completions: Sequence[dict[str, Any]]) -> list[TrialRow]:
    """Pasted completions ({solution_str, ground_truth, data_source, extra_info})."""
    return [
        TrialRow(
            data_source=c["data_source"],
            solution_str=c["solution_str"],
            ground_truth=c["ground_truth"],
            extra_info=c["extra_info"],
            index=i,
        )
        for i, c in enumerate(completions)
    ]


@dataclass(frozen=True)
class SampledSource:
    model_dir: str  # HF folder or trainer checkpoint folder, as the worker sees it
    settings: SamplingParams
    time_limit_s: float


def rows_from_model(
    version: DatasetVersion,
    offset: int,
    count: int,
    source: SampledSource,
    on_progress: Callable[[int, int], None],
) -> list[TrialRow]:
    """Dataset prompts answered by `settings.n` completions each, sampled from a model in
    a `python -m trainer sample` subprocess. `on_progress(done, total)` follows it."""
    records = dataset_records(version, offset, count)
    if not records:
        return []
    completions = sample_completions(
        source.model_dir,
        [record.messages for record in records],
        source.settings,
        time_limit_s=source.time_limit_s,
        on_progress=on_progress,
    )
    return [
        TrialRow(
            data_source=records[c.prompt_index].data_source,
            solution_str=c.text,
            ground_truth=records[c.prompt_index].ground_truth,
            extra_info=records[c.prompt_index].extra_info,
            index=offset + c.prompt_index,
            prompt=_prompt_text(records[c.prompt_index]),
            sample=c.sample_index,
            finish_reason=c.finish_reason,
            error=f"sampling: {c.error}" if c.error else "",
        )
        for c in completions
    ]
