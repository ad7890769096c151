"""The trainer account owns a run's checkpoint folder, so it can swap any file or folder in
it for a symlink at any moment, also after the studio checked it and before the studio
(root under `rlstudio up`) reads it. Whatever the studio reads there (a checkpoint
download, a run's model export) is opened by descriptor without following a link
(studio.runs.trainer_files): a secret outside the folder never comes back."""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from django.test import override_settings

from studio.runs.models import Checkpoint, Run
from tests.studio.conftest import write_model_folder

# What `var/secret_key` holds; every file of the checkpoint is as long, so a body read
# through a swapped-in link would carry all of it.
SECRET = b"django-insecure-" + b"5ecret" * 8
SIZE = len(SECRET)


@pytest.fixture
def checkpoint_root(tmp_path: Path):
    with override_settings(RLSTUDIO_CHECKPOINT_ROOT=str(tmp_path / "checkpoints")):
        yield tmp_path / "checkpoints"


@pytest.fixture
def server(tmp_path: Path) -> Path:
    """The server's own files, outside every run folder: the secret key, and a folder
    laid out like a checkpoint whose every file is the secret."""
    own = tmp_path / "server"
    (own / "lookalike" / "model").mkdir(parents=True)
    (own / "secret_key").write_bytes(SECRET)
    for name in ("state.json", "model/weights.bin"):
        (own / "lookalike" / name).write_bytes(SECRET)
    return own


@pytest.fixture
def run(world) -> Run:
    return Run.objects.create(project=world.project, name="r", config={}, created_by=world.owner)


def write_checkpoint(root: Path, run: Run, step: int = 3) -> Path:
    folder = root / f"run-{run.pk}" / f"step-{step}"
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "weights.bin").write_bytes(b"w" * SIZE)
    (folder / "state.json").write_bytes(b"s" * SIZE)
    return folder


def link_in_place(place: Path, target: Path) -> None:
    """`place` becomes a symlink to `target`, the way a trainer would swap it: a folder is
    moved aside first, a file is replaced in one rename."""
    if place.is_dir():
        place.rename(place.with_name(place.name + ".moved"))
        place.symlink_to(target)
        return
    swap = place.with_name(place.name + ".swap")
    swap.symlink_to(target)
    os.replace(swap, place)


def download(world, run: Run, checkpoint: Checkpoint, meanwhile: Callable[[], None]) -> bytes:
    """The checkpoint's tar through the real view: the first chunk, `meanwhile`, the rest."""
    url = f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download"
    response = world.client("viewer").get(url)
    assert response.status_code == 200, response.content
    chunks = iter(response.streaming_content)
    body = next(chunks)  # the listing is done, the first header sent: it streams
    meanwhile()
    body += b"".join(chunks)
    assert int(response["Content-Length"]) == len(body)
    return body


@pytest.mark.parametrize(
    ("swapped", "target"),
    [
        ("state.json", "secret_key"),  # a file
        ("model", "lookalike/model"),  # a folder on the way to a file
        (".", "lookalike"),  # the checkpoint folder itself
    ],
)
def test_a_link_swapped_in_while_a_download_streams_is_not_followed(
    world, run, checkpoint_root, server, swapped, target
):
    folder = write_checkpoint(checkpoint_root, run)
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=3, uri=str(folder))
    place = folder if swapped == "." else folder / swapped

    body = download(world, run, checkpoint, lambda: link_in_place(place, server / target))

    assert SECRET not in body
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:  # still a whole, valid archive
        top = f"run-{run.pk}-step-3"
        assert sorted(tar.getnames()) == [
            top,
            f"{top}/model",
            f"{top}/model/weights.bin",
            f"{top}/state.json",
        ]
        for name in ("model/weights.bin", "state.json"):
            member = tar.extractfile(f"{top}/{name}")
            assert member is not None and len(member.read()) == SIZE


def test_a_run_folder_that_is_a_link_is_neither_listed_nor_served(
    world, run, checkpoint_root, server
):
    checkpoint_root.mkdir()
    (checkpoint_root / f"run-{run.pk}").symlink_to(server)
    checkpoint = Checkpoint.objects.create(
        run=run, attempt=1, step=3, uri=str(checkpoint_root / f"run-{run.pk}" / "lookalike")
    )

    listed = world.client("viewer").get(f"/api/runs/{run.pk}/checkpoints/").json()
    download = world.client("viewer").get(
        f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download"
    )

    [item] = listed["results"]
    assert item["reachable"] is False
    assert "outside this run's checkpoint folder" in item["unreachable_reason"]
    assert download.status_code == 409


def write_export(root: Path, run: Run) -> Path:
    """A run's final Hugging Face export, beside its checkpoint (checkpoint.save_hf)."""
    write_checkpoint(root, run)
    return write_model_folder(root / f"run-{run.pk}" / "hf")


@pytest.mark.parametrize("linked", ["config.json", "tokenizer_config.json"])
def test_a_models_export_is_read_without_following_links(
    world, run, checkpoint_root, server, linked
):
    """A model made from a run reads the export's config files (its architecture, chat
    template): a link there to the server's files is refused, not read."""
    export = write_export(checkpoint_root, run)
    Checkpoint.objects.create(
        run=run, attempt=1, step=3, uri=str(checkpoint_root / f"run-{run.pk}" / "step-3")
    )
    private = server / "private.json"
    private.write_text(
        json.dumps(
            {
                "architectures": ["SecretForCausalLM"],
                "tokenizer_class": "Secret",
                "chat_template": SECRET.decode(),
            }
        )
    )
    link_in_place(export / linked, private)

    response = world.client("member").post(
        "/api/models/", {"project": "alpha", "checkpoint_run": run.pk}, format="json"
    )

    assert response.status_code == 400, response.json()
    assert SECRET.decode() not in response.content.decode()
    assert "Secret" not in response.content.decode()


def test_a_models_export_without_links_is_added(world, run, checkpoint_root):
    write_export(checkpoint_root, run)
    Checkpoint.objects.create(
        run=run, attempt=1, step=3, uri=str(checkpoint_root / f"run-{run.pk}" / "step-3")
    )

    response = world.client("member").post(
        "/api/models/", {"project": "alpha", "checkpoint_run": run.pk}, format="json"
    )

    assert response.status_code == 201, response.json()
    assert response.json()["info"]["architecture"] == "LlamaForCausalLM"
    assert response.json()["info"]["chat_template"] == "{{ x }}"


def test_a_fifo_in_a_files_place_is_refused_without_waiting(checkpoint_root):
    """Opening a fifo for reading waits for a writer; a trainer's fifo must not stall the
    studio's reader, so it is opened without blocking and refused as no regular file."""
    from studio.runs.trainer_files import WrongKind, open_trainer_folder

    (checkpoint_root / "run-1").mkdir(parents=True)
    os.mkfifo(checkpoint_root / "run-1" / "weights.bin")
    with open_trainer_folder(checkpoint_root / "run-1") as folder, pytest.raises(WrongKind):
        folder.open_file("weights.bin")
