"""Malformed or extreme input is a 400 in the API's error format, never a server error
or the app's HTML: nesting deep enough to exhaust the JSON decoder, integers of thousands
of digits, and paths under /api/ that name no endpoint."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.studio.test_datasets_api import make_dataset, mixed_rows


def member(world) -> APIClient:
    return world.client("member")


def test_a_json_body_nested_100000_deep_is_a_400(world):
    response = member(world).post(
        "/api/config/validate", "[" * 100_000, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert "nested too deeply" in response.json()["error"]["message"]


def test_a_json_body_with_a_5000_digit_integer_is_a_400(world):
    body = '{"overrides": [], "config": {"trainer": {"seed": ' + "9" * 5000 + "}}}"
    response = member(world).post("/api/config/validate", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    # The legitimate request still works.
    ok = member(world).post("/api/config/validate", {"overrides": []}, format="json")
    assert ok.status_code == 200 and ok.json()["valid"] is True


def test_a_jsonl_upload_with_a_5000_digit_integer_names_its_line(world, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    dataset_id = make_dataset(world)
    rows = [json.dumps(row) for row in mixed_rows(3)]
    rows[1] = rows[1].replace('"index": 1', '"index": ' + "7" * 5000)
    response = member(world).post(
        f"/api/datasets/{dataset_id}/versions/",
        {"file": SimpleUploadedFile("train.jsonl", "\n".join(rows).encode())},
        format="multipart",
    )
    assert response.status_code == 400, response.content[:300]
    message = response.json()["error"]["message"]
    assert "line 2" in message and "digits" in message


def test_an_unknown_api_path_answers_json_not_the_apps_page(world):
    for method in ("get", "post", "delete"):
        response = getattr(member(world), method)("/api/no-such-thing/")
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/json")
        assert response.json()["error"]["code"] == "not_found"
    # A known endpoint without its slash still finds its way.
    redirected = member(world).get("/api/runs?project=alpha")
    assert redirected.status_code == 301 and redirected["Location"] == "/api/runs/?project=alpha"
