"""Datasets: upload (parquet, JSONL, CSV), validation, size limit, stats, preview, download."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from urllib.parse import urlencode

import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from rest_framework.test import APIClient

from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.uploads import (
    LimitedTemporaryFileUploadHandler,
    RequestBodyLimit,
    UploadTooLarge,
)
from studio.projects.models import AuditEvent
from tests.verl_data import parquet_bytes


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> Path:
    """Uploads land in a private media folder; temporary upload files in their own."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploading")
    (tmp_path / "uploading").mkdir()
    return tmp_path


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def mixed_rows(n: int = 6) -> list[dict]:
    return [
        {
            "data_source": "openai/gsm8k" if i % 3 else "arith",
            "prompt": [{"role": "user", "content": "What is " + "1+" * i + "1?"}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": str(i + 1)},
            "extra_info": {"split": "train" if i < 4 else "test", "index": i},
        }
        for i in range(n)
    ]


def verl_parquet(rows: list[dict] | None = None) -> bytes:
    return parquet_bytes(rows or mixed_rows())


def make_dataset(world, name: str = "gsm8k") -> int:
    response = world.client("member").post(
        "/api/datasets/", {"project": "alpha", "name": name}, format="json"
    )
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def upload(world, dataset_id: int, name: str, content: bytes, who: str = "member", **fields):
    return world.client(who).post(
        f"/api/datasets/{dataset_id}/versions/",
        {"file": SimpleUploadedFile(name, content), **fields},
        format="multipart",
    )


def test_members_create_datasets_and_it_is_audited(world):
    dataset_id = make_dataset(world)
    body = world.client("viewer").get(f"/api/datasets/{dataset_id}/").json()
    assert body["project"] == "alpha"
    assert body["version_count"] == 0
    assert body["latest_version"] is None
    assert AuditEvent.objects.filter(action="dataset.create", actor=world.member).exists()
    duplicate = world.client("member").post(
        "/api/datasets/", {"project": "alpha", "name": "gsm8k"}, format="json"
    )
    assert duplicate.status_code == 400
    assert "already exists" in duplicate.json()["error"]["message"]


@pytest.mark.parametrize("body_format", ["multipart", "form"])
def test_the_api_reads_json_and_refuses_a_form_body_with_415(world, body_format):
    client = world.client("member")
    body = {"project": "alpha", "name": "as-a-form"}
    if body_format == "form":
        response = client.post(
            "/api/datasets/", urlencode(body), content_type="application/x-www-form-urlencoded"
        )
    else:
        response = client.post("/api/datasets/", body, format="multipart")
    assert response.status_code == 415
    assert "Unsupported media type" in response.json()["error"]["message"]
    assert not Dataset.objects.filter(name="as-a-form").exists()
    assert client.post("/api/datasets/", body, format="json").status_code == 201


def test_uploading_verl_parquet_creates_a_version_with_its_stats(world, storage):
    dataset_id = make_dataset(world)
    content = verl_parquet()
    response = upload(world, dataset_id, "train.parquet", content, message="first cut")
    assert response.status_code == 201, response.json()
    version = response.json()
    assert version["number"] == 1
    assert version["source_format"] == "parquet"
    assert version["data_format"] == "verl"
    assert version["row_count"] == 6
    assert version["message"] == "first cut"
    assert version["created_by"] == "member"
    assert [c["name"] for c in version["columns"]] == [
        "data_source",
        "prompt",
        "ability",
        "reward_model",
        "extra_info",
    ]
    stats = version["stats"]
    assert stats["data_sources"] == [
        {"name": "openai/gsm8k", "count": 4},
        {"name": "arith", "count": 2},
    ]
    assert stats["splits"] == [{"name": "train", "count": 4}, {"name": "test", "count": 2}]
    lengths = [len("What is " + "1+" * i + "1?") for i in range(6)]
    assert stats["prompt_chars"]["min"] == min(lengths)
    assert stats["prompt_chars"]["max"] == max(lengths)
    assert sum(b["count"] for b in stats["prompt_chars"]["histogram"]) == 6
    assert stats["upload"] == {
        "filename": "train.parquet",
        "size_bytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
    }
    # verl parquet is stored unchanged, and the checksum is that of the stored file
    assert version["checksum"] == hashlib.sha256(content).hexdigest()
    stored = files_under(storage / "media")
    assert len(stored) == 1 and stored[0].read_bytes() == content
    assert files_under(storage / "uploading") == []
    assert AuditEvent.objects.filter(action="dataset.upload", object_id=str(version["id"])).exists()
    listed = world.client("viewer").get(f"/api/datasets/{dataset_id}/").json()
    assert listed["latest_version"]["number"] == 1


def test_uploading_jsonl_normalises_it_to_parquet(world, storage):
    dataset_id = make_dataset(world)
    lines = [json.dumps(row) for row in mixed_rows(4)]
    content = ("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n").encode()
    response = upload(world, dataset_id, "train.jsonl", content)
    assert response.status_code == 201, response.json()
    version = response.json()
    assert (version["source_format"], version["data_format"]) == ("jsonl", "verl")
    assert version["row_count"] == 4
    stored = files_under(storage / "media")
    table = pq.read_table(stored[0])
    assert table.num_rows == 4
    assert table.column("reward_model").to_pylist()[3]["ground_truth"] == "4"
    assert version["checksum"] == hashlib.sha256(stored[0].read_bytes()).hexdigest()


def test_uploading_csv_with_a_column_mapping(world):
    dataset_id = make_dataset(world, "qa")
    content = (
        b"question,solution,data_source,split\n"
        b'What is 2+2?,4,arith,train\n"Say ""hi"", then 3*3",9,arith,train\n'
        b"Capital of France?,Paris,trivia,test\n"
    )
    response = upload(
        world,
        dataset_id,
        "qa.csv",
        content,
        format="prompt_answer",
        prompt_key="question",
        answer_key="solution",
    )
    assert response.status_code == 201, response.json()
    version = response.json()
    assert version["data_format"] == "prompt_answer"
    assert version["source_format"] == "csv"
    assert version["column_mapping"] == {
        "prompt_key": "question",
        "answer_key": "solution",
        "data_source": "default",
    }
    assert version["row_count"] == 3
    assert version["stats"]["data_sources"] == [
        {"name": "arith", "count": 2},
        {"name": "trivia", "count": 1},
    ]
    assert version["stats"]["splits"] == [
        {"name": "train", "count": 2},
        {"name": "test", "count": 1},
    ]
    preview = world.client("viewer").get(f"/api/datasets/{dataset_id}/versions/1/preview/").json()
    assert preview["rows"][1]["question"] == 'Say "hi", then 3*3'


def test_each_upload_is_a_new_immutable_version(world):
    dataset_id = make_dataset(world)
    assert upload(world, dataset_id, "a.parquet", verl_parquet()).status_code == 201
    second = upload(world, dataset_id, "b.parquet", verl_parquet(mixed_rows(3)))
    assert second.json()["number"] == 2
    url = f"/api/datasets/{dataset_id}/versions/1/"
    client = world.client("owner")
    assert client.patch(url, {"message": "x"}, format="json").status_code == 405
    assert client.delete(url).status_code == 405
    numbers = [v["number"] for v in client.get(f"/api/datasets/{dataset_id}/versions/").json()]
    assert numbers == [2, 1]


@override_settings(RLSTUDIO_MAX_UPLOAD_BYTES=1000)
def test_an_oversized_upload_is_413_and_nothing_is_written(world, storage):
    dataset_id = make_dataset(world)
    response = upload(world, dataset_id, "big.parquet", b"PAR1" + b"x" * 5000 + b"PAR1")
    assert response.status_code == 413
    body = response.json()["error"]
    assert body["code"] == "upload_too_large"
    assert "limit is 1000 bytes" in body["message"]
    assert not DatasetVersion.objects.exists()
    assert files_under(storage / "media") == []
    assert files_under(storage / "uploading") == []


def test_the_upload_handler_stops_a_stream_that_passes_the_limit(storage):
    handler = LimitedTemporaryFileUploadHandler(limit=10)
    handler.handle_raw_input(None, {}, 0, b"b")  # no declared length: bytes are counted
    handler.new_file("file", "big.csv", "text/csv", None)
    handler.receive_data_chunk(b"123456", 0)
    partial = Path(handler.file.temporary_file_path())
    assert partial.exists()
    with pytest.raises(UploadTooLarge):
        handler.receive_data_chunk(b"789012", 6)
    assert not partial.exists()
    with pytest.raises(UploadTooLarge):
        LimitedTemporaryFileUploadHandler(limit=10).handle_raw_input(None, {}, 11, b"b")


@override_settings(RLSTUDIO_MAX_UPLOAD_BYTES=100)
def test_asgi_requests_over_the_limit_get_413_before_the_body_is_read():
    reads: list[str] = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            reads.append(message["type"])
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def serve(headers, chunks):
        sent: list[dict] = []
        queue = [
            {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
            for i, c in enumerate(chunks)
        ]

        async def receive():
            return queue.pop(0)

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "headers": headers}
        asyncio.run(RequestBodyLimit(app)(scope, receive, send))
        return [m["status"] for m in sent if m["type"] == "http.response.start"]

    assert serve([(b"content-length", b"5000")], [b"x" * 5000]) == [413]
    assert reads == []  # the app never saw the body
    assert serve([], [b"x" * 60, b"x" * 60, b"x" * 60]) == [413]  # chunked, no length
    assert serve([(b"content-length", b"50")], [b"x" * 50]) == [200]


BAD_FILES = [
    pytest.param(
        "image.parquet",
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
        {},
        "not a parquet file: parquet files start and end with the bytes 'PAR1'; it looks "
        "like a PNG image",
        id="png-named-parquet",
    ),
    pytest.param(
        "data.csv",
        b"prompt,answer\nWhat is 1+1?,2\nWhat is 2+2?,4,extra\n",
        {},
        "row 2 (line 3): 3 fields, but the header has 2",
        id="ragged-csv",
    ),
    pytest.param(
        "data.jsonl",
        '{"prompt": "Qu\'est-ce que", "answer": "caf\u00e9"}\n'.encode("latin-1"),
        {},
        "not UTF-8 text: invalid byte 0xe9 at line 1",
        id="latin-1-jsonl",
    ),
    pytest.param(
        "data.csv",
        "prompt,answer\nna\u00efve?,yes\n".encode("cp1252"),
        {},
        "not UTF-8 text: invalid byte 0xef at line 2",
        id="cp1252-csv",
    ),
    pytest.param("empty.jsonl", b"", {}, "the file is empty", id="empty-file"),
    pytest.param(
        "data.csv",
        b"question,solution\nWhat is 1+1?,2\nWhat is 2+2?,\n",
        {"prompt_key": "question", "answer_key": "solution"},
        "data.csv, row 2, column 'solution': missing answer",
        id="missing-answer-cell",
    ),
    pytest.param(
        "data.csv",
        b"question,reply\nWhat is 1+1?,2\n",
        {"format": "prompt_answer", "prompt_key": "question"},
        "prompt_answer data needs a 'answer' column (data.answer_key)",
        id="missing-answer-column",
    ),
    pytest.param(
        "data.jsonl",
        b'{"prompt": "a", "answer": 1}\n{"prompt": "b", "answer": "two"}\n',
        {},
        "row 2, column 'answer': values of different types",
        id="mixed-types-jsonl",
    ),
    pytest.param(
        "data.jsonl",
        b'{"prompt": "a", "answer": 1}\n{"prompt": "b", "answer": 2\n',
        {},
        "line 2: invalid JSON",
        id="broken-json-line",
    ),
    pytest.param("notes.txt", b"hello", {}, "unsupported file type '.txt'", id="unknown-type"),
]


@pytest.mark.parametrize(("name", "content", "fields", "message"), BAD_FILES)
def test_bad_files_are_400_with_a_clear_message_and_nothing_is_written(
    world, storage, name, content, fields, message
):
    dataset_id = make_dataset(world)
    response = upload(world, dataset_id, name, content, **fields)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert message in error["message"], error["message"]
    assert error["message"].startswith(f"file: {name}")
    assert not DatasetVersion.objects.exists()
    assert not AuditEvent.objects.filter(action="dataset.upload").exists()
    assert files_under(storage / "media") == []
    assert files_under(storage / "uploading") == []


def test_verl_rows_with_a_bad_reward_model_name_row_and_column(world):
    rows = mixed_rows(3)
    rows[2]["reward_model"] = None
    response = upload(world, make_dataset(world), "bad.parquet", verl_parquet(rows))
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "bad.parquet, row 3, column 'reward_model'" in message
    assert "expected an object with a 'ground_truth' key, got None" in message


def test_preview_pages_are_bounded(world):
    dataset_id = make_dataset(world)
    rows = [{"prompt": f"question {i}", "answer": str(i)} for i in range(250)]
    content = "\n".join(json.dumps(r) for r in rows).encode()
    assert upload(world, dataset_id, "big.jsonl", content).status_code == 201
    client = world.client("viewer")
    url = f"/api/datasets/{dataset_id}/versions/1/preview/"
    page = client.get(url, {"offset": 120, "limit": 3}).json()
    assert page["total"] == 250
    assert [r["answer"] for r in page["rows"]] == ["120", "121", "122"]
    clamped = client.get(url, {"limit": 10**9}).json()
    assert clamped["limit"] == 100
    assert len(clamped["rows"]) == 100
    assert client.get(url, {"offset": 249, "limit": 50}).json()["rows"][0]["answer"] == "249"
    assert client.get(url, {"offset": 5000}).json()["rows"] == []
    negative = client.get(url, {"offset": -1})
    assert negative.status_code == 400
    assert negative.json()["error"]["message"].startswith("offset:")
    assert client.get(url, {"limit": 0}).status_code == 400
    assert client.get(url, {"limit": "ten"}).status_code == 400


def test_download_streams_the_stored_bytes(world):
    dataset_id = make_dataset(world)
    content = verl_parquet()
    checksum = upload(world, dataset_id, "train.parquet", content).json()["checksum"]
    response = world.client("viewer").get(
        f"/api/datasets/{dataset_id}/versions/1/download/", HTTP_ACCEPT="application/octet-stream"
    )
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert body == content
    assert hashlib.sha256(body).hexdigest() == checksum == response["X-Checksum-SHA256"]
    assert 'filename="gsm8k-v1.parquet"' in response["Content-Disposition"]


def test_other_projects_datasets_are_404(world):
    dataset_id = make_dataset(world)
    assert upload(world, dataset_id, "train.parquet", verl_parquet()).status_code == 201
    eve = world.client("outsider")
    base = f"/api/datasets/{dataset_id}"
    for url in (
        f"{base}/",
        f"{base}/versions/",
        f"{base}/versions/1/",
        f"{base}/versions/1/preview/",
        f"{base}/versions/1/download/",
    ):
        assert eve.get(url).status_code == 404, url
    assert upload(world, dataset_id, "x.parquet", verl_parquet(), who="outsider").status_code == 404
    assert eve.get("/api/datasets/").json()["results"] == []
    created = eve.post("/api/datasets/", {"project": "alpha", "name": "x"}, format="json")
    assert created.status_code == 404
    assert DatasetVersion.objects.count() == 1


def test_viewers_read_but_cannot_upload(world, storage):
    dataset_id = make_dataset(world)
    response = upload(world, dataset_id, "train.parquet", verl_parquet(), who="viewer")
    assert response.status_code == 403
    assert "member role" in response.json()["error"]["message"]
    assert files_under(storage / "media") == []
    assert world.client("viewer").get(f"/api/datasets/{dataset_id}/versions/").status_code == 200
    created = world.client("viewer").post(
        "/api/datasets/", {"project": "alpha", "name": "x"}, format="json"
    )
    assert created.status_code == 403


def test_anonymous_requests_are_rejected(world):
    dataset_id = make_dataset(world)
    assert world.client(None).get("/api/datasets/").status_code in (401, 403)
    response = upload(world, dataset_id, "train.parquet", verl_parquet(), who=None)
    assert response.status_code in (401, 403)


def test_only_owners_delete_a_dataset_and_its_files_go_with_it(
    world, storage, django_capture_on_commit_callbacks
):
    dataset_id = make_dataset(world)
    assert upload(world, dataset_id, "train.parquet", verl_parquet()).status_code == 201
    assert world.client("member").delete(f"/api/datasets/{dataset_id}/").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        deleted = world.client("owner").delete(f"/api/datasets/{dataset_id}/")
    assert deleted.status_code == 204
    assert not Dataset.objects.filter(pk=dataset_id).exists()
    assert files_under(storage / "media") == []
    assert AuditEvent.objects.filter(action="dataset.delete").exists()


def test_browser_sessions_upload_with_a_csrf_token(world, storage):
    dataset_id = make_dataset(world)
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="member", password="a-long-password-123")
    client.get("/")  # sets the csrftoken cookie
    url = f"/api/datasets/{dataset_id}/versions/"
    payload = {"file": SimpleUploadedFile("train.parquet", verl_parquet())}
    assert client.post(url, payload, format="multipart").status_code == 403
    payload = {"file": SimpleUploadedFile("train.parquet", verl_parquet())}
    token = client.cookies["csrftoken"].value
    response = client.post(url, payload, format="multipart", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201, response.json()
    assert len(files_under(storage / "media")) == 1
    assert files_under(storage / "uploading") == []
