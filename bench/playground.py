"""The chat playground on the live stack, CPU: first streamed token with the model warm,
and tokens per second, on the demo model.

Creates a throwaway database (``rlstudio_bench_playground`` on the server of
DATABASE_URL) and starts what a studio runs: a Ray head (2 CPUs), the web server (uvicorn)
and a Celery worker, on a Redis database of their own. The demo model (the tests' cached
build under var/test-cache, else built now) is the project's model. One message loads it
(the cold start: the Ray job starts and loads the model), then each of `--messages`
messages is timed as the page sees it:

  (a) first token: from the POST of the message to the first `chunk` event on the
      exchange's SSE stream (the server decodes, posts the chunk, the studio publishes it
      on Redis and the stream forwards it);
  (b) tokens/s: the reply's tokens (`--tokens`, forced with a minimum reply length) over
      its generation time on the model server, and over the time the page saw it take
      (first chunk to `done`).

Prints the median and the bad tail (p95 of the latency, p5 of the rates), with the load
average, and writes bench/results/playground-<date>.txt.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/playground.py [--messages 20] [--tokens 128]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_queries import database_urls, recreate

REPO = Path(__file__).resolve().parents[1]
BENCH_DB = "rlstudio_bench_playground"
RESULTS = REPO / "bench" / "results"


def demo_model(scratch: Path) -> Path:
    """The tests' cached demo build (the real builder, seeded), or a fresh one."""
    cached = sorted((REPO / "var" / "test-cache").glob("demo-*/complete"))
    if cached:
        return cached[-1].parent / "model"
    from trainer.demo.model import build_demo_assets

    build_demo_assets(scratch / "model", scratch / "data", seed=0)
    return scratch / "model"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=128)
    args = parser.parse_args()

    admin, url = database_urls(BENCH_DB)
    recreate(admin, name=BENCH_DB)
    redis_url = urlsplit(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    os.environ["REDIS_URL"] = redis_url._replace(path="/13").geturl()  # our own broker db
    os.environ["DATABASE_URL"] = url
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, check=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    import django

    django.setup()
    import redis
    import requests

    from studio.projects.models import ApiToken, Membership, Project, Role
    from tests.live import (
        free_port,
        ray_client_env,
        start_celery_worker,
        start_ray_head,
        start_web_server,
    )
    from tests.playground_client import chat

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    scratch = Path(tempfile.mkdtemp(prefix="bench-playground-"))
    model_dir = demo_model(scratch)
    logs = scratch / "logs"
    logs.mkdir()
    ray = start_ray_head(logs, num_cpus=2)
    os.environ.update(ray_client_env(ray))  # the head wants its token from every client
    port = free_port()
    env = {
        "RAY_ADDRESS": ray.info["address"],
        "RLSTUDIO_URL": f"http://127.0.0.1:{port}",
        "RLSTUDIO_RAY_JOB_PREFIX": f"bp{secrets.token_hex(2)}",
        "RLSTUDIO_MODEL_ROOTS": str(model_dir.parent),
        "RLSTUDIO_TRAINER_WORKDIR": str(scratch),
        "LOG_LEVEL": "WARNING",
    }
    processes = [ray, start_web_server(logs, port=port, **env), start_celery_worker(logs, **env)]
    try:
        from django.contrib.auth.models import User

        owner = User.objects.create_user("bench", password="x" * 20)
        project = Project.objects.create(name="Bench", slug="bench", created_by=owner)
        Membership.objects.create(project=project, user=owner, role=Role.OWNER)
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {ApiToken.issue(owner, 'bench')[1]}"
        base = f"http://127.0.0.1:{port}"
        [folder] = [
            f["folder"]
            for f in session.get(f"{base}/api/models/available/?project=bench").json()
            if f["name"] == model_dir.name
        ]
        model = session.post(f"{base}/api/models/", json={"project": "bench", "folder": folder})
        target = {"model": int(model.json()["id"])}
        sampling = {"temperature": 1.0, "max_new_tokens": args.tokens}
        sampling["min_new_tokens"] = args.tokens
        cold = chat(base, session, "bench", [target], {**sampling, "seed": 0})
        first, server_rate, page_rate = [], [], []
        for i in range(args.messages):
            warm = chat(base, session, "bench", [target], {**sampling, "seed": i + 1})
            [done] = warm.of("done")
            assert done["tokens"] == args.tokens, done
            first.append(warm.first("chunk"))
            server_rate.append(done["tokens"] / done["seconds"])
            page_rate.append(done["tokens"] / (warm.first("done") - warm.first("chunk")))
    finally:
        for process in reversed(processes):
            process.stop()
        recreate(admin, drop_only=True, name=BENCH_DB)

    def line(name: str, values: list[float], unit: str, digits: int, tail: float) -> str:
        """Median and the bad tail: p95 of a latency, p5 of a rate."""
        median, worst = statistics.median(values), percentile(values, tail)
        label = f"p{round(tail * 100)}"
        return f"{name:<34} median {median:.{digits}f} {unit}, {label} {worst:.{digits}f} {unit}"

    report = [
        f"bench/playground.py --messages {args.messages} --tokens {args.tokens}",
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; model server: 0.5 CPU, 1 thread",
        f"model: {model_dir} (demo, tiny shape)",
        f"cold start (job start + load + first chunk): {cold.first('chunk'):.2f} s",
        line("first streamed token, model warm", first, "s", 3, 0.95),
        line("tokens/s, model server", server_rate, "tok/s", 1, 0.05),
        line("tokens/s, as the page sees them", page_rate, "tok/s", 1, 0.05),
    ]
    text = "\n".join(report) + "\n"
    print(text, end="")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"playground-{datetime.date.today():%Y-%m-%d}.txt"
    out.write_text(text)
    print(f"written to {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
