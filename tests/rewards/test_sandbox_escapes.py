"""Escapes an outside probe found, tried as an attacker would: host unix
sockets, the result channel, crashing the supervisor, text Postgres refuses, and one
pool starving another. Each attack must fail, the next honest call on the same pool must
score correctly, and the host must be untouched: no connection reaches a unix listener
in /tmp or /run, no file appears outside scratch, no sandbox process survives.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tests.rewards.conftest import (
    NO_FULL_SANDBOX,
    call_uid,
    full_sandbox_here,
    needs_full_sandbox,
    request,
    sandbox_processes,
    wait_for_no_sandbox_processes,
)
from trainer.rewards import SandboxLimits, SandboxPool
from trainer.rewards.sandbox.zygote import UID_BASE

needs_full = needs_full_sandbox()

LIMITS = SandboxLimits(timeout_s=1.0, memory_mb=128, output_bytes=4096, max_processes=16)

ESCAPES = r"""
import asyncio, json, os, socket, sys, time

def compute_score(data_source, solution_str, ground_truth, extra_info):
    if solution_str == "ok":
        return 1.0
    return ATTACKS[solution_str](ground_truth)


def unix_connect(paths):
    reached = 0
    for path in paths:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET):
            try:
                with socket.socket(socket.AF_UNIX, kind) as s:
                    s.settimeout(0.5)
                    if kind == socket.SOCK_DGRAM:
                        s.sendto(b"hello", path)
                    else:
                        s.connect(path)
                    reached += 1
            except OSError as exc:
                print(path, kind, type(exc).__name__)
    return float(reached)


def socketpair_redirect(paths):
    # A connected pair reaches nothing, unless it can be pointed at a path.
    reached = 0
    for kind in (socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_STREAM):
        try:
            a, b = socket.socketpair(socket.AF_UNIX, kind)
        except OSError as exc:
            print("socketpair", kind, type(exc).__name__)
            continue
        for path in paths:
            for how in ("connect", "sendto"):
                try:
                    a.connect(path) if how == "connect" else a.sendto(b"x", path)
                    reached += 1
                except OSError as exc:
                    print(how, path, type(exc).__name__)
        a.close()
        b.close()
    return float(reached)


def abstract_connect(name):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect("\0" + name)
            return 1.0
    except OSError as exc:
        print(type(exc).__name__)
        return 0.0


def asyncio_still_works(_):
    return asyncio.run(asyncio.sleep(0, result=1.0))  # its self-pipe is a socketpair


def forge_everywhere(line):
    # Every descriptor this process holds or can guess, and the parent's through /proc.
    for fd in range(3, 1024):
        try:
            os.write(fd, line.encode())
        except OSError:
            pass
    for path in ("/proc/self/fd", f"/proc/{os.getppid()}/fd", "/proc/1/fd"):
        try:
            print(path, os.listdir(path))
        except OSError as exc:
            print(path, type(exc).__name__)


def forge_scores(score):
    fake = [{"score": score, "components": {}, "error": ""}]
    for i in range(64):
        forge_everywhere(json.dumps({"k": "result", "i": i, "v": fake}) + "\n")
        forge_everywhere(json.dumps({"v": fake}) + "\n")
    return 0.0


def reset_deadline(_):
    started = time.monotonic()
    while time.monotonic() - started < 5:
        forge_everywhere('{"k": "exit", "i": 0, "s": 0}\n{"k": "start", "i": 1}\n')
        time.sleep(0.05)
    return 1.0


def signal_the_template(_):
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP, signal.SIGSTOP):
        try:
            os.kill(1, sig)
        except OSError as exc:
            print(sig, type(exc).__name__)
    return 1.0


def garbage_result(kind):
    payload = {
        "nested": "[" * 200_000,
        "huge": "[" + "1," * 600_000 + "1]",
        "not_json": "\xff\xfe{{{",
        "big_int": '{"v": [{"score": ' + "9" * 5000 + ', "components": {}, "error": ""}]}',
        "inf": '{"v": [{"score": 1e999, "components": {}, "error": ""}]}',
        "wrong_shape": '{"v": {"score": 1}}',
        "list": "[1, 2, 3]",
        "status": '{"k": "exit", "i": 0, "s": 99999999999999999999999, "d": -5, "o": 3}',
    }[kind]
    forge_everywhere(payload + "\n")
    sys.stdout.flush()
    os._exit(0)  # the harness never writes the real result


