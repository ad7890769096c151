"""Runs on Ray, end to end: real Ray head, Celery worker and beat, web server (ingest),
Postgres and Redis; runs created through the REST API and trained by the real trainer
on a tiny model.
"""

from __future__ import annotations

import itertools
import os
import random
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from studio.runs.models import RunAttempt
from tests.notification_sinks import webhook_sink
from tests.runs.conftest import (
    TERMINAL,
    Api,
    Stack,
    eventually,
    tiny_config,
    trainer_processes,
)
from tests.warm_runtimes import answering
from trainer.warm.rendezvous import runtime_key

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PINNED_REWARD = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    right = float(solution_str.strip() == str(ground_truth).strip())
    return {"score": right, "pinned_version": 1.0}
"""
LAUNCH_POINTS = ("start", "claimed", "token-issued", "submitted", "recorded")


def ray_visible_state(stack: Stack, submission_id: str) -> str:
    """Everything Ray's Jobs, state and log APIs show about the cluster's jobs, actors,
    tasks and runtime environments, and the job's log, as one text."""
    from ray.job_submission import JobSubmissionClient
    from ray.util import state

    dashboard = stack.env["RAY_ADDRESS"]
    client = JobSubmissionClient(dashboard)
    parts = [repr(job) for job in client.list_jobs()]
    parts.append(client.get_job_logs(submission_id))
    for lister in (state.list_actors, state.list_tasks, state.list_runtime_envs):
        parts += [repr(item) for item in lister(address=dashboard, detail=True, limit=10_000)]
    return "\n".join(parts)


def history(run: dict) -> list[tuple[str, str]]:
    return [(c["from_status"], c["to_status"]) for c in run["status_history"]]


