"""Hub models: a worker downloads a Hugging Face repository into the studio's model cache.

The hub is reached at HF_ENDPOINT (the hub's own setting; https://huggingface.co by
default) through its two public HTTP endpoints: the revision's file list
(`/api/models/<id>/revision/<rev>`) and each file (`/<id>/resolve/<rev>/<file>`). Only
what a model folder needs is fetched: JSON configs, tokenizer files and safetensors
weights; never pickled weights (`*.bin`, `*.pt`), which run code when loaded. Each file
goes to a temporary name and is renamed when whole; progress is written to the record as
it goes. Offline, the record fails with the endpoint and the error in its message.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from http.client import HTTPResponse
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studio.model_registry.inspect import NotAModel, inspect_folder
from studio.model_registry.locations import HUB_CACHE
from studio.model_registry.models import ModelStatus, RegisteredModel, role_of
from studio.paths import var_dir

logger = logging.getLogger(__name__)

TASK_NAME = "workers.fetch_hub_model"
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?$")
REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
WANTED = re.compile(
    r"^(config\.json|generation_config\.json|tokenizer[^/]*|special_tokens_map\.json"
    r"|vocab\.(json|txt)|merges\.txt|added_tokens\.json|chat_template\.(json|jinja)"
    r"|[^/]*\.safetensors|model\.safetensors\.index\.json)$"
)
CHUNK = 1024 * 1024
TIMEOUT_S = 60.0
LEASE = timedelta(minutes=10)  # a worker that died mid-download is replaced after this
PROGRESS_EVERY_BYTES = 4 * CHUNK
MAX_LISTING_BYTES = 8 * 1024 * 1024


class HubError(Exception):
    """The download failed; the message names the endpoint and what went wrong."""


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def max_bytes() -> int:
    return int(settings.RLSTUDIO_HUB_MAX_BYTES)


def valid_hub_id(hub_id: str) -> bool:
    return bool(HUB_ID.fullmatch(hub_id)) and ".." not in hub_id


def valid_revision(revision: str) -> bool:
    return bool(REVISION.fullmatch(revision)) and ".." not in revision


def cache_root() -> Path:
    return var_dir() / HUB_CACHE


def cache_name(hub_id: str, revision: str) -> str:
    """The model's folder under the cache: `org--name--revision` (no slashes)."""
    return f"{hub_id.replace('/', '--')}--{revision}"


def _get(url: str) -> HTTPResponse:
    try:
        response: HTTPResponse = urllib.request.urlopen(url, timeout=TIMEOUT_S)
        return response
    except urllib.error.HTTPError as exc:
        raise HubError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise HubError(
            f"Could not reach the hub at {endpoint()} ({exc}); this server may be offline. "
            "Add a model folder under RLSTUDIO_MODEL_ROOTS instead."
        ) from None


@dataclass(frozen=True)
class HubFile:
    name: str
    size: int | None


def list_files(hub_id: str, revision: str) -> list[HubFile]:
    quoted = urllib.parse.quote(hub_id, safe="/")
    with _get(f"{endpoint()}/api/models/{quoted}/revision/{urllib.parse.quote(revision)}") as r:
        body = json.loads(r.read(MAX_LISTING_BYTES))
    siblings = body.get("siblings") if isinstance(body, dict) else None
    if not isinstance(siblings, list):
        raise HubError(f"The hub's answer for {hub_id}@{revision} lists no files.")
    files = []
    for sibling in siblings:
        name = sibling.get("rfilename") if isinstance(sibling, dict) else None
        if isinstance(name, str) and WANTED.fullmatch(name):
            size = sibling.get("size")
            files.append(HubFile(name, int(size) if isinstance(size, int) else None))
    if not any(f.name == "config.json" for f in files):
        raise HubError(f"{hub_id}@{revision} has no config.json: not a model repository.")
    if not any(f.name.endswith(".safetensors") for f in files):
        raise HubError(
            f"{hub_id}@{revision} has no safetensors weights; the studio does not load pickled "
            "weights (*.bin), which can run code."
        )
    return files


def download(
    hub_id: str, revision: str, target: Path, on_progress: Callable[[dict[str, int]], None]
) -> None:
    """Every wanted file of the revision into `target` (made whole, then renamed)."""
    files = list_files(hub_id, revision)
    known = sum(f.size or 0 for f in files)
    if known > max_bytes():
        raise HubError(f"{hub_id}@{revision} is {known} bytes; the limit is {max_bytes()}.")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    progress = {"files_done": 0, "files_total": len(files), "bytes_done": 0, "bytes_total": known}
    on_progress(progress)
    quoted = urllib.parse.quote(hub_id, safe="/")
    for hub_file in files:
        url = f"{endpoint()}/{quoted}/resolve/{urllib.parse.quote(revision)}/{hub_file.name}"
        since_report = 0
        with _get(url) as response, (partial / hub_file.name).open("wb") as out:
            while chunk := response.read(CHUNK):
                out.write(chunk)
                progress["bytes_done"] += len(chunk)
                since_report += len(chunk)
                if progress["bytes_done"] > max_bytes():
                    raise HubError(f"{hub_id}@{revision} is over the limit of {max_bytes()} bytes.")
                if since_report >= PROGRESS_EVERY_BYTES:
                    on_progress(progress)
                    since_report = 0
        progress["files_done"] += 1
        on_progress(progress)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


# --- the record's life -------------------------------------------------------------------
def take(model_id: int) -> RegisteredModel | None:
    """Claim a queued download (or one whose worker's lease ran out)."""
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            RegisteredModel.objects.filter(pk=model_id, status=ModelStatus.QUEUED)
            | RegisteredModel.objects.filter(
                pk=model_id, status=ModelStatus.DOWNLOADING, lease_until__lt=now
            )
        ).update(status=ModelStatus.DOWNLOADING, lease_until=now + LEASE)
    return RegisteredModel.objects.get(pk=model_id) if claimed else None


def run(model: RegisteredModel) -> str:
    """Download `model` and mark it ready (with what its folder holds) or failed."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    target = root / model.relative_path

    def report(progress: dict[str, int]) -> None:
        RegisteredModel.objects.filter(pk=model.pk).update(
            progress=dict(progress), lease_until=timezone.now() + LEASE
        )

    try:
        download(model.hub_id, model.revision, target, report)
        info = inspect_folder(target)
    except (HubError, NotAModel, OSError) as exc:
        RegisteredModel.objects.filter(pk=model.pk).update(
            status=ModelStatus.FAILED, error=str(exc)[:4000], lease_until=None
        )
        logger.warning("hub model %s (%s) failed: %s", model.pk, model.hub_id, exc)
        return "failed"
    RegisteredModel.objects.filter(pk=model.pk).update(
        status=ModelStatus.READY,
        info=info.as_json(),
        role=role_of(info),
        error="",
        lease_until=None,
    )
    return "ready"


def enqueue(model_id: int) -> None:
    """Send the download task once the record is committed."""

    def send() -> None:
        from kombu.exceptions import OperationalError

        from workers.celery_app import app  # the broker settings live with the app

        try:
            app.send_task(TASK_NAME, args=[model_id], retry=False)
        except OperationalError as exc:
            RegisteredModel.objects.filter(pk=model_id).update(
                status=ModelStatus.FAILED, error=f"The task queue is unreachable: {exc}"
            )

    transaction.on_commit(send)
