"""Live telemetry on Postgres and Redis: ingest throughput and emit-to-browser latency.

Creates a throwaway database (``rlstudio_bench_telemetry`` on the server of
DATABASE_URL), migrates it, starts the studio under uvicorn (ASGI, one process) against
it and REDIS_URL, and measures through the real HTTP endpoints:

  (a) metric ingest: POST /api/ingest/runs/{id}/records with batches the way the
      trainer's uploader sends them (500 records / 1 MiB, one request at a time), each
      record one step of verl-style metrics (40 keys); bodies are encoded before the
      clock starts; with one trainer, then two trainers (two runs) uploading at once;
  (b) sample ingest: the same with GRPO-shaped rollout samples (GSM8K-like prompts and
      reasoning responses, 8 per group, 3 groups per record);
  (c) latency from the trainer's emit to an SSE client: 50 clients hold
      GET /api/runs/{id}/events open while a real StudioReporter (spool + background
      uploader, trainer/reporting/studio.py) emits one metrics step every 100 ms; each
      client records receive time - the record's emit time.

Prints the figures with the load average, then drops the database.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/telemetry.py [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.api_queries import (  # noqa: E402
    METRIC_KEYS,
    database_urls,
    problem,
    prompt_of,
    recreate,
    response_of,
)

BENCH_DB = "rlstudio_bench_telemetry"


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


class World:
    """A user, a project and runs with their ingest tokens (created through the ORM)."""

    def __init__(self) -> None:
        from django.contrib.auth.models import User

        from studio.projects.models import ApiToken, Membership, Project, Role

        self.user = User.objects.create_user("bench", "bench@example.org", "a-long-password-1")
        self.project = Project.objects.create(name="Bench", slug="bench", created_by=self.user)
        Membership.objects.create(project=self.project, user=self.user, role=Role.OWNER)
        self.api_token = ApiToken.issue(self.user, "bench")[1]

    def new_run(self, name: str) -> tuple[int, str]:
        from studio.runs import lifecycle
        from studio.runs.configs import resolve, resources_of
        from studio.runs.models import Run, RunAttempt, RunStatus
        from studio.runs.tokens import issue_ingest_token

        resolved = resolve(preset="grpo-tiny-arith")
        run = Run.objects.create(
            project=self.project,
            name=name,
            config=resolved.tree,
            resources=resources_of(resolved.config),
            created_by=self.user,
            status=RunStatus.STARTING,
        )
        lifecycle.record_creation(run, "bench", self.user)
        attempt = RunAttempt.objects.create(run=run, number=1, submission_id=f"bench-{run.pk}")
        return run.pk, issue_ingest_token(attempt)


def start_server(database_url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "WARNING"}
    argv = [sys.executable, "-m", "uvicorn", "studio.asgi:application", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--lifespan", "off", "--no-access-log", "--log-level", "warning"]
    handle = log.open("ab")
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/health", timeout=2)
            return proc, url
        except urllib.error.HTTPError:
            return proc, url  # it answers (Ray is not part of the bench)
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"uvicorn did not start:\n{log.read_text()[-2000:]}")


# --- (a) and (b): ingest throughput ------------------------------------------------------


def metric_batches(requests_n: int, records: int, keys: int, rng: random.Random) -> list[bytes]:
    bodies, seq, now = [], 0, time.time()
    for _ in range(requests_n):
        batch = []
        for _ in range(records):
            values = {key: rng.gauss(0, 1) for key in METRIC_KEYS[:keys]}
            batch.append(
                {
                    "seq": seq,
                    "kind": "metrics",
                    "time": now,
                    "data": {"step": seq, "values": values},
                }
            )
            seq += 1
        bodies.append(json.dumps({"attempt": 1, "records": batch}).encode())
    return bodies


def sample_batches(requests_n: int, records: int, rng: random.Random) -> list[bytes]:
    bodies, seq, now = [], 0, time.time()
    for _ in range(requests_n):
        batch = []
        for _ in range(records):
            items = []
            for group in range(3):
                p = problem(rng)
                for _ in range(8):
                    response = response_of(p, rng)
                    score = float(response.endswith(f"\\boxed{{{p['total']}}}."))
                    items.append(
                        {
                            "step": seq,
                            "group_id": f"s{seq}-g{group}",
                            "data_source": "gsm8k",
                            "prompt": prompt_of(p),
                            "response": response,
                            "ground_truth": str(p["total"]),
                            "score": score,
                            "components": {"correct": score, "format": 1.0},
                            "advantage": score - 0.5,
                            "prompt_length": 60,
                            "response_length": len(response) // 4,
                            "finish_reason": "stop",
                            "error": "",
                            "split": "train",
                            "token_data": None,
                        }
                    )
            batch.append(
                {
                    "seq": seq,
                    "kind": "samples",
                    "time": now,
                    "data": {"step": seq, "samples": items},
                }
            )
            seq += 1
        bodies.append(json.dumps({"attempt": 1, "records": batch}).encode())
    return bodies


def post_all(url: str, run_id: int, token: str, bodies: list[bytes]) -> float:
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    started = time.perf_counter()
    for body in bodies:
        response = session.post(f"{url}/api/ingest/runs/{run_id}/records", data=body, timeout=120)
        response.raise_for_status()
        assert response.json()["duplicates"] == 0, response.text
    return time.perf_counter() - started


def post_concurrently(url: str, runs: list[tuple[int, str]], batches: list[list[bytes]]) -> float:
    """Each run's batches posted in order by its own thread (one trainer per run)."""
    errors: list[BaseException] = []

    def trainer(run_id: int, token: str, bodies: list[bytes]) -> None:
        try:
            post_all(url, run_id, token, bodies)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=trainer, args=(run_id, token, bodies))
        for (run_id, token), bodies in zip(runs, batches, strict=True)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - started


