"""What the studio reporter adds to a training step: JSONL only vs JSONL + StudioReporter.

Loads the tiny demo model once and trains step by step, alternating which reporter the
trainer uses (A B B A ..., so drift cancels): A = JSONL only, B = JSONL + StudioReporter
pointed at a local ingest server. The server runs in its own process (as the studio
would), a stdlib HTTP server that accepts every batch and answers like the ingest
endpoint; `--url` with RLSTUDIO_RUN_ID/RLSTUDIO_ATTEMPT/RLSTUDIO_RUN_TOKEN set targets a
real studio instead. Prints the median step time of each, their ratio, the time spent in
the reporter calls of B steps, and the CPU time of the reporter's background threads.

    .venv/bin/python bench/reporter_overhead.py [--steps 12] [--fsync group|record]
        [--demo var]   # folder holding demo-model/ and demo-data/ (built if missing)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from trainer.config import load_config
from trainer.reporting.base import MultiReporter, RunStatus, SampleRecord
from trainer.reporting.jsonl import JsonlReporter
from trainer.reporting.studio import StudioReporter
from trainer.reporting.upload import IngestTarget
from trainer.training.loop import Trainer

ACCEPT_ALL = textwrap.dedent(
    """
    import json, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args):
            pass
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seqs = [r["seq"] for r in body["records"]]
            reply = json.dumps({"stored": len(seqs), "duplicates": 0, "last_seq": max(seqs)})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply.encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """
)


class TimedReporter:
    """Wraps a reporter and adds up the wall time spent inside its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def _timed(self, name: str, *args: Any) -> None:
        started = time.perf_counter()
        getattr(self.inner, name)(*args)
        self.seconds += time.perf_counter() - started

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self._timed("metrics", step, values)

    def samples(self, step: int, samples: list[SampleRecord]) -> None:
        self._timed("samples", step, samples)

    def log(self, level: str, message: str) -> None:
        self._timed("log", level, message)

    def checkpoint(self, step: int, path: str) -> None:
        self._timed("checkpoint", step, path)

    def status(self, status: RunStatus, detail: str = "") -> None:
        self._timed("status", status, detail)

    def progress(self, step: int, total: int) -> None:
        self._timed("progress", step, total)

    def close(self) -> None:
        self.inner.close()


def demo_folders(root: Path) -> tuple[Path, Path]:
    model, data = root / "demo-model", root / "demo-data"
    if not (model / "config.json").exists():
        from trainer.demo.model import build_demo_assets

        print(f"building the demo model in {root} ...", flush=True)
        build_demo_assets(model, data, seed=0)
    return model, data


def background_cpu_s(names: set[str]) -> float:
    """CPU seconds of this process's threads with these names (the reporter's)."""
    ids = {t.native_id for t in threading.enumerate() if t.name in names}
    return sum(t.user_time + t.system_time for t in psutil.Process().threads() if t.id in ids)


