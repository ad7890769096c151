"""Dataset files given by URL: downloaded once, with the run token, to a local cache.

A run launched by the studio gets `data.train_files` such as
`http://studio:8000/api/ingest/runs/12/dataset?split=train`, so a remote Ray cluster
needs no shared filesystem (docs/telemetry.md). The studio wants the run's ingest token
as a bearer token; it comes from `RLSTUDIO_RUN_TOKEN`, never from the config (which is
logged and stored), and is sent only to URLs on the studio (`RLSTUDIO_URL`).

Downloads go to a temporary name and are renamed when complete, so a killed download
never leaves a half file that a later attempt would take for the dataset. Only stdlib:
the trainer stays free of HTTP client dependencies.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

TOKEN_ENV = "RLSTUDIO_RUN_TOKEN"
STUDIO_URL_ENV = "RLSTUDIO_URL"
CACHE_ENV = "RLSTUDIO_DATA_CACHE"
TRIES = 4
TIMEOUT_S = 60.0
CHUNK = 1 << 20


class RemoteDataError(OSError):
    """A dataset URL could not be fetched; the message names the URL (without secrets)."""


def is_remote(path: str) -> bool:
    return urlsplit(path).scheme in ("http", "https")


def cache_dir() -> Path:
    default = Path(tempfile.gettempdir()) / f"rlstudio-data-{os.getuid()}"
    return Path(os.environ.get(CACHE_ENV) or default)


def _suffix(url: str, content_type: str) -> str:
    """The readers choose a format by suffix; the studio serves parquet."""
    path_suffix = Path(urlsplit(url).path).suffix.lower()
    if path_suffix in (".parquet", ".pq", ".jsonl", ".json", ".ndjson", ".csv"):
        return path_suffix
    if "json" in content_type:
        return ".jsonl"
    if "csv" in content_type:
        return ".csv"
    return ".parquet"


def is_studio_url(url: str) -> bool:
    """`url` is on the studio that launched this trainer (same scheme, host and port)."""
    studio = os.environ.get(STUDIO_URL_ENV, "")
    if not studio:
        return False
    ours, theirs = urlsplit(studio), urlsplit(url)
    return (ours.scheme, ours.netloc) == (theirs.scheme, theirs.netloc)


def _request(url: str) -> urllib.request.Request:
    request = urllib.request.Request(url)
    token = os.environ.get(TOKEN_ENV)
    if token and is_studio_url(url):  # the run's token goes to its studio, nowhere else
        request.add_header("Authorization", f"Bearer {token}")
    return request


def _download(url: str, target_stem: Path) -> Path:
    with urllib.request.urlopen(_request(url), timeout=TIMEOUT_S) as response:
        suffix = _suffix(url, response.headers.get("Content-Type", ""))
        final = target_stem.with_suffix(suffix)
        if final.exists():
            return final
        expected = response.headers.get("Content-Length")
        fd, tmp_name = tempfile.mkstemp(dir=target_stem.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(response, out, CHUNK)
                out.flush()
                os.fsync(out.fileno())
            size = Path(tmp_name).stat().st_size
            if expected is not None and int(expected) != size:
                raise RemoteDataError(f"{url}: got {size} bytes of {expected}")
            os.replace(tmp_name, final)
        finally:
            if os.path.exists(tmp_name):
                os.unlink(tmp_name)
    return final


def local_copy(path: str) -> str:
    """`path` itself when it is local; else the cached download of the URL."""
    if not is_remote(path):
        return path
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    # Keyed by URL and token: each attempt fetches its own copy, so a stale file from
    # another studio's run 12 (same URL after a database reset) is never reused.
    key = f"{path}\n{os.environ.get(TOKEN_ENV, '')}"
    stem = directory / hashlib.sha256(key.encode()).hexdigest()[:24]
    cached = sorted(directory.glob(f"{stem.name}.*"))
    if cached:
        return str(cached[0])
    delay = 0.5
    for attempt in range(1, TRIES + 1):
        try:
            return str(_download(path, stem))
        except urllib.error.HTTPError as exc:
            detail = exc.read(500).decode("utf-8", "replace")
            if exc.code < 500 or attempt == TRIES:  # 4xx: retrying can't help
                raise RemoteDataError(f"{path}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            if attempt == TRIES:
                raise RemoteDataError(f"{path}: {exc}") from None
        time.sleep(delay)
        delay *= 2
    raise RemoteDataError(f"{path}: not fetched")  # unreachable: the loop raises or returns
