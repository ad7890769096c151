"""The studio reporter: durable spool, seq numbering across processes, uploads with
retries against a real local HTTP server, bounded memory, and close() deadlines."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from trainer.config.schema import LoggingConfig
from trainer.reporting.base import SampleRecord
from trainer.reporting.drain import list_spools, send_spool
from trainer.reporting.spool import Spool, SpoolError, SpoolPaths, decode_line, encode_line
from trainer.reporting.studio import (
    SAMPLES_RECORD_BYTES,
    StudioReporter,
    TargetError,
    target_from_env,
)
from trainer.reporting.upload import IngestTarget, UploadLimits, backoff_delay

from .ingest_stub import TOKEN, BlackHole, IngestStub, StubBehaviour, free_port

REPO = Path(__file__).resolve().parents[2]
FAST = UploadLimits(backoff_base_s=0.02, backoff_max_s=0.1, request_timeout_s=2.0)


@pytest.fixture
def stub():
    server = IngestStub().start()
    yield server
    server.stop()


def config(tmp_path: Path, **fields) -> LoggingConfig:
    return LoggingConfig(spool_dir=str(tmp_path / "spool"), **fields)


def target(url: str, attempt: int = 1) -> IngestTarget:
    return IngestTarget(url=url, run_id="7", attempt=attempt, token=TOKEN)


def reporter(url: str, tmp_path: Path, limits: UploadLimits = FAST, **fields) -> StudioReporter:
    return StudioReporter(target(url), config(tmp_path, **fields), limits=limits)


def paths(tmp_path: Path, attempt: int = 1) -> SpoolPaths:
    return SpoolPaths.for_attempt(tmp_path / "spool", "7", attempt)


def wait_for(condition, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


# -- the spool ------------------------------------------------------------------------


def test_a_line_with_a_bad_checksum_or_no_newline_is_damaged():
    line = encode_line(b'{"seq":3,"kind":"log"}')
    assert decode_line(line) == (3, b'{"seq":3,"kind":"log"}')
    assert decode_line(line[:-1]) is None
    assert decode_line(line.replace(b"log", b"lag")) is None
    assert decode_line(b"garbage\n") is None


def test_a_torn_last_line_is_cut_and_numbering_continues_after_the_intact_ones(tmp_path):
    spool = Spool(paths(tmp_path))
    for i in range(3):
        assert spool.append(b'{"kind":"log","n":%d}' % i) == i
    spool.close(remove_if_acked=False)
    with open(paths(tmp_path).data, "ab") as handle:  # a crash in the middle of a write
        handle.write(encode_line(b'{"seq":3,"kind":"log","n":3}')[:17])

    reopened = Spool(paths(tmp_path))
    assert reopened.next_seq == 3
    assert reopened.append(b'{"kind":"log","n":"after"}') == 3
    reopened.sync()
    batch = reopened.read_batch(0, 100, 1 << 20)
    assert [e.seq for e in batch.entries] == [0, 1, 2, 3]
    assert json.loads(batch.entries[-1].body)["n"] == "after"
    reopened.close(remove_if_acked=False)


def test_a_damaged_line_in_the_middle_is_skipped_and_the_rest_is_read(tmp_path):
    spool = Spool(paths(tmp_path))
    for i in range(3):
        spool.append(b'{"kind":"log","n":%d}' % i)
    spool.close(remove_if_acked=False)
    data = paths(tmp_path).data.read_bytes().replace(b'"n":1', b'"n":9')  # bit rot
    paths(tmp_path).data.write_bytes(data)

    reopened = Spool(paths(tmp_path))
    assert reopened.next_seq == 3
    assert [e.seq for e in reopened.read_batch(0, 100, 1 << 20).entries] == [0, 2]
    reopened.close(remove_if_acked=False)


def test_a_second_writer_of_the_same_attempt_is_refused(tmp_path):
    first = Spool(paths(tmp_path))
    with pytest.raises(SpoolError, match="in use by another process"):
        Spool(paths(tmp_path))
    first.close()
    Spool(paths(tmp_path)).close()


def test_batches_respect_the_record_and_byte_limits(tmp_path):
    spool = Spool(paths(tmp_path), fsync="record")
    for _ in range(10):
        spool.append(b'{"kind":"log","pad":"%s"}' % (b"x" * 100))
    assert len(spool.read_batch(0, 4, 1 << 20).entries) == 4
    by_bytes = spool.read_batch(0, 100, 300)
    assert len(by_bytes.entries) == 2  # each body is ~130 bytes
    assert by_bytes.end == by_bytes.entries[-1].end
    assert len(spool.read_batch(0, 100, 10).entries) == 1  # a big record travels alone
    spool.close(remove_if_acked=False)


def test_run_ids_that_could_escape_the_spool_folder_are_refused(tmp_path):
    with pytest.raises(SpoolError, match="run id"):
        SpoolPaths.for_attempt(tmp_path, "../etc", 1)
    with pytest.raises(TargetError, match="run id"):
        IngestTarget(url="http://x", run_id="1/../2", attempt=1, token=TOKEN)


# -- uploads --------------------------------------------------------------------------


def test_every_kind_of_record_arrives_once_in_order_with_nulls_for_non_finite(stub, tmp_path):
    r = reporter(stub.url, tmp_path)
    r.status("running")
    r.metrics(1, {"critic/score/mean": 0.5, "actor/pg_loss": math.nan, "x": math.inf})
    sample = SampleRecord(1, "0:3", "arith", "1+1=", "2", "2", 1.0, token_data=None)
    r.samples(1, [sample])
    r.log("info", "hello")
    r.checkpoint(1, "ckpt/step_1")
    r.status("succeeded")
    r.close()
    assert stub.seqs() == [0, 1, 2, 3, 4, 5]
    kinds = [stub.records[(1, s)]["kind"] for s in range(6)]
    assert kinds == ["status", "metrics", "samples", "log", "checkpoint", "status"]
    (metrics,) = stub.of_kind("metrics")
    assert metrics["data"] == {
        "step": 1,
        "values": {"critic/score/mean": 0.5, "actor/pg_loss": None, "x": None},
    }
    (samples,) = stub.of_kind("samples")
    assert samples["data"]["samples"][0]["group_id"] == "0:3"
    assert not paths(tmp_path).data.exists()  # fully sent: the data file is gone...
    assert json.loads(paths(tmp_path).acked.read_text()) == {"acked_through": 5}  # ...not this


def test_transient_failures_are_retried_with_the_same_seqs_until_stored(stub, tmp_path):
    stub.behaviour = StubBehaviour(fail_first=4)
    r = reporter(stub.url, tmp_path)
    for step in range(20):
        r.metrics(step, {"loss": float(step)})
    assert r.flush(timeout=10)
    assert stub.seqs() == list(range(20))
    assert r.uploader.stats.retries >= 4
    r.close()


def test_a_reply_lost_after_storing_makes_a_harmless_duplicate(stub, tmp_path):
    stub.behaviour = StubBehaviour(store_then_fail=2)
    r = reporter(stub.url, tmp_path)
    for step in range(5):
        r.metrics(step, {"loss": float(step)})
    r.close()
    assert stub.duplicates > 0  # re-sent, and the stub checked each has the same content
    assert stub.seqs() == list(range(5))
    assert [m["data"]["step"] for m in stub.of_kind("metrics")] == list(range(5))


def test_a_rejected_record_is_isolated_and_its_neighbours_are_stored(stub, tmp_path):
    stub.behaviour = StubBehaviour(poison=lambda r: r["data"].get("message") == "poison")
    r = reporter(stub.url, tmp_path)
    for i in range(40):
        r.log("info", "poison" if i == 17 else f"line {i}")
    r.close(timeout=10)
    assert stub.seqs() == [s for s in range(40) if s != 17]
    assert r.uploader.stats.rejected == 1
    assert b'"seq":17' in paths(tmp_path).rejected.read_bytes()
    assert json.loads(paths(tmp_path).acked.read_text()) == {"acked_through": 39}


def test_a_refused_token_stops_uploads_and_the_spool_keeps_everything(tmp_path):
    refusing = IngestStub(behaviour=StubBehaviour(refuse_with=401)).start()
    r = reporter(refusing.url, tmp_path)
    for step in range(30):
        r.metrics(step, {"loss": 1.0})
    started = time.monotonic()
    r.close(timeout=10)
    assert time.monotonic() - started < 2  # no retry loop against a revoked token
    assert refusing.requests == 1
    refusing.stop()
    assert "HTTP 401" in r.uploader.stats.refused
    (pending,) = list_spools(tmp_path / "spool")
    assert pending.unsent == 30

    good = IngestStub().start()  # `trainer spool-send` with a valid token drains it
    result = send_spool(target(good.url), config(tmp_path), timeout=10)
    good.stop()
    assert (result.sent, result.left) == (30, 0)
    assert good.seqs() == list(range(30))


def test_close_returns_within_its_limit_when_the_studio_never_answers(tmp_path):
    hole = BlackHole()
    r = reporter(hole.url, tmp_path, limits=UploadLimits(request_timeout_s=30.0))
    for step in range(50):
        r.metrics(step, {"loss": 1.0})
    started = time.monotonic()
    r.close(timeout=1.0)
    elapsed = time.monotonic() - started
    hole.close()
    assert elapsed < 1.5, elapsed
    (pending,) = list_spools(tmp_path / "spool")
    assert pending.unsent == 50


def test_close_returns_within_its_limit_when_nothing_listens(tmp_path):
    r = reporter(f"http://127.0.0.1:{free_port()}", tmp_path, limits=UploadLimits())
    for step in range(10):
        r.metrics(step, {"loss": 1.0})
    started = time.monotonic()
    r.close(timeout=0.5)
    assert time.monotonic() - started < 2.0
    assert list_spools(tmp_path / "spool")[0].unsent == 10


def test_an_emit_never_waits_for_a_slow_studio(tmp_path):
    slow = IngestStub(behaviour=StubBehaviour(delay_s=1.0)).start()
    r = reporter(slow.url, tmp_path)
    started = time.perf_counter()
    for step in range(200):
        r.metrics(step, {"loss": 1.0, "lr": 1e-5})
    emitting = time.perf_counter() - started
    assert emitting < 0.5, emitting  # 200 emits while a request takes a second
    r.close(timeout=0.1)
    slow.stop()


def test_memory_stays_bounded_through_a_long_outage_and_nothing_is_lost(tmp_path):
    port = free_port()  # nothing listens here yet: the studio is down
    r = reporter(
        f"http://127.0.0.1:{port}",
        tmp_path,
        limits=UploadLimits(backoff_base_s=0.01, backoff_max_s=0.05, max_records=200),
    )
    payload = "y" * 2000
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    for i in range(10_000):  # ~21 MB of records
        r.log("info", f"{i} {payload}")
    peak = tracemalloc.get_traced_memory()[1] - baseline
    tracemalloc.stop()
    assert peak < 3_000_000, peak  # a batch or two, not the backlog
    assert r.uploader.stats.retries > 0
    assert r.spool.acked_through == -1

    stub = IngestStub(port=port).start()  # the studio comes back
    assert r.flush(timeout=60)
    r.close()
    stub.stop()
    assert stub.seqs() == list(range(10_000))


def test_large_sample_lists_are_split_into_bounded_records(stub, tmp_path):
    r = reporter(stub.url, tmp_path)
    big = [
        SampleRecord(3, f"g{i // 4}", "arith", "p" * 2000, "r" * 2000, "1", 0.5) for i in range(600)
    ]
    r.samples(3, big)
    r.close()
    records = stub.of_kind("samples")
    assert len(records) > 1
    assert all(len(json.dumps(rec)) < SAMPLES_RECORD_BYTES + 10_000 for rec in records)
    got = [s["group_id"] for rec in records for s in rec["data"]["samples"]]
    assert got == [s.group_id for s in big]


# -- across processes -----------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from trainer.config.schema import LoggingConfig
    from trainer.reporting.studio import StudioReporter
    from trainer.reporting.upload import IngestTarget
    target = IngestTarget(url=sys.argv[1], run_id="7", attempt=1, token="rli_test-token")
    r = StudioReporter(target, LoggingConfig(spool_dir=sys.argv[2]))
    for step in range(int(sys.argv[3])):
        r.metrics(step, {"loss": float(step), "who": 1.0})
    r.spool.sync()
    print("emitted", flush=True)
    if sys.argv[4] == "exit":
        os._exit(0)  # dies without close(): nothing flushed by the reporter
    while True:
        r.metrics(-1, {"loss": 0.0, "who": 1.0})
    """
)


