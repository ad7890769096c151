"""Hub models: added by id, downloaded by the worker's function from a hub endpoint (a
local server that answers as the hub does), with progress; a clear failure offline; only
safetensors weights; unusable by a run until ready."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from studio.model_registry import hub
from studio.model_registry.models import RegisteredModel
from tests.hub_server import fake_hub
from tests.studio.conftest import write_model_folder


def model_repo(folder: Path) -> Path:
    """A model folder with a 2x2 float32 weight, and a pickled file the studio must skip."""
    write_model_folder(folder)
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})
    (folder / "model.safetensors").write_bytes(
        struct.pack("<Q", len(header)) + header.encode() + bytes(16)
    )
    (folder / "pytorch_model.bin").write_bytes(b"pickle: never fetched")
    return folder


def add(member: APIClient, hub_id: str, **more: str):
    return member.post(
        "/api/models/", {"project": "alpha", "hub_id": hub_id, **more}, format="json"
    )


def fetch(model_id: int) -> RegisteredModel:
    """What the worker's task does with a queued download."""
    taken = hub.take(model_id)
    assert taken is not None
    hub.run(taken)
    return RegisteredModel.objects.get(pk=model_id)


def test_a_hub_model_is_downloaded_with_progress_and_only_safe_files(
    world, member, monkeypatch, tmp_path, studio_var_dir
):
    with fake_hub({"org/tiny": model_repo(tmp_path / "repo")}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        response = add(member, "org/tiny")
        assert response.status_code == 202, response.json()
        assert response.json()["status"] == "queued"
        model = fetch(response.json()["id"])
    assert model.status == "ready", model.error
    assert model.info["architecture"] == "LlamaForCausalLM" and model.info["parameters"] == 4
    assert model.progress["files_done"] == model.progress["files_total"] == 3
    folder = studio_var_dir / "model-cache" / "org--tiny--main"
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer_config.json",
    ]
    assert not any("pytorch_model.bin" in path for path in server.requests)
    shown = member.get(f"/api/models/{model.pk}/").json()
    assert (shown["status"], shown["kind"], shown["hub_id"]) == ("ready", "hub", "org/tiny")


def test_offline_the_download_fails_clearly(world, member, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1")
    model = fetch(add(member, "org/tiny").json()["id"])
    assert model.status == "failed"
    assert "Could not reach the hub at http://127.0.0.1:1" in model.error


def test_a_repository_with_only_pickled_weights_is_refused(world, member, monkeypatch, tmp_path):
    repo = model_repo(tmp_path / "repo")
    (repo / "model.safetensors").unlink()
    with fake_hub({"org/pickled": repo}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        model = fetch(add(member, "org/pickled").json()["id"])
    assert model.status == "failed" and "no safetensors weights" in model.error


def test_a_download_over_the_limit_fails(world, member, monkeypatch, tmp_path, settings):
    settings.RLSTUDIO_HUB_MAX_BYTES = 10
    with fake_hub({"org/tiny": model_repo(tmp_path / "repo")}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        model = fetch(add(member, "org/tiny").json()["id"])
    assert model.status == "failed" and "limit" in model.error


@pytest.mark.parametrize("hub_id", ["../etc", "a/b/c", "/abs", "x/..", "http://evil/x"])
def test_a_hub_id_that_is_not_one_is_refused(member, hub_id):
    response = add(member, hub_id)
    assert response.status_code == 400
    assert "hub_id" in response.json()["error"]["fields"]
    assert not RegisteredModel.objects.exists()


def test_a_run_cannot_use_a_hub_model_before_it_is_ready(world, member):
    model_id = add(member, "org/tiny").json()["id"]
    response = member.post(
        "/api/runs/",
        {"project": "alpha", "name": "r", "model": model_id, "dataset": 1},
        format="json",
    )
    assert response.status_code == 400
    assert "is queued" in response.json()["error"]["fields"]["model"][0]


def test_a_failed_download_asked_for_again_is_tried_again(world, member, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1")
    model_id = add(member, "org/tiny").json()["id"]
    assert fetch(model_id).status == "failed"
    with fake_hub({"org/tiny": model_repo(tmp_path / "repo")}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        again = add(member, "org/tiny")
        assert again.status_code == 202 and again.json()["id"] == model_id
        assert fetch(model_id).status == "ready"
    # A model that did not fail keeps its name: a second one is refused.
    assert add(member, "org/tiny").status_code == 400