def bad_text(kind):
    if kind == "nul_key":
        return {"score": 1.0, "acc\x00uracy": 1.0}
    if kind == "surrogate_key":
        return {"score": 1.0, "acc\udc80": 1.0}
    if kind == "nul_output":
        print("before\x00after")
        return 1.0
    if kind == "surrogate_output":
        sys.stdout.buffer.write("\udcff\ud800".encode("utf-8", "surrogatepass"))
        return 1.0
    if kind == "nul_exception":
        raise ValueError("bad\x00\udc80value")
    return {"score": 1.0, "ok": 1.0}


def whoami(_):
    return float(os.getuid())


def hold_processes(seconds):
    held = 0
    while True:
        try:
            if os.fork() == 0:
                time.sleep(seconds)
                os._exit(0)
            held += 1
        except OSError:
            break
    print("held", held)
    time.sleep(seconds)
    return float(held)


ATTACKS = {f.__name__: f for f in (
    unix_connect, socketpair_redirect, abstract_connect, asyncio_still_works, forge_scores,
    reset_deadline, signal_the_template, garbage_result, bad_text, whoami, hold_processes)}
"""


def _storable(text: str) -> bool:
    """What Postgres accepts in text and JSON: UTF-8 encodable, no NUL."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _files_owned_by_the_sandbox() -> list[str]:
    """Files a sandbox uid owns where a call could have written them (only ours: the
    machine is shared, other people's files come and go in /tmp)."""
    found = []
    for folder in ("/tmp", "/run", "/dev/shm", "/var/tmp", str(Path.cwd())):
        for entry in os.scandir(folder):
            try:
                if entry.stat(follow_symlinks=False).st_uid >= UID_BASE:
                    found.append(entry.path)
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def pool():
    if not full_sandbox_here():
        pytest.skip(NO_FULL_SANDBOX)  # every test using the pool: the summary says so loudly
    with SandboxPool(ESCAPES, limits=LIMITS) as sandbox:
        yield sandbox


@pytest.fixture
def attack(pool, tmp_path):
    """Run attacks in one chunk with honest calls after them; then check the pool still
    serves, its zygote was not restarted, no file of a sandbox uid appeared outside its
    scratch, nothing survived."""
    zygotes = list(pool.worker_pids)

    def run(name, ground_truth=None, honest_after=2):
        started = time.monotonic()
        requests = [request(name, ground_truth)] + [request("ok")] * honest_after
        first, *rest = pool.score_batch(requests)
        first.wall_s = time.monotonic() - started
        assert [(r.score, r.error) for r in rest] == [(1.0, "")] * honest_after
        return first

    yield run
    (normal,) = pool.score_batch([request("ok")])
    assert (normal.score, normal.error) == (1.0, "")
    assert pool.worker_pids == zygotes, "the zygote had to be restarted"
    assert wait_for_no_sandbox_processes() == []
    assert _files_owned_by_the_sandbox() == []


@pytest.fixture
def unix_listeners():
    """Stream and datagram listeners in /tmp and under /run, as a database or cache has."""
    made = []
    # /run takes a listener only from root; unprivileged, /tmp alone is tried.
    for folder in [f for f in ("/tmp", "/run") if os.access(f, os.W_OK)]:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            path = f"{folder}/rl-escape-{uuid.uuid4().hex[:12]}.sock"
            listener = socket.socket(socket.AF_UNIX, kind)
            listener.bind(path)
            os.chmod(path, 0o777)  # even a world-writable socket must stay out of reach
            if kind == socket.SOCK_STREAM:
                listener.listen(8)
            listener.setblocking(False)
            made.append((path, kind, listener))
    yield made
    reached = []
    for path, kind, listener in made:
        try:
            try:  # nothing ever arrived: no connection, no datagram
                listener.accept() if kind == socket.SOCK_STREAM else listener.recv(64)
                reached.append(path)
            except BlockingIOError:
                pass
            with socket.socket(socket.AF_UNIX, kind) as s:
                s.connect(path)  # while the host itself reaches it: the listener works
        finally:
            listener.close()
            os.unlink(path)
    assert reached == []