# --- (c): emit-to-client latency ---------------------------------------------------------


class Clients:
    """N SSE clients on one asyncio loop (in a thread), recording event latencies."""

    def __init__(self, url: str, path: str, token: str, n: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port, self.path, self.token, self.n = host, int(port), path, token, n
        self.latencies: list[float] = []
        self.received: dict[int, list[float]] = {}  # seq -> receive times
        self.ready = threading.Event()
        self.stop = threading.Event()
        self._connected = 0
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        await asyncio.gather(*(self._client() for _ in range(self.n)))

    async def _client(self) -> None:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: text/event-stream\r\n"
            f"Authorization: Bearer {self.token}\r\n\r\n".encode()
        )
        await writer.drain()
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # response headers (chunked body follows)
        buffer = b""
        while not self.stop.is_set():
            size_line = await reader.readline()
            if not size_line:
                break
            size = int(size_line.strip() or b"0", 16)
            chunk = await reader.readexactly(size + 2)
            buffer += chunk[:-2]
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                self._on_frame(frame, time.time())
        writer.close()

    def _on_frame(self, frame: bytes, received: float) -> None:
        event = data = None
        for line in frame.split(b"\n"):
            if line.startswith(b"event: "):
                event = line[7:]
            elif line.startswith(b"data: "):
                data = line[6:]
        if event == b"ready":
            self._connected += 1
            if self._connected == self.n:
                self.ready.set()
        elif event == b"metrics" and data is not None:
            record = json.loads(data)
            self.latencies.append(received - record["time"])
            self.received.setdefault(record["seq"], []).append(received)


def measure_latency(url: str, world: World, clients_n: int, seconds: float) -> dict[str, float]:
    from trainer.config.schema import LoggingConfig
    from trainer.reporting.studio import StudioReporter
    from trainer.reporting.upload import IngestTarget

    run_id, token = world.new_run("latency")
    clients = Clients(url, f"/api/runs/{run_id}/events", world.api_token, clients_n)
    clients.thread.start()
    if not clients.ready.wait(60):
        raise RuntimeError("the SSE clients did not all connect")
    spool = tempfile.mkdtemp(prefix="rls-bench-spool-")
    reporter = StudioReporter(
        IngestTarget(url=url, run_id=str(run_id), attempt=1, token=token),
        LoggingConfig(console=False, spool_dir=spool),
    )
    reporter.status("running")
    rng = random.Random(0)
    steps = int(seconds / 0.1)
    for step in range(1, steps + 1):
        reporter.metrics(step, {key: rng.gauss(0, 1) for key in METRIC_KEYS})
        time.sleep(0.1)
    time.sleep(2)  # the last events reach the clients
    clients.stop.set()
    reporter.status("succeeded")
    reporter.close()
    got = sorted(clients.latencies)
    expected = steps * clients_n
    # Where the time goes: emit -> the studio received the request (spool, uploader, HTTP),
    # then received -> the median client has it (transaction, publish, fan-out, client).
    from studio.telemetry.models import IngestedRecord

    arrived = dict(
        IngestedRecord.objects.filter(run_id=run_id, kind="metrics").values_list(
            "seq", "received_at"
        )
    )
    emitted = dict(
        IngestedRecord.objects.filter(run_id=run_id, kind="metrics").values_list(
            "seq", "emitted_at"
        )
    )
    upload = sorted(arrived[s].timestamp() - emitted[s] for s in arrived)
    fanout = sorted(
        statistics.median(times) - arrived[s].timestamp()
        for s, times in clients.received.items()
        if s in arrived
    )
    return {
        "events": len(got),
        "expected": expected,
        "p50_ms": 1000 * statistics.median(got),
        "p95_ms": 1000 * percentile(got, 0.95),
        "max_ms": 1000 * got[-1],
        "upload_p50_ms": 1000 * statistics.median(upload),
        "upload_p95_ms": 1000 * percentile(upload, 0.95),
        "fanout_p50_ms": 1000 * statistics.median(fanout),
        "fanout_p95_ms": 1000 * percentile(fanout, 0.95),
    }