def test_a_run_created_through_the_api_goes_queued_running_succeeded_with_metrics(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    version = api.upload_dataset("arith", tiny_assets / "data" / "arith" / "train.parquet")
    reward = api.post(
        "/api/reward-functions/",
        {"project": api.project.slug, "name": "exact", "code": PINNED_REWARD},
        201,
    )
    # No local data path at all: the trainer must fetch the dataset from the studio by URL.
    config = tiny_config(tiny_assets, data={"train_files": ["/nonexistent/train.parquet"]})
    created = api.create_run(
        "happy", config, dataset_version=version, reward_version=reward["latest_version"]["id"]
    )
    # A reconcile pass launches what it picks itself, so a free cluster may have claimed
    # the run by the time the answer is read back: queued or already starting.
    assert created["status"] in ("queued", "starting")

    run = api.wait_status(created["id"], TERMINAL, 180, stack)

    assert run["status"] == "succeeded", run["last_error"]
    assert history(run) == [
        ("", "queued"),
        ("queued", "starting"),
        ("starting", "running"),
        ("running", "succeeded"),
    ]
    keys = api.get(f"/api/runs/{run['id']}/metrics/keys")["keys"]
    assert {"actor/pg_loss", "critic/score/mean"} <= set(keys)
    assert "reward/pinned_version/mean" in keys  # the studio's reward code scored it
    [attempt] = run["attempts"]
    assert attempt["submission_id"] == f"{stack.prefix}-run-{run['id']}-a1"
    sid = attempt["submission_id"]
    # The trainer reports `succeeded` through ingest a moment before its process exits.
    eventually(lambda: stack.ray_jobs()[sid].status == "SUCCEEDED", 30, "the Ray job ended")
    eventually(lambda: api.run(run["id"])["attempts"][0]["ray_status"] == "SUCCEEDED", 10, "")
    # Whatever Ray shows anyone who reaches its dashboard or state API holds none of the
    # run's token, config, reward code or one-time secret: only the path of the file the
    # secret was in, which the trainer read and deleted (tests/runs/live/test_bootstrap_race.py).
    shown = ray_visible_state(stack, sid)
    secret_file = Path(stack.env["RLSTUDIO_CHECKPOINT_ROOT"]) / f"run-{run['id']}/.bootstrap-a1"
    assert str(secret_file) in shown
    assert not secret_file.exists()
    for secret in ("rlb_", "rli_", "solution_str.strip()", "ppo_mini_batch_size", "resource:"):
        assert secret not in shown, secret


def test_a_config_that_fails_in_the_trainer_ends_failed_with_its_error_in_the_api(
    stack: Stack, api: Api, tiny_assets: Path, tmp_path: Path
) -> None:
    # Valid for the schema; the trainer refuses it: 3 prompts can't fill a batch of 4.
    rows = pq.read_table(tiny_assets / "data" / "arith" / "train.parquet").slice(0, 3)
    small = tmp_path / "three.parquet"
    pq.write_table(rows, small)
    config = tiny_config(
        tiny_assets,
        data={"train_files": [str(small)], "train_batch_size": 4},
        actor={"ppo_mini_batch_size": 4},
    )
    with webhook_sink() as hook:
        # The project's chat channel hears of the failure, from the stack's Celery worker.
        webhook = {"webhook_url": hook.url, "webhook_events": ["run_failed"]}
        api.session.put(
            f"{api.url}/api/projects/{api.project.slug}/notifications/", json=webhook, timeout=30
        ).raise_for_status()
        created = api.create_run("too-few-prompts", config)
        run = api.wait_status(created["id"], TERMINAL, 120, stack)
        eventually(lambda: bool(hook.received), 20, "the webhook was posted to")
    [posted] = hook.received
    assert posted["event"] == "run_failed" and "too-few-prompts" in posted["text"]
    assert posted["link"].endswith(f"/runs/{run['id']}")

    assert run["status"] == "failed"
    assert "only 3 usable training prompts" in run["last_error"]
    assert "ValueError" in run["last_error"]
    assert "usable training prompts" in run["status_reason"]
    eventually(
        lambda: api.run(run["id"])["attempts"][0]["ray_status"] == "FAILED", 10, "ray_status"
    )


def test_cancelling_a_running_run_stops_its_ray_job_within_10_s_and_leaves_no_trainer(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    created = api.create_run("long", tiny_config(tiny_assets, steps=10_000))
    run_id = created["id"]
    api.wait_status(run_id, {"running"}, 120, stack)
    eventually(lambda: bool(trainer_processes(run_id)), 60, "the trainer process started")
    # Let it reach training proper (model loaded), where a stop has most to clean up.
    time.sleep(2)

    started = time.monotonic()
    api.post(f"/api/runs/{run_id}/cancel/", {"reason": "test"})
    run = api.wait_status(run_id, TERMINAL, 10, stack)
    took = time.monotonic() - started

    assert run["status"] == "cancelled", run
    assert took < 10
    # The trainer reports `cancelled` from its SIGTERM handler, before it has flushed and
    # exited, so the run can be CANCELLED while Ray still shows the job RUNNING for the
    # last moments of the process: the job must be STOPPED within the same 10 s.
    sid = run["attempts"][0]["submission_id"]
    left = max(0.0, 10 - (time.monotonic() - started))
    eventually(lambda: stack.ray_jobs()[sid].status == "STOPPED", left, "the Ray job stopped")
    stopped = time.monotonic() - started
    eventually(lambda: not trainer_processes(run_id), 2, "no trainer process left")
    print(f"cancel -> cancelled in {took:.2f} s, Ray job stopped in {stopped:.2f} s")


def job_log(stack: Stack, run: dict) -> str:
    from ray.job_submission import JobSubmissionClient

    sid = run["attempts"][0]["submission_id"]
    return str(JobSubmissionClient(stack.ray_address).get_job_logs(sid))


def test_two_runs_in_a_row_succeed_the_second_forked_warm_and_no_trainer_is_left(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    """The first run of a node finds no warm runtime (unless an earlier test's run left
    one), starts cold and starts one; the next run is forked from it (trainer.warm)."""
    assert stack.warm_dir is not None
    config = tiny_config(tiny_assets, steps=1)
    began = time.monotonic()
    first = api.wait_status(api.create_run("first", config)["id"], TERMINAL, 120, stack)
    assert first["status"] == "succeeded", first["last_error"]
    assert "cold start: " in job_log(stack, first) or "warm runtime: " in job_log(stack, first)
    first_s = time.monotonic() - began
    eventually(lambda: bool(answering(stack.warm_dir)), 120, "the warm runtime answers")
    ready_s = time.monotonic() - began

    second = api.wait_status(api.create_run("second", config)["id"], TERMINAL, 60, stack)

    assert second["status"] == "succeeded", second["last_error"]
    assert "warm runtime: forked pid" in job_log(stack, second)
    took = time.monotonic() - began
    print(f"first run {first_s:.1f} s, runtime ready at {ready_s:.1f} s, second at {took:.1f} s")
    [runtime] = answering(stack.warm_dir)
    # The key jobs look for is the one the Ray head's environment gives: what `rlstudio up`
    # computes when it starts the runtime before any job (Ray adds nothing that counts).
    assert runtime["key"] == runtime_key(os.environ)
    for run in (first, second):
        eventually(lambda r=run: not trainer_processes(r["id"]), 10, "no trainer process left")
    eventually(lambda: not psutil.Process(runtime["pid"]).children(), 10, "the runtime reaped")


def test_with_room_for_one_run_queued_runs_start_one_at_a_time_by_priority(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    # The head has 2 CPUs; each run asks for both, so only one fits at a time.
    config = tiny_config(tiny_assets, steps=1, resources={"cpus_per_worker": 2})
    api.dataset_of(tiny_assets / "data" / "arith" / "train.parquet")  # a worker imports it
    stack.worker.stop()  # all three are queued before the queue is looked at
    low = api.create_run("low", config, priority=1)
    high = api.create_run("high", config, priority=3)
    mid = api.create_run("mid", config, priority=2)
    stack.restart_worker()

    api.wait_status(high["id"], {"starting", "running"}, 60, stack)
    waiting = {r["id"]: r for r in (api.run(mid["id"]), api.run(low["id"]))}
    assert [waiting[r["id"]]["queue_position"] for r in (mid, low)] == [1, 2]
    assert "2 CPUs (0.0 free)" in waiting[mid["id"]]["waiting_for"]
    assert f"run {mid['id']}, ahead of it" in waiting[low["id"]]["waiting_for"]

    ids = [high["id"], mid["id"], low["id"]]
    for run_id in ids:
        run = api.wait_status(run_id, TERMINAL, 180, stack)
        assert run["status"] == "succeeded", run["last_error"]
    attempts = {a.run_id: a for a in RunAttempt.objects.filter(run_id__in=ids)}
    spans = [(attempts[i].created_at, attempts[i].finished_at) for i in ids]
    starts = [start for start, _ in spans]
    assert starts == sorted(starts), "runs started out of priority order"
    for (_, previous_end), (next_start, _) in itertools.pairwise(spans):
        assert previous_end is not None
        assert next_start >= previous_end, "two runs held the cluster at once"


def _chaos_state(stack: Stack, api: Api, run_ids: list[int]) -> str:
    """The runs' states, the failpoints not yet passed and the worker's and beat's last
    lines: what a failed chaos wait needs to name its cause."""
    runs = [api.run(run_id) for run_id in run_ids]
    lines = [f"run {r['id']}: {r['status']} {r.get('status_reason') or ''}" for r in runs]
    lines.append(f"armed: {sorted(p.name for p in stack.failpoints.iterdir())}")
    for process in (stack.worker, stack.beat):
        lines.append(f"--- {process.name}, last lines\n{process.log()[-6000:]}")
    return "\n".join(lines)


def test_killing_the_worker_anywhere_in_launch_run_starts_every_run_exactly_once(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    """10 runs, each launch killed once at a random point: 8 by SIGKILL of the process
    running the task (Celery redelivers the message), 2 by SIGKILL of the whole worker,
    parent included, while the task stands at that point (the message stays unacked
    until Redis's visibility timeout: reconcile_runs must finish those launches)."""
    # RLSTUDIO_CHAOS_SEED replays a printed seed: the same points, in the same runs.
    seed = int(os.environ.get("RLSTUDIO_CHAOS_SEED") or random.randrange(1 << 30))
    print(f"chaos seed {seed}")
    rng = random.Random(seed)
    kills = [(rng.choice(LAUNCH_POINTS), "kill") for _ in range(8)]
    kills += [(rng.choice(LAUNCH_POINTS), "hang") for _ in range(2)]
    rng.shuffle(kills)
    # All ten runs fit the head's 2 CPUs at once (0.125 is exact in binary: ten of them sum
    # to 1.25, not a rounding above 2), so each launch starts as soon as a worker is back.
    # With room for four at a time, a launch armed to hang waited for the runs before it
    # to finish training, which took over two minutes on a loaded machine.
    config = tiny_config(tiny_assets, steps=1, resources={"cpus_per_worker": 0.125})
    # No worker while the runs are created and armed, so every failpoint is armed before
    # any launch can pass it (the dataset is imported, by a worker, first).
    api.dataset_of(tiny_assets / "data" / "arith" / "train.parquet")
    stack.worker.stop()
    run_ids: list[int] = []
    for i, (point, action) in enumerate(kills):
        run = api.create_run(f"chaos-{i}", config)
        run_ids.append(run["id"])
        (stack.failpoints / f"run-{run['id']}-{point}").write_text(action)
    print("kills:", list(zip(run_ids, kills, strict=True)))
    stack.restart_worker()
    started = time.monotonic()

    for hung in range(1, sum(action == "hang" for _, action in kills) + 1):
        # Restarted workers append to the same log: count the hangs.
        try:
            eventually(
                lambda n=hung: stack.worker.log().count("hanging in pid") >= n,
                120,
                "a hung launch",
            )
        except AssertionError as missing:
            # This wait failed once in CI and never when replayed: say where every run stood.
            raise AssertionError(f"{missing}\n{_chaos_state(stack, api, run_ids)}") from None
        print(f"hang {hung} seen {time.monotonic() - started:.1f} s after the worker started")
        time.sleep(rng.uniform(0, 0.3))
        stack.worker.kill()  # the whole process group: parent and child
        stack.restart_worker()

    for run_id in run_ids:
        run = api.wait_status(run_id, TERMINAL, 240, stack)
        assert run["status"] == "succeeded", (run_id, run["last_error"])
    assert not list(stack.failpoints.iterdir()), "a failpoint never fired"
    # A trainer reports `succeeded` through ingest a moment before its process exits.
    mine = {f"{stack.prefix}-run-{run_id}-a1" for run_id in run_ids}
    eventually(
        lambda: all(stack.ray_jobs()[sid].status == "SUCCEEDED" for sid in mine),
        60,
        "every Ray job ended",
    )
    jobs = stack.ray_jobs()
    for run_id in run_ids:
        attempts = list(RunAttempt.objects.filter(run_id=run_id))
        assert [a.number for a in attempts] == [1], f"run {run_id}: {attempts}"
        ours = [sid for sid in jobs if sid.startswith(f"{stack.prefix}-run-{run_id}-")]
        assert ours == [attempts[0].submission_id], f"run {run_id}: jobs {ours}"
        assert jobs[ours[0]].status == "SUCCEEDED"


def test_a_hub_model_is_fetched_by_the_worker_with_progress_and_trains(
    stack: Stack, api: Api, tiny_assets: Path
) -> None:
    added = api.post("/api/models/", {"project": api.project.slug, "hub_id": "tiny/model"}, 202)
    seen: list[dict] = []

    def ready() -> bool:
        shown = api.get(f"/api/models/{added['id']}/")
        seen.append(shown)
        return bool(shown["status"] in ("ready", "failed"))

    eventually(ready, 120, "the hub model's download")
    assert seen[-1]["status"] == "ready", seen[-1]["error"]
    assert seen[-1]["info"]["parameters"] > 0
    # The page could show the download moving: some answers were part of the way there.
    partial = [
        s["progress"]
        for s in seen
        if s["status"] == "downloading"
        and s["progress"].get("bytes_done", 0) > 0
        and s["progress"]["bytes_done"] < s["progress"]["bytes_total"]
    ]
    assert partial, [s["progress"] for s in seen]

    config = tiny_config(tiny_assets, steps=1)
    config.pop("model")
    run = api.create_run("from-the-hub", config, model=added["id"])
    done = api.wait_status(run["id"], TERMINAL, 180, stack)
    assert done["status"] == "succeeded", done["last_error"]
    assert done["inputs"]["model"] == {"id": added["id"], "name": "tiny/model", "kind": "hub"}


# Fails on any row without its `difficulty`: the exported rows must keep their extra info.
NEEDS_DIFFICULTY = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    level = extra_info["difficulty"]
    return 1.0 if solution_str.strip().startswith(str(ground_truth)) else 0.5 * (level == "easy")
"""


def test_a_label_export_trains_on_its_rows_templated_once_with_their_extra_info(
    stack: Stack, api: Api, tiny_assets: Path, tmp_path: Path
) -> None:
    table = pq.read_table(tiny_assets / "data" / "arith" / "train.parquet").slice(0, 24)
    rows = table.to_pylist()
    for i, row in enumerate(rows):
        row["extra_info"] = {**row["extra_info"], "difficulty": "easy" if i % 2 else "hard"}
    source = tmp_path / "arith-with-levels.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    version = api.upload_dataset("levels", source)
    reward = api.post(
        "/api/reward-functions/",
        {"project": api.project.slug, "name": "levels", "code": NEEDS_DIFFICULTY},
        201,
    )["latest_version"]["id"]
    config = tiny_config(tiny_assets, logging={"samples_per_step": 4})
    first = api.create_run("labelled", config, dataset_version=version, reward_version=reward)
    run = api.wait_status(first["id"], TERMINAL, 180, stack)
    assert run["status"] == "succeeded", run["last_error"]
    samples = api.get(f"/api/samples/?run={run['id']}&page_size=100")["results"]
    assert samples and not [s["error"] for s in samples if s["error"]]
    by_prompt = {s["prompt"]: s for s in samples}
    assert len(by_prompt) >= 2
    for sample in by_prompt.values():
        api.post(f"/api/samples/{sample['id']}/labels/", {"label": "keep"}, 201)
    exported = api.post(f"/api/runs/{run['id']}/export-labelled", {"new_dataset": "kept"}, 201)
    assert exported["row_count"] == len(by_prompt)

    again = api.create_run(
        "on the export",
        tiny_config(tiny_assets, logging={"samples_per_step": 4}),
        dataset_version=exported["id"],
        reward_version=reward,
        validation="none",
    )
    retrained = api.wait_status(again["id"], TERMINAL, 180, stack)
    assert retrained["status"] == "succeeded", retrained["last_error"]
    trained = api.get(f"/api/samples/?run={retrained['id']}&page_size=100")["results"]
    assert trained and not [s["error"] for s in trained if s["error"]]  # difficulty kept
    # The same rows, templated once: each prompt is one the first run showed, verbatim.
    assert {s["prompt"] for s in trained} <= set(by_prompt)