def run_child(url: str, spool_dir: Path, count: int, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, url, str(spool_dir), str(count), mode],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_new_process_resends_what_was_not_acked_and_continues_the_seqs(stub, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    child = run_child(dead, tmp_path / "spool", 25, "exit")
    assert child.wait(60) == 0

    r = reporter(stub.url, tmp_path)
    assert r.spool.next_seq == 25
    r.metrics(100, {"loss": 0.0, "who": 2.0})
    r.close()
    assert stub.seqs() == list(range(26))
    values = [m["data"]["values"]["who"] for m in stub.of_kind("metrics")]
    assert values == [1.0] * 25 + [2.0]


def test_a_process_killed_mid_write_loses_nothing_it_finished_writing(stub, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    child = run_child(dead, tmp_path / "spool", 5, "loop")
    assert child.stdout is not None and child.stdout.readline().strip() == "emitted"
    time.sleep(0.3)
    child.send_signal(signal.SIGKILL)  # may tear the line being written
    child.wait(10)

    r = reporter(stub.url, tmp_path)
    first_new = r.spool.next_seq
    r.status("running")
    r.close()
    assert first_new > 5
    assert stub.seqs() == list(range(first_new + 1))  # no gap, no duplicate
    assert stub.records[(1, first_new)]["kind"] == "status"


# -- configuration --------------------------------------------------------------------


def test_the_studio_reporter_is_configured_by_all_four_variables_or_none():
    assert target_from_env({}) is None
    assert target_from_env({"RLSTUDIO_URL": "http://x"}) is None  # the remote CLI's variable
    full = {
        "RLSTUDIO_URL": "http://127.0.0.1:8000",
        "RLSTUDIO_RUN_ID": "12",
        "RLSTUDIO_ATTEMPT": "2",
        "RLSTUDIO_RUN_TOKEN": "rli_abc",
    }
    got = target_from_env(full)
    assert got is not None and (got.run_id, got.attempt) == ("12", 2)
    assert "rli_abc" not in repr(got)
    with pytest.raises(TargetError, match="missing: RLSTUDIO_RUN_TOKEN"):
        target_from_env({k: v for k, v in full.items() if k != "RLSTUDIO_RUN_TOKEN"})
    with pytest.raises(TargetError, match="RLSTUDIO_ATTEMPT"):
        target_from_env(full | {"RLSTUDIO_ATTEMPT": "two"})
    with pytest.raises(TargetError, match="URL"):
        target_from_env(full | {"RLSTUDIO_URL": "file:///etc/passwd"})


def test_back_off_grows_to_its_cap_and_is_jittered():
    import random

    rng = random.Random(0)
    delays = [backoff_delay(n, 0.5, 30.0, rng) for n in range(1, 12)]
    assert 0.25 <= delays[0] <= 0.5
    assert all(15.0 <= d <= 30.0 for d in delays[7:])
    assert len({round(d, 6) for d in delays[7:]}) > 1


def test_spool_files_are_private(tmp_path):
    r = reporter(f"http://127.0.0.1:{free_port()}", tmp_path)
    r.log("info", "x")
    assert os.stat(paths(tmp_path).data).st_mode & 0o077 == 0
    r.close(timeout=0)