def percentile(ordered: list[float], q: float) -> float:
    return ordered[int(q * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20, help="metric batches to post")
    parser.add_argument("--records", type=int, default=500, help="records per metric batch")
    parser.add_argument("--keys", type=int, default=40, help="metric keys per step")
    parser.add_argument(
        "--trainers", type=int, nargs="+", default=[1, 2], help="concurrent uploaders for (a)"
    )
    parser.add_argument("--sample-requests", type=int, default=10)
    parser.add_argument("--sample-records", type=int, default=40, help="records per batch")
    parser.add_argument("--clients", type=int, default=50, help="SSE clients for (c)")
    parser.add_argument("--seconds", type=float, default=30, help="emit time for (c)")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()

    admin, bench_url = database_urls(BENCH_DB)
    recreate(admin, name=BENCH_DB)
    log = Path(tempfile.mkdtemp(prefix="rls-bench-")) / "uvicorn.log"
    server = None
    try:
        setup_django(bench_url)
        world = World()
        server, url = start_server(bench_url, log)
        rng = random.Random(0)
        print(f"load average before: {loadavg()}")

        warm_run, warm_token = world.new_run("warm-up")
        post_all(url, warm_run, warm_token, metric_batches(2, 50, args.keys, rng))

        for trainers in args.trainers:
            runs = [world.new_run(f"metrics-{trainers}-{i}") for i in range(trainers)]
            batches = [metric_batches(args.requests, args.records, args.keys, rng) for _ in runs]
            seconds = post_concurrently(url, runs, batches)
            points = trainers * args.requests * args.records * args.keys
            size = sum(map(len, batches[0])) / len(batches[0]) / 1024
            print(
                f"(a) metrics, {trainers} trainer(s) uploading at once: {points} points in "
                f"{seconds:.2f} s = {points / seconds:,.0f} points/s ({args.requests} requests "
                f"each of {args.records} records x {args.keys} keys, {size:.0f} KiB; "
                f"load {loadavg()})"
            )

        bodies = sample_batches(args.sample_requests, args.sample_records, rng)
        run_id, token = world.new_run("samples")
        seconds = post_all(url, run_id, token, bodies)
        count = args.sample_requests * args.sample_records * 24
        size = sum(map(len, bodies)) / len(bodies) / 1024
        print(
            f"(b) samples: {count} samples in {seconds:.2f} s = {count / seconds:,.0f} samples/s "
            f"({args.sample_requests} requests of {args.sample_records * 24} samples, "
            f"{size:.0f} KiB each; load {loadavg()})"
        )

        result = measure_latency(url, world, args.clients, args.seconds)
        print(
            f"(c) emit -> SSE client, {args.clients} clients: p50 {result['p50_ms']:.0f} ms, "
            f"p95 {result['p95_ms']:.0f} ms, max {result['max_ms']:.0f} ms "
            f"({result['events']}/{result['expected']} events; load {loadavg()})\n"
            f"    of which emit -> request received: p50 {result['upload_p50_ms']:.0f} ms, "
            f"p95 {result['upload_p95_ms']:.0f} ms; received -> median client: "
            f"p50 {result['fanout_p50_ms']:.0f} ms, p95 {result['fanout_p95_ms']:.0f} ms"
        )
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        from django.db import connections

        connections.close_all()
        if not args.keep:
            recreate(admin, drop_only=True, name=BENCH_DB)


if __name__ == "__main__":
    main()