# --- 1. host unix sockets ----------------------------------------------------------------


def test_no_connection_reaches_unix_listeners_in_tmp_and_run(unix_listeners, attack):
    paths = [path for path, _, _ in unix_listeners]
    result = attack("unix_connect", [*paths, "/run/postgresql/.s.PGSQL.5432", "/dev/log"])
    assert (result.score, result.error) == (0.0, "")
    assert "PermissionError" in result.output  # refused at socket(), by seccomp


def test_a_socketpair_cannot_be_pointed_at_a_host_socket(unix_listeners, attack):
    result = attack("socketpair_redirect", [path for path, _, _ in unix_listeners])
    assert (result.score, result.error) == (0.0, "")


def test_abstract_unix_sockets_are_unreachable(attack):
    name = f"rl-escape-{uuid.uuid4().hex[:12]}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind("\0" + name)
        listener.listen(1)
        listener.setblocking(False)
        result = attack("abstract_connect", name)
        assert (result.score, result.error) == (0.0, "")
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_asyncio_keeps_working_without_sockets(attack):
    result = attack("asyncio_still_works")
    assert (result.score, result.error) == (1.0, "")


# --- 2. the result channel ---------------------------------------------------------------


def test_a_call_cannot_set_the_scores_of_the_calls_after_it(attack, pool):
    results = pool.score_batch(
        [request("forge_scores", 99.0), request("whoami"), request("ok"), request("ok")]
    )
    assert results[0].score == 0.0
    assert results[1].score == call_uid(pool.worker_pids[0])  # its own answer, not 99
    assert [r.score for r in results[2:]] == [1.0, 1.0]
    assert "PermissionError" in results[0].output  # /proc/<pid>/fd of the template: refused
    attack("ok")


def test_a_call_cannot_reset_its_own_deadline(attack):
    result = attack("reset_deadline")
    assert result.error == "timeout: the call ran longer than 1 s"
    assert result.elapsed_ms >= 1000  # its time is the supervisor's, not what it claims
    assert result.wall_s < 4


def test_signalling_the_template_stops_nothing(attack):
    result = attack("signal_the_template")
    assert (result.score, result.error) == (1.0, "")


@needs_full
def test_hostile_module_level_code_cannot_forge_results_either(no_leftover_processes):
    code = (
        "import json, os\n"
        "for fd in range(3, 1024):\n"
        "    for line in ({'k': 'result', 'i': 0, 'v': [{'score': 99.0}]}, {'v': [99.0]}):\n"
        "        try:\n"
        "            os.write(fd, (json.dumps(line) + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
        "    return 0.5\n"
    )
    with SandboxPool(code, limits=LIMITS) as forged:
        results = forged.score_batch([request("a"), request("b"), request("c")])
    assert [(r.score, r.error) for r in results] == [(0.5, "")] * 3


# --- 3. crashing the supervisor ----------------------------------------------------------


@pytest.mark.parametrize(
    "kind", ["nested", "huge", "not_json", "big_int", "inf", "wrong_shape", "list", "status"]
)
def test_garbage_on_the_result_pipe_fails_only_its_own_call(attack, kind):
    result = attack("garbage_result", kind)
    assert result.score == 0.0
    assert result.error  # its own error; the calls after it scored (checked by `attack`)


# --- 4. text Postgres refuses ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("nul_key", "invalid return: component name 'acc\\x00uracy' contains a NUL character"),
        ("surrogate_key", "contains a lone surrogate (U+DC80)"),
        ("nul_output", "invalid output: the output contains a NUL character at offset 6"),
        ("nul_exception", "exception: ValueError: bad\\x00\\udc80value"),
    ],
)
def test_nul_and_lone_surrogates_are_refused_per_row(attack, kind, message):
    result = attack("bad_text", kind)
    assert result.score == 0.0
    assert message in result.error
    assert _storable(result.error) and _storable(result.output)
    assert all(_storable(k) for k in result.components)
    json.dumps([result.error, result.output]).encode("utf-8")


