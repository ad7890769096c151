"""Nothing lost: a real trainer run (`python -m trainer run`, tiny demo model)
reports to a real studio (uvicorn, Postgres, Redis) whose web server is SIGKILLed for 30 s
in the middle of the run and restarted on the same port. Once the spool has drained, the
database holds every record of the trainer's own JSONL log exactly once: each metric
point, rollout sample, log line, checkpoint notice and status record; none missing, none
twice. The run ends SUCCEEDED through its status records and its token is then refused.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests
from django.db.models import Count

from studio.runs.models import Checkpoint, Run, RunAttempt, RunStatus
from studio.telemetry.models import IngestedRecord, LogLine, MetricPoint, RolloutSample
from tests.live import LiveProcess, free_port, spawn, start_web_server, wait_for
from tests.telemetry.conftest import Trainer, make_lab
from trainer.reporting.jsonl import read_records
from trainer.reporting.spool import SpoolPaths, read_acked
from trainer.reporting.studio import finite, tail

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(900)]

OUTAGE_S = 30.0  # the figure
KILL_AFTER_STEP = 2  # "after a few steps": this step's metrics are in the database
TOTAL_STEPS = 24
# The run must still be going when the studio comes back (~35 s after the kill), on an
# idle machine too, where a step of this tiny model takes ~0.4 s. The reward function is
# paced like a rate-limited remote verifier: call i waits until i * REWARD_PACE_S after
# the first call. ~230 calls make the run last at least ~70 s without burning CPU; on a
# loaded machine, where steps are slower than the pace, it never waits.
REWARD_PACE_S = 0.3
LONG_PROMPTS = 3  # training prompts over data.max_prompt_length: the run logs a warning
RUN_CONFIG = [
    f"trainer.total_steps={TOTAL_STEPS}",
    "trainer.val_every=4",  # validation samples flow during the run, not only at its ends
    "checkpoint.save_every=5",
    "checkpoint.save_hf=false",
    "data.train_batch_size=2",
    "data.max_prompt_length=32",
    "data.max_val_samples=6",
    "actor.ppo_mini_batch_size=2",
    "rollout.n=4",
    "rollout.max_new_tokens=8",
    # The paced reward keeps its clock in module state across calls, which the sandbox
    # (a fresh process per call) would reset: this trusted test code opts in explicitly.
    "reward.executor=inprocess",
    "logging.samples_per_step=4",
    "logging.token_data_fraction=0.5",
]


# -- what the trainer logged vs what the studio stored, as natural keys ----------------


def _free_text(text: str) -> str:
    return text.replace("\x00", "\ufffd")  # Postgres text holds no NUL (docs/telemetry.md)


def _json_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _number_key(value: float | None) -> float | None:
    """NaN never equals itself: a missing score and a non-finite one compare as None."""
    return None if value is None or not math.isfinite(value) else value


# A sample's fields (SampleRecord's, the RolloutSample columns of the same names).
SAMPLE_FIELDS = (
    "step",
    "split",
    "group_id",
    "data_source",
    "prompt",
    "response",
    "ground_truth",
    "score",
    "advantage",
    "prompt_length",
    "response_length",
    "finish_reason",
    "error",
    "components",
    "token_data",
)


def _sample_key(sample: dict[str, Any]) -> tuple[Hashable, ...]:
    token_data = sample["token_data"]
    if token_data is not None:
        token_data = {
            name: [_free_text(v) if isinstance(v, str) else v for v in series]
            for name, series in token_data.items()
        }
    return (
        sample["step"],
        sample["split"],
        sample["group_id"],
        sample["data_source"],
        _free_text(sample["prompt"]),
        _free_text(sample["response"]),
        _free_text(sample["ground_truth"]),
        _number_key(sample["score"]),
        _number_key(sample["advantage"]),
        sample["prompt_length"],
        sample["response_length"],
        sample["finish_reason"],
        _free_text(sample["error"]),
        _json_key(sample["components"]),
        _json_key(token_data),
    )


KINDS = ("metrics", "samples", "log", "checkpoint", "status")


@dataclass
class Rows:
    """One run's records as natural keys, per kind: metric points (step, key, value),
    samples (every field), log lines and status records (in emit order), checkpoint
    notices (step, path)."""

    metrics: Counter[tuple[Hashable, ...]]
    samples: Counter[tuple[Hashable, ...]]
    log: list[tuple[str, str]]
    checkpoint: Counter[tuple[int, str]]
    status: list[tuple[str, str]]


def expected_rows(jsonl: Iterable[dict[str, Any]]) -> Rows:
    """What the studio must hold for the trainer's JSONL records, with the wire format's
    own rules applied (non-finite metric values are not stored; long messages are cut
    the way the studio reporter cuts them; NUL becomes U+FFFD in free text)."""
    rows = Rows(Counter(), Counter(), [], Counter(), [])
    for record in jsonl:
        kind = record["type"]
        if kind == "metrics":
            rows.metrics.update(
                (record["step"], key, value)
                for key, value in finite(record["values"]).items()
                if value is not None
            )
        elif kind == "samples":
            rows.samples.update(_sample_key(finite(s)) for s in record["samples"])
        elif kind == "log":
            rows.log.append((record["level"], _free_text(tail(record["message"]))))
        elif kind == "checkpoint":
            rows.checkpoint[(record["step"], record["path"])] += 1
        elif kind == "status":
            rows.status.append((record["status"], _free_text(tail(record["detail"]))))
    return rows


def stored_rows(run: Run) -> Rows:
    """What the studio holds for `run`, read back from its tables."""
    statuses: list[Any] = list(
        IngestedRecord.objects.filter(run=run, kind="status")
        .order_by("attempt", "seq")
        .values_list("data", flat=True)
    )
    return Rows(
        metrics=Counter(MetricPoint.objects.filter(run=run).values_list("step", "key", "value")),
        samples=Counter(
            _sample_key(s)
            for s in RolloutSample.objects.filter(run=run).values(*SAMPLE_FIELDS).iterator()
        ),
        log=list(
            LogLine.objects.filter(run=run)
            .order_by("attempt", "seq")
            .values_list("level", "message")
        ),
        checkpoint=Counter(Checkpoint.objects.filter(run=run).values_list("step", "uri")),
        status=[(data["status"], data["detail"]) for data in statuses],
    )


def missing_and_extra(expected: Rows, stored: Rows) -> dict[str, tuple[int, int]]:
    """Per kind: (records the trainer logged that the studio lacks, records the studio
    holds more often than the trainer logged them)."""
    found: dict[str, tuple[int, int]] = {}
    for kind in KINDS:
        want, have = Counter(getattr(expected, kind)), Counter(getattr(stored, kind))
        found[kind] = ((want - have).total(), (have - want).total())
    return found


# -- the run ----------------------------------------------------------------------------


def training_data(demo: Path, tmp: Path) -> Path:
    """The demo's training prompts plus a few too long for data.max_prompt_length=32:
    the trainer leaves them out and says so in a log record."""
    table = pq.read_table(demo / "data" / "arith" / "train.parquet")
    long_rows = [
        {**row, "prompt": [{"role": "user", "content": "1+" * 40 + "1="}]}
        for row in table.slice(0, LONG_PROMPTS).to_pylist()
    ]
    path = tmp / "train.parquet"
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist(long_rows, table.schema)]), path)
    return path


def paced_reward(tmp: Path) -> Path:
    path = tmp / "paced_arith.py"
    path.write_text(
        "import time\n"
        "from trainer.rewards.builtins import arith\n\n"
        "_calls = []\n\n\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    _calls.append(time.monotonic())\n"
        f"    due = _calls[0] + (len(_calls) - 1) * {REWARD_PACE_S}\n"
        "    time.sleep(max(0.0, due - time.monotonic()))\n"
        "    return arith(data_source, solution_str, ground_truth, extra_info)\n"
    )
    return path


def start_trainer(demo: Path, tmp: Path, studio_url: str, trainer: Trainer) -> LiveProcess:
    env = dict(os.environ)
    env.update(
        RLSTUDIO_URL=studio_url,
        RLSTUDIO_RUN_ID=str(trainer.run.pk),
        RLSTUDIO_ATTEMPT=str(trainer.attempt.number),
        RLSTUDIO_RUN_TOKEN=trainer.token,
        PYTHONUNBUFFERED="1",
    )
    argv = [sys.executable, "-m", "trainer", "run", "--quiet", "--jsonl", str(tmp / "run.jsonl")]
    argv += [
        f"model.path={demo / 'model'}",
        f"data.train_files=[{training_data(demo, tmp)}]",
        f"data.val_files=[{demo / 'data' / 'arith' / 'test.parquet'}]",
        f"checkpoint.dir={tmp / 'ckpt'}",
        f"logging.spool_dir={tmp / 'spool'}",
        "reward.function=custom",
        f"reward.custom_path={paced_reward(tmp)}",
        *RUN_CONFIG,
    ]
    return spawn("trainer", argv, env, tmp)


def stored_metric_steps(run: Run) -> set[int]:
    steps = IngestedRecord.objects.filter(run=run, kind="metrics").values_list("step", flat=True)
    return {step for step in steps if step is not None}


def logged_metric_steps(jsonl: Path) -> list[int]:
    if not jsonl.exists():
        return []
    return [r["step"] for r in read_records(jsonl) if r["type"] == "metrics"]


def post_as_trainer(url: str, trainer: Trainer, seq: int) -> requests.Response:
    record = {
        "seq": seq,
        "kind": "log",
        "time": time.time(),
        "data": {"level": "info", "message": "late"},
    }
    return requests.post(
        f"{url}/api/ingest/runs/{trainer.run.pk}/records",
        json={"attempt": trainer.attempt.number, "records": [record]},
        headers={"Authorization": f"Bearer {trainer.token}"},
        timeout=30,
    )


def test_a_web_server_outage_loses_and_repeats_nothing(
    demo_assets: Path, tmp_path: Path, django_db_setup: None
) -> None:
    lab = make_lab()
    trainer = lab.start_attempt(lab.new_run("nothing-lost"))
    run = trainer.run
    port = free_port()
    jsonl = tmp_path / "run.jsonl"
    spool = SpoolPaths.for_attempt(tmp_path / "spool", str(run.pk), trainer.attempt.number)
    web = start_web_server(tmp_path, port=port)
    processes = [web]
    try:
        trainer_proc = start_trainer(demo_assets, tmp_path, web.info["url"], trainer)
        processes.append(trainer_proc)
        wait_for(
            lambda: max(stored_metric_steps(run), default=-1) >= KILL_AFTER_STEP,
            600,
            f"step {KILL_AFTER_STEP} in the database",
            trainer_proc,
        )

        web.kill(signal.SIGKILL)  # the whole process group, mid-run, no goodbye
        assert not web.alive()
        down_at = time.monotonic()
        step_at_kill = max(logged_metric_steps(jsonl), default=0)
        stored_at_kill = IngestedRecord.objects.filter(run=run).count()
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))
        step_at_restart = max(logged_metric_steps(jsonl), default=0)
        assert trainer_proc.alive(), (
            "the trainer finished during the outage, so this test did not see it recover "
            f"live: raise TOTAL_STEPS ({TOTAL_STEPS}) or REWARD_PACE_S ({REWARD_PACE_S})\n"
            + trainer_proc.log()[-3000:]
        )
        # Training went on while the studio was unreachable: a step never waits on it.
        assert step_at_restart > step_at_kill

        web = start_web_server(tmp_path, port=port)  # same port: the trainer's URL
        processes.append(web)
        back_at = time.time()
        assert trainer_proc.alive(), "the trainer must still be running when the studio is back"
        returncode = trainer_proc.proc.wait(timeout=600)
        assert returncode == 0, trainer_proc.log()[-3000:]
        # The uploader saw the outage and got through after it (upload.py's messages).
        recovered = re.search(
            r"studio reachable again after (\d+) failed tries", trainer_proc.log()
        )
        assert recovered, trainer_proc.log()[-3000:]

        # Drained: close() removes the spool file only once every seq in it is acked.
        wait_for(lambda: not spool.data.exists(), 60, "the spool to drain")
        acked_through = read_acked(spool.acked)
        assert not spool.rejected.exists()  # the studio refused nothing

        ledger = IngestedRecord.objects.filter(run=run)
        seqs = sorted(ledger.values_list("seq", flat=True))
        assert seqs == list(range(acked_through + 1))  # every seq once, no gap
        assert not ledger.values("attempt", "seq").annotate(n=Count("id")).filter(n__gt=1)
        assert not ledger.filter(superseded=True).exists()

        logged = read_records(jsonl)
        expected, stored = expected_rows(logged), stored_rows(run)
        assert missing_and_extra(expected, stored) == {kind: (0, 0) for kind in KINDS}
        # Ordered kinds in emit order, and each metric (step, key) exactly once.
        assert stored.log == expected.log
        assert stored.status == expected.status == [("running", ""), ("succeeded", "")]
        per_step_key = Counter((step, key) for step, key, _ in stored.metrics.elements())
        assert max(per_step_key.values()) == 1
        # The run really carried every kind, validation samples during the run included.
        val_steps = {key[0] for key in stored.samples if key[1] == "val"}
        assert val_steps - {0, TOTAL_STEPS}, val_steps
        assert expected.log and expected.checkpoint and expected.metrics
        assert [r["type"] for r in logged].count("metrics") == ledger.filter(kind="metrics").count()

        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED
        attempt = RunAttempt.objects.get(pk=trainer.attempt.pk)
        assert attempt.started_at is not None and attempt.finished_at is not None
        refused = post_as_trainer(web.info["url"], trainer, acked_through + 1)
        assert refused.status_code == 401, refused.text
        assert ledger.count() == acked_through + 1  # the refused record was not stored

        # How long the backlog took to arrive: everything emitted before the studio was
        # back, by the studio's receive time (same machine, same clock).
        backlog = ledger.filter(emitted_at__lt=back_at)
        caught_up = max(backlog.values_list("received_at", flat=True)).timestamp() - back_at
        print(
            f"\nnothing lost: {len(seqs)} records (seq 0..{acked_through}): "
            f"{sum(expected.metrics.values())} metric points, "
            f"{sum(expected.samples.values())} samples, {len(expected.log)} log lines, "
            f"{sum(expected.checkpoint.values())} checkpoints, {len(expected.status)} statuses; "
            f"{stored_at_kill} stored before the kill at step {step_at_kill}, training reached "
            f"step {step_at_restart} during the {OUTAGE_S:g} s outage; the backlog "
            f"({backlog.count() - stored_at_kill} records) was stored {caught_up:.1f} s after "
            f"the restart, after {recovered[1]} failed tries; 0 missing, 0 duplicate"
        )
    finally:
        for process in processes:
            process.stop()
