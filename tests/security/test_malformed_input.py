"""Malformed or extreme input is a 400 in the API's error format, never a server error
or the app's HTML: nesting deeper than the bound (trainer.config.tree_bounds.MAX_DEPTH),
anywhere in any body, integers of thousands of digits, and paths under /api/ that name
no endpoint."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from studio.runs.models import Run
from tests.studio.test_datasets_api import make_dataset, mixed_rows
from tests.studio.test_runs_api import dataset_version
from trainer.config import ConfigError, compose, load_config
from trainer.config.tree_bounds import MAX_CONFIG_VALUES, MAX_DEPTH


def member(world) -> APIClient:
    return world.client("member")


def test_a_json_body_nested_100000_deep_is_a_400(world):
    response = member(world).post(
        "/api/config/validate", "[" * 100_000, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert "nested too deeply" in response.json()["error"]["message"]


def nested_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def in_reward_kwargs(depth: int, fields: str) -> str:
    """A body `depth` deep, its deepest part inside reward.kwargs (the body, config, reward
    and kwargs are the first four levels)."""
    deep = nested_arrays(depth - 4)
    return "{" + fields + '"config": {"reward": {"kwargs": {"x": ' + deep + "}}}}"


def at_the_top(depth: int, fields: str) -> str:
    """A body `depth` deep in a field of its own, beside the request's fields."""
    return "{" + fields + '"deep": ' + nested_arrays(depth - 1) + "}"


ENDPOINTS = ["/api/config/validate", "/api/runs/"]
SHAPES = [in_reward_kwargs, at_the_top]


def request_fields(world, endpoint: str) -> str:
    """The fields of an otherwise valid request to `endpoint`, as JSON members."""
    if endpoint == "/api/config/validate":
        return '"preset": "grpo-tiny-arith", '
    version = dataset_version(world.project, world.owner)
    return (
        '"project": "alpha", "name": "deep", "preset": "grpo-tiny-arith", '
        f'"dataset_version": {version.pk}, '
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 600, 980, 5000])
def test_a_body_nested_past_the_bound_is_a_json_400(world, endpoint, shape, depth):
    body = shape(depth, request_fields(world, endpoint))
    response = member(world).post(endpoint, body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == "parse_error"
    assert "nested too deeply" in error["message"] and str(MAX_DEPTH) in error["message"]


def test_a_body_nested_exactly_to_the_bound_is_validated(world):
    client = member(world)
    validate, runs = ENDPOINTS
    fields = {endpoint: request_fields(world, endpoint) for endpoint in ENDPOINTS}

    def post(endpoint: str, body: str):
        return client.post(endpoint, body, content_type="application/json")

    # Deep in reward.kwargs: the config's own rule answers (kwargs nest at most 8 levels).
    checked = post(validate, in_reward_kwargs(MAX_DEPTH, fields[validate]))
    assert checked.status_code == 200, checked.content[:300]
    assert checked.json()["valid"] is False
    assert "nested deeper than 8 levels" in checked.json()["errors"]["config.reward.kwargs"][0]
    refused = post(runs, in_reward_kwargs(MAX_DEPTH, fields[runs]))
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "validation_error"
    assert "config.reward.kwargs" in refused.json()["error"]["fields"]
    # Deep beside the request's fields: the request itself is valid.
    valid = post(validate, at_the_top(MAX_DEPTH, fields[validate]))
    assert valid.status_code == 200 and valid.json()["valid"] is True, valid.content[:300]
    created = post(runs, at_the_top(MAX_DEPTH, fields[runs]))
    assert created.status_code == 201, created.content[:300]


def deep_value(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_cloning_a_stored_config_nested_past_the_bound_is_a_json_400(world):
    client = member(world)
    fields = request_fields(world, "/api/runs/")
    body = "{" + fields.rstrip(", ") + "}"
    parent = client.post("/api/runs/", body, content_type="application/json")
    assert parent.status_code == 201, parent.content[:300]
    stored = parent.json()["config"]
    stored["reward"]["kwargs"] = {"x": deep_value(600)}
    Run.objects.filter(pk=parent.json()["id"]).update(config=stored)
    response = client.post(f"/api/runs/{parent.json()['id']}/clone/", {}, format="json")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert f"more than {MAX_DEPTH} levels" in error["fields"]["config"][0]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 600, 5000])
def test_a_config_file_or_override_nested_past_the_bound_is_a_config_error(tmp_path, depth):
    nested = "[" * (depth - 3) + "]" * (depth - 3)
    path = tmp_path / "deep.yaml"
    path.write_text("reward:\n  kwargs:\n    x: " + nested + "\n")
    with pytest.raises(ConfigError, match="nested"):
        load_config(path)  # the trainer's command line: `python -m trainer run deep.yaml`
    with pytest.raises(ConfigError, match="nested"):
        compose(overrides=["reward.kwargs={x: " + nested + "}"])
    with pytest.raises(ConfigError, match="nested"):
        compose(stored={"reward": {"kwargs": {"x": deep_value(depth - 3)}}})


def test_a_config_file_whose_aliases_expand_past_the_size_bound_is_a_config_error(tmp_path):
    # Each line nine of the one before: about 600,000 values once expanded, a few hundred
    # bytes here. (Kept small: a config that copied it whole would still fit in memory.)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 6)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=f"more than {MAX_CONFIG_VALUES:,} values"):
        load_config(path)


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
