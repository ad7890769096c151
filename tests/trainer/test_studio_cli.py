"""`python -m trainer run` launched the way the studio launches it (RLSTUDIO_* variables):
every record reaches the ingest endpoint, a crash reports `failed` with its traceback,
SIGTERM reports `cancelled` within Ray's grace period. Real subprocesses, real tiny
model, a real local HTTP server standing in for the studio's ingest endpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainer.distributed.cluster import die_with_parent
from trainer.reporting.jsonl import read_records

from .ingest_stub import TOKEN, IngestStub

REPO = Path(__file__).resolve().parents[2]
SMALL = [
    "data.train_batch_size=2",
    "actor.ppo_mini_batch_size=2",
    "rollout.n=4",
    "rollout.max_new_tokens=8",
    "data.max_val_samples=6",
    "logging.samples_per_step=4",
    "logging.token_data_fraction=0.5",
    "checkpoint.save_hf=false",
]


@pytest.fixture
def stub():
    server = IngestStub(run_id="41").start()
    yield server
    server.stop()


def launch(demo: Path, tmp: Path, stub: IngestStub, *overrides: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.update(
        RLSTUDIO_URL=stub.url,
        RLSTUDIO_RUN_ID="41",
        RLSTUDIO_ATTEMPT="1",
        RLSTUDIO_RUN_TOKEN=TOKEN,
        PYTHONUNBUFFERED="1",
    )
    args = [
        f"model.path={demo / 'model'}",
        f"data.train_files=[{demo / 'data' / 'arith' / 'train.parquet'}]",
        f"data.val_files=[{demo / 'data' / 'arith' / 'test.parquet'}]",
        f"checkpoint.dir={tmp / 'ckpt'}",
        f"logging.spool_dir={tmp / 'spool'}",
        *SMALL,
        *overrides,
    ]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trainer",
            "run",
            "--quiet",
            "--jsonl",
            str(tmp / "run.jsonl"),
            *args,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=die_with_parent,  # a killed pytest takes its trainer along
    )


def statuses(stub: IngestStub) -> list[str]:
    return [r["data"]["status"] for r in stub.of_kind("status")]


def test_a_run_sends_every_record_once_matching_its_jsonl_log(demo_assets, tmp_path, stub):
    proc = launch(demo_assets, tmp_path, stub, "trainer.total_steps=2", "checkpoint.save_every=1")
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, output
    seqs = stub.seqs()
    assert seqs == list(range(len(seqs)))  # no gap, no duplicate
    assert statuses(stub) == ["running", "succeeded"]

    jsonl = read_records(tmp_path / "run.jsonl")
    metric_steps = [r["step"] for r in jsonl if r["type"] == "metrics"]
    assert [r["data"]["step"] for r in stub.of_kind("metrics")] == metric_steps
    sent = [s for r in stub.of_kind("samples") for s in r["data"]["samples"]]
    logged = [s for r in jsonl if r["type"] == "samples" for s in r["samples"]]
    assert [(s["step"], s["split"], s["response"]) for s in sent] == [
        (s["step"], s["split"], s["response"]) for s in logged
    ]
    assert [r["data"]["step"] for r in stub.of_kind("checkpoint")] == [1, 2]

    val = [s for s in sent if s["split"] == "val"]
    assert len(val) == 2 * 6  # every validation sample, before training and at the end
    train = [s for s in sent if s["split"] == "train"]
    assert {s["step"] for s in train} == {1, 2}
    for step in (1, 2):  # whole groups of rollout.n=4
        groups = [s["group_id"] for s in train if s["step"] == step]
        assert all(groups.count(g) == 4 for g in groups)
    with_tokens = [s for s in train if s["token_data"]]
    assert with_tokens and all(
        len(s["token_data"]["advantages"]) == s["response_length"] for s in with_tokens
    )
    assert not (tmp_path / "spool" / "run-41-attempt-1.spool").exists()  # fully delivered

    # The startup timeline: the marks made before the reporter existed in its first record,
    # each later one as it happened, each once, in the order the run reached them.
    marks = [m for r in stub.of_kind("startup") for m in r["data"]["phases"].items()]
    assert [name for name, _ in marks] == [
        "process_started",
        "imports_done",
        "model_loaded",
        "data_loaded",
        "first_validation",
        "first_rollout",
        "first_step",
    ]
    times = [at for _, at in marks]
    assert times == sorted(times)
    first_metric = stub.of_kind("metrics")[0]["time"]
    assert times[4] <= first_metric <= times[5]  # validated before training, then reported


def test_a_crashing_run_reports_failed_with_its_traceback(demo_assets, tmp_path, stub):
    reward = tmp_path / "broken.py"
    reward.write_text(
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    raise ValueError('reward exploded')\n"
    )
    proc = launch(
        demo_assets,
        tmp_path,
        stub,
        "trainer.total_steps=2",
        "trainer.val_before_train=false",
        "reward.function=custom",
        f"reward.custom_path={reward}",
    )
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert statuses(stub) == ["running", "failed"]
    detail = stub.of_kind("status")[-1]["data"]["detail"]
    assert "RewardErrorRateExceeded" in detail and "reward exploded" in detail
    assert "Traceback" in output


def test_sigterm_reports_cancelled_and_exits_before_rays_sigkill(demo_assets, tmp_path, stub):
    proc = launch(
        demo_assets, tmp_path, stub, "trainer.total_steps=500", "trainer.val_before_train=false"
    )
    deadline = time.monotonic() + 240
    while not stub.of_kind("metrics"):
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no metrics arrived"
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    output, _ = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    print(f"SIGTERM to exit: {took:.2f} s")
    assert proc.returncode == 128 + signal.SIGTERM, output
    assert took < 3.0, f"took {took:.1f}s; Ray sends SIGKILL after 3 s"
    assert statuses(stub)[-1] == "cancelled"
    seqs = stub.seqs()
    assert seqs == list(range(len(seqs)))