def test_encoded_surrogates_in_output_are_replaced_not_stored(attack):
    result = attack("bad_text", "surrogate_output")
    assert (result.score, result.error) == (1.0, "")
    assert _storable(result.output) and "\ufffd" in result.output


# --- 5. one pool starving another --------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="a uid per worker needs root")
def test_each_worker_of_each_pool_runs_as_its_own_uid(pool):
    with SandboxPool(ESCAPES, workers=2, limits=LIMITS) as other:
        uids = {r.score for r in other.score_batch([request("whoami")] * 4)}
        assert uids == {float(UID_BASE + pid) for pid in other.worker_pids}
    (mine,) = pool.score_batch([request("whoami")])
    assert mine.score == float(UID_BASE + pool.worker_pids[0])
    assert mine.score not in uids


def _descends_from(process: psutil.Process, ancestor: psutil.Process) -> bool:
    """Whether `ancestor` is among the process's parents; False once it has exited (the
    list was read a moment before: under load a call's process ended in between, and
    psutil's parents() raised NoSuchProcess in CI)."""
    try:
        return ancestor in process.parents()
    except psutil.NoSuchProcess:
        return False


def test_a_pool_holding_all_its_processes_does_not_stop_another_pool(pool):
    # The hog's processes sleep 3 s within a 4 s call: all of them are held at once for
    # seconds. (With 0.8 s sleeps in a 1 s call, forking them on a loaded machine took
    # about as long as the first ones lived, so the moment all were held was too short to
    # be seen and the test failed now and then.)
    with SandboxPool(ESCAPES, limits=dataclasses.replace(LIMITS, timeout_s=4.0)) as hog_pool:
        hog = psutil.Process(hog_pool.worker_pids[0])
        # Under root the limit counts the calls' own uid alone; in a user namespace it also
        # counts the worker's zygote and helper, which are outside the call's PID namespace.
        whole_limit = LIMITS.max_processes - (1 if os.geteuid() == 0 else 3)
        holder = threading.Thread(
            target=lambda: hog_pool.score_batch([request("hold_processes", 3.0)]), daemon=True
        )
        holder.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # wait until the hog holds its whole limit
            held = [p for p in sandbox_processes() if _descends_from(p, hog)]
            if len(held) >= whole_limit:
                break
            time.sleep(0.01)
        assert len(held) >= whole_limit
        results = pool.score_batch([request("ok")] * 4)
        holder.join(timeout=10)
        (after,) = hog_pool.score_batch([request("ok")])
    assert [(r.score, r.error) for r in results] == [(1.0, "")] * 4
    assert (after.score, after.error) == (1.0, "")
    assert wait_for_no_sandbox_processes() == []


# --- the supervisor's own bounds (no sandbox needed: one function, fed by hand) -----------


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 200_000,
        b'{"k": "exit", "i": 0, "s": 99999999999999999999999999}',
        b'{"k": "exit", "i": 0, "s": -1, "d": 1e308, "o": 5, "p": []}',
        b'{"k": "start", "i": true}',
        b'{"k": "start", "i": 10000000000000000000000}',
        b'{"k": "result", "i": -1, "v": 1}',
        b'"just a string"',
        b"\xff\xfe\x00garbage",
        b"1" * 5000,
    ],
)
def test_the_supervisor_drops_malformed_lines_without_raising(line):
    from trainer.rewards.sandbox.supervise import _Watch

    watch = _Watch(0, -1, -1, 2, 1.0, 1.0, 1 << 20, 4096, 0, -1)
    watch._handle(b'{"k": "start", "i": 0}')
    watch.outcome.template_status = 0
    watch._read_output = lambda everything=False: False  # no pipe in this unit test
    watch._handle(line)
    statuses = [unit.status for unit in watch.outcome.units]
    assert all(s is None or 0 <= s <= 0xFFFF for s in statuses)
    assert all(unit.output_dropped >= 0 for unit in watch.outcome.units)
