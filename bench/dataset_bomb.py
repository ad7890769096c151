"""Dataset bombs uploaded to a running studio, and a bomb stored before it was measured,
read back: peak memory of the web process and of the worker that imports.

The files:

- ``compressed``: the one the security review sent: 300,000 verl rows whose prompts
  repeat one 1,000-character text, zstd-compressed to about 38 KB, which decodes to
  about 300 MB;
- ``dictionary``: about 800 bytes, one 1 MiB string that 1,500 rows refer to (a
  dictionary-encoded column; its footer declares about 1 MB), 1.5 GiB decoded;
- ``dictionary-worker``: one 250,000-character string (under the per-value bound) that
  2,000 rows refer to, 477 MiB decoded: over the web's share, so a worker reads it;
- ``dictionary-pages``: the same, written without an arrow schema, so pyarrow would
  decode its dictionary pages into every row unless it reads them as a dictionary.

Then the ``dictionary`` file is stored as a version directly, without the import's
checks (as versions stored before dictionaries were counted), and its preview (100
rows), its diff with the version before, and its download are asked for.

Creates a throwaway database (``rlstudio_bench_bomb`` on the server of DATABASE_URL),
starts uvicorn and one Celery worker (``--pool solo``, so the worker is one process) on
it, imports a small file through each and reads one back (so both processes have loaded
what an import and a read need), then sends each file and makes each read, sampling
both processes' resident memory every 10 ms. Prints, per case, the answer, the import's
error, and each process's peak above its memory just before the case; then drops the
database.

    REDIS_URL=redis://127.0.0.1:6379/13 \\
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/dataset_bomb.py [--rows 300000] [--chars 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import database_urls, load, recreate
from bench.telemetry import start_server

BENCH_DB = "rlstudio_bench_bomb"
REPO = Path(__file__).resolve().parents[1]
MiB = 1024**2


def verl_parquet(rows: int, chars: int) -> bytes:
    """verl rows whose prompt is one repeated text: compresses about a thousandfold."""
    table = pa.table(
        {
            "data_source": ["arith"] * rows,
            "prompt": [[{"role": "user", "content": "a" * chars}]] * rows,
            "reward_model": [{"style": "rule", "ground_truth": "1"}] * rows,
        }
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def dictionary_parquet(rows: int, chars: int, arrow_schema: bool = True) -> bytes:
    """prompt/answer rows that all refer to one `chars`-long prompt in a dictionary."""
    prompt = pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, type=pa.int32()), pa.array(["a" * chars])
    )
    table = pa.table({"prompt": prompt, "answer": pa.array(["1"] * rows)})
    buffer = io.BytesIO()
    pq.write_table(
        table, buffer, compression="zstd", store_schema=arrow_schema, write_statistics=False
    )
    return buffer.getvalue()


class PeakSampler:
    """Samples the resident memory of some processes until stopped; keeps each peak."""

    def __init__(self, processes: dict[str, psutil.Process], every_s: float = 0.01) -> None:
        self.processes = processes
        self.every_s = every_s
        self.peaks = {name: p.memory_info().rss for name, p in processes.items()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, process in self.processes.items():
                with contextlib.suppress(psutil.Error):  # it may be between two states
                    self.peaks[name] = max(self.peaks[name], process.memory_info().rss)
            time.sleep(self.every_s)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def multipart(filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), boundary


def raw_request(
    url: str, token: str, method: str = "GET", body: bytes | None = None, **headers: str
) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    for key, value in headers.items():
        req.add_header(key.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(req, timeout=600) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def request(
    url: str, token: str, method: str = "GET", body: bytes | None = None, **headers: str
) -> tuple[int, Any]:
    status, content = raw_request(url, token, method, body, **headers)
    return status, json.loads(content or b"null")


def upload(url: str, token: str, dataset_id: int, filename: str, content: bytes) -> tuple[int, Any]:
    body, boundary = multipart(filename, content)
    return request(
        f"{url}/api/datasets/{dataset_id}/versions/",
        token,
        "POST",
        body,
        Content_Type=f"multipart/form-data; boundary={boundary}",
    )


def wait_import(url: str, token: str, dataset_id: int, import_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        _, dataset = request(f"{url}/api/datasets/{dataset_id}/", token)
        job = next((j for j in dataset.get("imports", []) if j["id"] == import_id), None)
        if job and job["status"] in ("succeeded", "failed"):
            return job
        time.sleep(0.2)
    raise TimeoutError(f"import {import_id} did not finish")


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker", "--pool"]
    argv += ["solo", "-Q", "control", "-l", "INFO", "--without-gossip", "--without-mingle"]
    argv += ["--hostname", f"bench-bomb-{os.getpid()}@%h"]
    handle = log.open("ab")
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text(errors="replace"):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"celery worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)
    return proc


def store_unmeasured(dataset: Any, content: bytes, stats: dict[str, Any], user: Any) -> int:
    """Store `content` as the dataset's next version without the import's checks or a
    recorded measure (stats copied from another version): a version stored before
    dictionaries were counted. Returns its number."""
    from studio.datasets.normalise import IngestedFile, sha256_of
    from studio.datasets.stored import RECORD_KEY
    from studio.datasets.versions import staging_folder, store_version

    path = staging_folder() / "data.parquet"
    path.write_bytes(content)
    metadata = pq.read_metadata(path)
    ingested = IngestedFile(
        path=path,
        source_format="parquet",
        data_format="prompt_answer",
        mapping={"prompt_key": "prompt", "answer_key": "answer", "data_source": "default"},
        row_count=metadata.num_rows,
        columns=[{"name": f.name, "type": str(f.type)} for f in metadata.schema.to_arrow_schema()],
        stats={k: v for k, v in stats.items() if k != RECORD_KEY},
        checksum=sha256_of(path),
        size_bytes=len(content),
    )
    return int(store_version(dataset, ingested, message="unmeasured", user=user).number)


def report_peaks(sampler: PeakSampler, before: dict[str, int]) -> str:
    return "; ".join(
        f"{name} {(sampler.peaks[name] - before[name]) / MiB:.1f} MiB above idle "
        f"({before[name] / MiB:.0f} -> {sampler.peaks[name] / MiB:.0f} MiB)"
        for name in ("web", "worker")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--chars", type=int, default=1000)
    args = parser.parse_args()

    admin, bench_url = database_urls(BENCH_DB)
    recreate(admin, name=BENCH_DB)
    os.environ["DATABASE_URL"] = bench_url
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    media = Path(tempfile.mkdtemp(prefix="rlstudio-bench-bomb-"))
    os.environ["MEDIA_ROOT"] = str(media / "media")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from studio.datasets.models import Dataset, DatasetVersion
    from studio.projects.models import ApiToken, Membership, Project, Role

    web = worker = None
    try:
        call_command("migrate", verbosity=0)
        user = User.objects.create_user("bench", password="a-long-password-123")
        project = Project.objects.create(name="Bench", slug="bench", created_by=user)
        Membership.objects.create(project=project, user=user, role=Role.MEMBER)
        dataset = Dataset.objects.create(project=project, name="bomb", created_by=user)
        _, token = ApiToken.issue(user, "bench")

        uploads = [
            ("compressed", verl_parquet(args.rows, args.chars), args.rows * args.chars),
            ("dictionary", dictionary_parquet(1500, MiB), 1500 * MiB),
            ("dictionary-worker", dictionary_parquet(2000, 250_000), 2000 * 250_000),
            ("dictionary-pages", dictionary_parquet(2000, 250_000, False), 2000 * 250_000),
        ]
        for name, content, decoded in uploads:
            print(f"[file] {name}: {len(content):,} bytes on disk, "
                  f"{decoded / MiB:,.0f} MiB of text decoded")  # fmt: skip
        print(f"[bounds] web imports up to {settings.RLSTUDIO_ASYNC_IMPORT_BYTES / MiB:.0f} MiB "
              f"decoded; any import: {settings.RLSTUDIO_IMPORT_MAX_DECODED_BYTES / MiB:.0f} MiB, "
              f"{settings.RLSTUDIO_IMPORT_MAX_ROWS:,} rows, "
              f"{settings.RLSTUDIO_IMPORT_MAX_CELL_CHARS:,} characters a value; a page of rows "
              f"{settings.RLSTUDIO_PREVIEW_MAX_BYTES / MiB:.0f} MiB")  # fmt: skip

        env = {**os.environ, "LOG_LEVEL": "WARNING"}
        web, url = start_server(bench_url, media / "web.log")
        worker = start_worker(env, media / "worker.log")
        processes = {"web": psutil.Process(web.pid), "worker": psutil.Process(worker.pid)}

        # Warm both processes with a real import each (a small file through the web,
        # one over the web's share through the worker) and a read of each kind: after
        # this is "idle".
        status, body = upload(url, token, dataset.pk, "warm.parquet", verl_parquet(200, 100))
        assert status == 201, body
        warm_large = verl_parquet(60_000, 200)  # 12 MB decoded: a background import
        status, body = upload(url, token, dataset.pk, "warm-large.parquet", warm_large)
        assert status == 202, body
        assert wait_import(url, token, dataset.pk, body["id"])["status"] == "succeeded"
        versions = f"{url}/api/datasets/{dataset.pk}/versions"
        for warm_read in (f"{versions}/2/preview/?limit=100", f"{versions}/2/download/",
                          f"{url}/api/datasets/{dataset.pk}/diff/?from=1&to=2"):  # fmt: skip
            assert raw_request(warm_read, token)[0] == 200, warm_read
        time.sleep(1.0)

        for name, content, _ in uploads:
            before = {key: p.memory_info().rss for key, p in processes.items()}
            with PeakSampler(processes) as sampler:
                started = time.monotonic()
                status, body = upload(url, token, dataset.pk, f"{name}.parquet", content)
                answered = time.monotonic() - started
                job = wait_import(url, token, dataset.pk, body["id"]) if status == 202 else None
                finished = time.monotonic() - started
                time.sleep(0.3)
            print(f"[{name}] upload HTTP {status} after {answered:.2f} s: "
                  f"{json.dumps(body)[:240]}")  # fmt: skip
            if job is not None:
                print(f"[{name}] import {job['status']} after {finished:.2f} s: {job.get('error')}")
            print(f"[{name}] memory: {report_peaks(sampler, before)}")

        warm = DatasetVersion.objects.get(dataset=dataset, number=2)
        stored = store_unmeasured(dataset, uploads[1][1], warm.stats, user)
        print(f"[stored] the dictionary file stored unmeasured as version {stored}")
        reads = [
            ("preview", f"{versions}/{stored}/preview/?limit=100"),
            ("diff", f"{url}/api/datasets/{dataset.pk}/diff/?from=2&to={stored}"),
            ("download", f"{versions}/{stored}/download/"),
        ]
        for name, address in reads:
            before = {key: p.memory_info().rss for key, p in processes.items()}
            with PeakSampler(processes) as sampler:
                started = time.monotonic()
                status, content = raw_request(address, token)
                answered = time.monotonic() - started
                time.sleep(0.3)
            print(f"[read {name}] HTTP {status} after {answered:.2f} s, {len(content):,} bytes: "
                  f"{content[:300].decode(errors='replace')}")  # fmt: skip
            print(f"[read {name}] memory: {report_peaks(sampler, before)}")
        status, _ = request(f"{url}/api/health", token)
        # 503 here only because the bench starts no Ray head; it answered at once.
        print(f"[after] /api/health HTTP {status} (no Ray head in this bench); {load()}")
    finally:
        for proc in (web, worker):
            if proc is not None:
                proc.terminate()
                proc.wait(10)
        from django.db import connections

        connections.close_all()
        recreate(admin, drop_only=True, name=BENCH_DB)


if __name__ == "__main__":
    main()
