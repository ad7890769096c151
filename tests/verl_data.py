"""verl-shaped test data, one copy each: dataset rows and parquet files in verl's
format, and verl's own gsm8k reward code as a user would paste it."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def verl_rows(
    answers: list[str],
    data_source: str = "arith",
    question: str = "What is {i} + 1?",
    splits: list[str | None] | None = None,
) -> list[dict[str, Any]]:
    """Rows in verl's format: prompt i (`question` formatted with i) asks for answer i;
    row i is in `splits[i]` (every row in "train" by default, none when None)."""
    labels = splits if splits is not None else ["train"] * len(answers)
    return [
        {
            "data_source": data_source,
            "prompt": [{"role": "user", "content": question.format(i=i)}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": answer},
            "extra_info": {"index": i, **({"split": split} if split else {})},
        }
        for i, (answer, split) in enumerate(zip(answers, labels, strict=True))
    ]


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def verl_parquet(
    answers: list[str], data_source: str = "arith", question: str = "What is {i} + 1?"
) -> bytes:
    """A verl parquet file of `verl_rows`."""
    return parquet_bytes(verl_rows(answers, data_source, question))


def counting_answers(rows: int) -> list[str]:
    """The answers of "What is i + 1?" for i < rows."""
    return [str(i + 1) for i in range(rows)]


# verl's gsm8k reward module (verl/utils/reward_score/gsm8k.py) with the custom-reward
# entry point verl calls: pasted into the studio as is.
VERL_GSM8K = r"""
import re

_SOLUTION_CLIP_CHARS = 300


def extract_solution(solution_str, method="strict"):
    assert method in ["strict", "flexible"]
    if len(solution_str) > _SOLUTION_CLIP_CHARS:
        solution_str = solution_str[-_SOLUTION_CLIP_CHARS:]
    if method == "strict":
        solutions = re.findall("#### (\\-?[0-9\\.\\,]+)", solution_str)
        if len(solutions) == 0:
            final_answer = None
        else:
            final_answer = solutions[-1].replace(",", "").replace("$", "")
    elif method == "flexible":
        answer = re.findall("(\\-?[0-9\\.\\,]+)", solution_str)
        final_answer = None
        if len(answer) == 0:
            pass
        else:
            invalid_str = ["", "."]
            for final_answer in reversed(answer):
                if final_answer not in invalid_str:
                    break
    return final_answer


def compute_score(data_source, solution_str, ground_truth, extra_info=None, method="strict",
                  format_score=0.0, score=1.0):
    answer = extract_solution(solution_str=solution_str, method=method)
    if answer is None:
        return 0
    else:
        if answer == ground_truth:
            return score
        else:
            return format_score
"""