def emit_latency_us(policy: str, target: IngestTarget, work: Path, count: int) -> dict[str, float]:
    """Latency of one metrics emit (encode + append + the policy's fsync), microseconds."""
    cfg = load_config(
        overrides=[
            f"logging.spool_dir={work / ('emit-' + policy)}",
            f"logging.spool_fsync={policy}",
        ]
    ).logging
    studio = StudioReporter(target, cfg)
    values = {f"actor/metric_{i}": 0.1 * i for i in range(40)}
    took = []
    for step in range(count):
        started = time.perf_counter()
        studio.metrics(step, values)
        took.append(1e6 * (time.perf_counter() - started))
    studio.close(timeout=10)
    took.sort()
    return {"p50": round(took[count // 2], 1), "p99": round(took[int(count * 0.99)], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="timed steps of each kind")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--fsync", choices=["group", "record"], default="group")
    parser.add_argument("--demo", default="var", help="folder with demo-model/, demo-data/")
    parser.add_argument("--url", help="a real studio (RLSTUDIO_* variables give the rest)")
    parser.add_argument(
        "--control",
        action="store_true",
        help="A/A run: B steps use JSONL only too, to see the noise floor of the ratio",
    )
    parser.add_argument("overrides", nargs="*", help="extra config overrides")
    args = parser.parse_args()

    model, data = demo_folders(Path(args.demo))
    work = Path(tempfile.mkdtemp(prefix="reporter-overhead-"))
    server = None
    if args.url:
        target = IngestTarget(
            url=args.url,
            run_id=os.environ["RLSTUDIO_RUN_ID"],
            attempt=int(os.environ["RLSTUDIO_ATTEMPT"]),
            token=os.environ["RLSTUDIO_RUN_TOKEN"],
        )
    else:
        server = subprocess.Popen(
            [sys.executable, "-c", ACCEPT_ALL], stdout=subprocess.PIPE, text=True
        )
        assert server.stdout is not None
        port = int(server.stdout.readline())
        target = IngestTarget(url=f"http://127.0.0.1:{port}", run_id="1", attempt=1, token="rli_x")
    latency = {}  # against the local server only: it would add records to a real run
    if server is not None:
        latency = {p: emit_latency_us(p, target, work, 2000) for p in ("group", "record")}
    print(f"emit latency (40-key metrics record), us: {latency}", flush=True)
    total = args.warmup + 2 * args.steps
    cfg = load_config(
        overrides=[
            f"model.path={model}",
            f"data.train_files=[{data / 'arith' / 'train.parquet'}]",
            f"data.val_files=[{data / 'arith' / 'test.parquet'}]",
            f"checkpoint.dir={work / 'ckpt'}",
            "checkpoint.resume=never",
            "checkpoint.save_hf=false",
            "logging.console=false",
            "trainer.val_before_train=false",
            f"trainer.total_steps={total + 1}",
            f"logging.spool_dir={work / 'spool'}",
            f"logging.spool_fsync={args.fsync}",
            *args.overrides,
        ]
    )
    jsonl = JsonlReporter(work / "run.jsonl")
    studio = StudioReporter(target, cfg.logging)
    with_studio = TimedReporter(studio)
    plain = MultiReporter([jsonl])
    both = plain if args.control else MultiReporter([jsonl, with_studio])
    trainer = Trainer(cfg, plain)
    order = ["A"] * args.warmup + ["A", "B", "B", "A"] * (args.steps // 2)
    times: dict[str, list[float]] = {"A": [], "B": []}
    # CPU time of the whole process (all threads, the reporter's included): on a shared,
    # loaded machine it is far steadier than wall time, which waits for other jobs.
    cpu_times: dict[str, list[float]] = {"A": [], "B": []}
    threads = {"studio-upload", "spool-fsync"}
    cpu_before = background_cpu_s(threads)
    for index, kind in enumerate(order):
        trainer.reporter = both if kind == "B" else plain
        started, cpu_started = time.perf_counter(), time.process_time()
        trainer.fit(stop_after=trainer.step + 1)
        elapsed, cpu_used = time.perf_counter() - started, time.process_time() - cpu_started
        if index >= args.warmup:
            times[kind].append(elapsed)
            cpu_times[kind].append(cpu_used)
        print(
            f"step {trainer.step} {kind} {elapsed:.3f}s wall {cpu_used:.3f}s cpu",
            flush=True,
        )
    cpu = background_cpu_s(threads) - cpu_before
    flushed = studio.flush(timeout=30)
    sent = studio.uploader.stats
    studio.close()
    jsonl.close()
    if server is not None:
        server.terminate()
    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    result = {
        "steps_each": len(times["A"]),
        "fsync": args.fsync,
        "control_a_a": args.control,
        "median_step_s_jsonl": round(a, 4),
        "median_step_s_jsonl_studio": round(b, 4),
        "ratio": round(b / a, 4),
        "median_step_cpu_s_jsonl": round(statistics.median(cpu_times["A"]), 4),
        "median_step_cpu_s_jsonl_studio": round(statistics.median(cpu_times["B"]), 4),
        "cpu_ratio": round(
            statistics.median(cpu_times["B"]) / statistics.median(cpu_times["A"]), 4
        ),
        "reporter_call_ms_per_b_step": round(1000 * with_studio.seconds / len(times["B"]), 3),
        "cpu_ratio_of_means": round(
            statistics.fmean(cpu_times["B"]) / statistics.fmean(cpu_times["A"]), 4
        ),
        "background_cpu_ms_per_b_step": round(1000 * cpu / len(times["B"]), 3),
        "records_sent": sent.records,
        "batches": sent.batches,
        "all_acked": flushed,
        "emit_latency_us": latency,
        "loadavg": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
