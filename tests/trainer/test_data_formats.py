"""Dataset readers: verl parquet/JSONL unchanged, prompt/answer tables mapped, clear errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trainer.config.schema import DataConfig
from trainer.data.formats import (
    DataFormatError,
    PromptRecord,
    read_prompt_files,
    read_prompt_records,
)
from trainer.demo.toy_data import toy_rows, write_toy_dataset


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def verl_row(content: Any, answer: Any = "3", index: int = 0) -> dict[str, Any]:
    return {
        "data_source": "arith",
        "prompt": [{"role": "user", "content": content}] if isinstance(content, str) else content,
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": answer},
        "extra_info": {"split": "train", "index": index},
    }


def test_it_reads_verl_parquet_unchanged(tmp_path: Path) -> None:
    train, _ = write_toy_dataset("arith", tmp_path, n_train=12, n_test=4, seed=3)
    rows = pq.read_table(train).to_pylist()

    records = read_prompt_records(train, DataConfig())

    assert len(records) == 12
    for row, record in zip(rows, records, strict=True):
        assert record.data_source == row["data_source"] == "arith"
        assert record.messages == row["prompt"]
        assert record.ground_truth == row["reward_model"]["ground_truth"]
        assert record.extra_info == row["extra_info"]
        assert record.index == row["extra_info"]["index"]
    assert records[0].messages[0]["role"] == "user"
    assert records[0].messages[0]["content"].endswith("=")


def test_it_keeps_structured_ground_truth_of_countdown(tmp_path: Path) -> None:
    _, test = write_toy_dataset("countdown", tmp_path, n_train=5, n_test=2, seed=0)

    records = read_prompt_records(test, DataConfig())

    truth = records[0].ground_truth
    assert set(truth) == {"target", "numbers"}
    assert isinstance(truth["target"], int)
    assert all(isinstance(n, int) for n in truth["numbers"])
    assert str(truth["target"]) in records[0].messages[0]["content"]
    assert records[0].data_source == "countdown"


def test_it_reads_verl_jsonl_like_parquet(tmp_path: Path) -> None:
    rows, _ = toy_rows("countdown", 6, 0, seed=1)
    parquet = tmp_path / "a.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    jsonl = write_jsonl(tmp_path / "a.jsonl", rows)

    assert read_prompt_records(jsonl, DataConfig()) == read_prompt_records(parquet, DataConfig())


def test_it_maps_a_prompt_answer_csv_to_records(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "qa.csv",
        [
            {"question": "2+2=", "solution": "4", "level": "easy"},
            {"question": "9-3=", "solution": "6", "level": "hard"},
        ],
    )
    cfg = DataConfig(prompt_key="question", answer_key="solution", data_source="mine")

    records = read_prompt_records(path, cfg)

    assert records == [
        PromptRecord(
            index=0,
            data_source="mine",
            messages=[{"role": "user", "content": "2+2="}],
            ground_truth="4",
            extra_info={"level": "easy", "index": 0},
            position=0,
        ),
        PromptRecord(
            index=1,
            data_source="mine",
            messages=[{"role": "user", "content": "9-3="}],
            ground_truth="6",
            extra_info={"level": "hard", "index": 1},
            position=1,
        ),
    ]


def test_it_keeps_a_data_source_column_of_prompt_answer_data(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl", [{"prompt": "1+1=", "answer": 2, "data_source": "gsm8k"}]
    )

    (record,) = read_prompt_records(path, DataConfig(format="prompt_answer"))

    assert record.data_source == "gsm8k"
    assert record.ground_truth == 2


def test_it_reads_several_files_in_order(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{"prompt": "a", "answer": "1"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"prompt": "b", "answer": "2"}])

    records = read_prompt_files([a, b], DataConfig())

    assert [r.messages[0]["content"] for r in records] == ["a", "b"]


def test_it_names_file_row_and_column_of_a_missing_prompt(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"prompt": "1+1=", "answer": "2"}, {"answer": "3"}],
    )

    with pytest.raises(DataFormatError) as err:
        read_prompt_records(path, DataConfig())

    assert err.value.row == 2
    assert err.value.column == "prompt"
    assert "bad.jsonl, row 2, column 'prompt'" in str(err.value)


def test_it_names_the_missing_column_of_verl_data(tmp_path: Path) -> None:
    rows = [verl_row("1+2=")]
    del rows[0]["data_source"]
    path = tmp_path / "v.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)

    with pytest.raises(DataFormatError, match="needs a 'data_source' column"):
        read_prompt_records(path, DataConfig())


def test_it_names_row_and_column_of_a_wrongly_typed_prompt(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [verl_row("1+2="), verl_row("2+2="), verl_row(5)],
    )

    with pytest.raises(DataFormatError) as err:
        read_prompt_records(path, DataConfig())

    message = str(err.value)
    assert "row 3, column 'prompt'" in message
    assert "expected a string or a non-empty list of {role, content} messages" in message
    assert "got int 5" in message


def test_it_rejects_a_malformed_message_and_an_empty_prompt(tmp_path: Path) -> None:
    bad_message = write_jsonl(tmp_path / "m.jsonl", [verl_row([{"role": "user"}])])
    empty = write_jsonl(tmp_path / "e.jsonl", [{"prompt": "  ", "answer": "1"}])

    with pytest.raises(DataFormatError, match=r"row 1, column 'prompt': message 0 must be"):
        read_prompt_records(bad_message, DataConfig())
    with pytest.raises(DataFormatError, match=r"row 1, column 'prompt': empty prompt"):
        read_prompt_records(empty, DataConfig())


def test_it_rejects_a_reward_model_without_ground_truth(tmp_path: Path) -> None:
    row = verl_row("1+2=")
    row["reward_model"] = {"style": "rule"}
    path = write_jsonl(tmp_path / "v.jsonl", [row])

    with pytest.raises(DataFormatError, match=r"row 1, column 'reward_model': expected an object"):
        read_prompt_records(path, DataConfig())


def test_it_explains_columns_it_cannot_place(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "x.csv", [{"text": "hi", "label": "1"}])

    with pytest.raises(DataFormatError, match=r"data.prompt_key / data.answer_key"):
        read_prompt_records(path, DataConfig())
    with pytest.raises(DataFormatError, match=r"needs a 'prompt' column \(data.prompt_key\)"):
        read_prompt_records(path, DataConfig(format="prompt_answer"))


def test_it_rejects_unknown_suffixes_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("hi")

    with pytest.raises(DataFormatError, match="unsupported file type '.txt'"):
        read_prompt_records(tmp_path / "data.txt", DataConfig())
    with pytest.raises(DataFormatError, match="file not found"):
        read_prompt_records(tmp_path / "nope.parquet", DataConfig())


def test_toy_datasets_are_deterministic_per_seed() -> None:
    assert toy_rows("arith", 30, 10, seed=1) == toy_rows("arith", 30, 10, seed=1)
    assert toy_rows("countdown", 30, 10, seed=1) == toy_rows("countdown", 30, 10, seed=1)
    assert toy_rows("arith", 30, 10, seed=1) != toy_rows("arith", 30, 10, seed=2)


def test_arith_ground_truth_is_the_answer_of_the_prompt() -> None:
    train, test = toy_rows("arith", 50, 10, seed=0)
    for row in train + test:
        expression = row["prompt"][0]["content"].rstrip("=")
        assert str(eval(expression)) == row["reward_model"]["ground_truth"]


def test_countdown_targets_are_reachable_in_range() -> None:
    train, _ = toy_rows("countdown", 40, 0, seed=0)
    for row in train:
        truth = row["reward_model"]["ground_truth"]
        assert 1 <= truth["target"] <= 100
        assert 3 <= len(truth["numbers"]) <= 4
