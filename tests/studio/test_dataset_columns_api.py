"""Detecting the columns of a file from a sample, before the upload."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files.uploadedfile import SimpleUploadedFile

URL = "/api/dataset-columns/"


def detect(world, name: str, content: bytes, truncated: bool = False):
    upload = SimpleUploadedFile(name, content)
    return world.client("member").post(
        URL, {"file": upload, "truncated": truncated}, format="multipart"
    )


def test_a_csv_head_gives_its_columns_and_suggests_the_question_and_answer(world):
    content = b"id,question,solution\n1,What is 1+1?,2\n2,What is 2+2?,4\n3,What is 3"
    response = detect(world, "qa.csv", content, truncated=True)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["source_format"] == "csv"
    assert body["columns"] == ["id", "question", "solution"]
    assert (body["prompt_key"], body["answer_key"]) == ("question", "solution")
    assert body["data_format"] == "prompt_answer"
    assert body["examples"][0] == {"id": "1", "question": "What is 1+1?", "solution": "2"}
    assert len(body["examples"]) == 2  # the cut last line is dropped


def test_jsonl_in_verl_format_is_recognised(world):
    line = b'{"data_source": "x", "prompt": [], "reward_model": {"ground_truth": "1"}}\n'
    body = detect(world, "verl.jsonl", line * 3).json()
    assert body["data_format"] == "verl"
    assert body["columns"] == ["data_source", "prompt", "reward_model"]


def test_a_parquet_files_tail_is_enough_for_its_columns(world):
    table = pa.table({"q": [str(i) * 50 for i in range(5000)], "a": list(range(5000))})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    tail = buffer.getvalue()[-32 * 1024 :]
    body = detect(world, "big.parquet", tail, truncated=True).json()
    assert body["columns"] == ["q", "a"]


def test_a_bad_jsonl_line_is_named(world):
    response = detect(world, "bad.jsonl", b'{"a": 1}\n{"a": \n')
    assert response.status_code == 400
    assert "bad.jsonl, line 2: not valid JSON" in response.json()["error"]["message"]


def test_a_sample_over_one_mebibyte_is_refused(world):
    response = detect(world, "big.csv", b"a,b\n" + b"1,2\n" * 300_000)
    assert response.status_code == 413


def test_an_unsupported_type_is_named(world):
    response = detect(world, "book.xlsx", b"PK\x03\x04")
    assert response.status_code == 400
    assert "unsupported file type '.xlsx'" in response.json()["error"]["message"]
