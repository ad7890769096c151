"""Hostile reward code: every attack has its expected outcome, and afterwards the pool
still serves a normal call, no sandbox process is left, and the host is untouched.

One pool runs a module whose ``compute_score`` dispatches on ``solution_str`` to the
attack named there (``"ok"`` is the normal call); the attack's parameters travel in
``ground_truth``. Limits are tight so the suite runs in seconds.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from tests.rewards.attacks import LOOP_MEMORY_FORK
from tests.rewards.conftest import needs_full_sandbox, request, wait_for_no_sandbox_processes
from trainer.rewards import RewardCodeError, SandboxLimits, SandboxPool
from trainer.rewards.loader import MAX_SOURCE_BYTES

pytestmark = needs_full_sandbox()

REPO = Path(__file__).resolve().parents[2]
CANARY_NAME = "RLSTUDIO_TEST_CANARY"
CANARY = f"canary-{uuid.uuid4().hex}"
LIMITS = SandboxLimits(
    timeout_s=1.0, memory_mb=128, output_bytes=4096, file_size_mb=1, scratch_mb=8, max_processes=16
)

HOSTILE = (
    r"""
import ctypes, os, signal, socket, sys, time
"""
    + LOOP_MEMORY_FORK
    + r"""
STATE = []


def compute_score(data_source, solution_str, ground_truth, extra_info):
    if solution_str == "ok":
        return 1.0
    return ATTACKS[solution_str](ground_truth)


def long_sleep(_):
    time.sleep(3600)


def ignore_signals(_):
    for sig in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    signal.alarm(1)
    while True:
        time.sleep(0.001)


def memory_spread_over_forks(_):
    for _ in range(4):
        if os.fork() == 0:
            held = bytearray(60 << 20)  # each process stays under its own address-space limit
            time.sleep(3600)
    time.sleep(3600)


def double_fork_setsid(_):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(0)
    return 1.0


def environ_canary(name):
    seen = [f"{k}={v}" for k, v in os.environ.items()]
    paths = ["/proc/self/environ", f"/proc/{os.getppid()}/environ", "/proc/1/environ"]
    try:
        paths += [f"/proc/{p}/environ" for p in os.listdir("/proc") if p.isdigit()]
    except OSError as exc:
        print("listing /proc:", exc)
    for path in paths:
        try:
            with open(path, "rb") as f:
                seen.append(f.read().decode(errors="replace"))
        except OSError as exc:
            print(path, type(exc).__name__)
    return float(sum(name in text for text in seen))


def connect(ports):
    connected = 0
    for port in ports:
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                with socket.socket(family, socket.SOCK_STREAM) as s:
                    s.settimeout(0.5)
                    s.connect((host, port))
                    connected += 1
            except OSError as exc:
                print(port, host, type(exc).__name__, exc.errno)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", ("127.0.0.1", ports[0]))
            connected += 1
    except OSError as exc:
        print("udp", type(exc).__name__)
    return float(connected)


def resolve(names):
    resolved = 0
    for name in names:
        try:
            socket.getaddrinfo(name, 443)
            resolved += 1
        except OSError as exc:
            print(name, type(exc).__name__)
    return float(resolved)


def write_outside(paths):
    written = 0
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write("pwned")
            written += 1
        except OSError as exc:
            print(path, type(exc).__name__)
    return float(written)


def read_outside(paths):
    read = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                f.read(1)
            read += 1
        except OSError as exc:
            print(path, type(exc).__name__)
    return float(read)


def fill_scratch(_):
    written = 0
    for i in range(64):
        try:
            with open(f"fill-{i}", "wb") as f:
                for _ in range(8):
                    f.write(b"x" * (256 << 10))
                    written += 256 << 10
        except OSError as exc:
            print(i, exc.strerror)
    return written / (1 << 20)


def print_100mb(_):
    chunk = "x" * (1 << 20)
    for _ in range(100):
        sys.stdout.write(chunk)
    return 1.0


def return_value(kind):
    return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "str": "1.0",
            "none": None, "huge_list": list(range(10**6)),
            "huge_dict": {"score": 1.0, **{f"c{i}": 1.0 for i in range(100_000)}},
            "nan_component": {"score": 1.0, "format": float("nan")},
            "no_score": {"accuracy": 1.0}}[kind]


def kill_parent(_):
    os.kill(os.getppid(), signal.SIGKILL)
    return 1.0


def kill_everything(_):
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError as exc:
        print(type(exc).__name__)
    return 1.0


def kill_host_pid(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as exc:
        print(type(exc).__name__)
    return 1.0


def ctypes_system(path):
    rc = ctypes.CDLL(None).system(f"touch {path}".encode())
    print("system returned", rc)
    return 1.0


def leak_state(_):
    STATE.append(1)
    leftover = os.listdir(".")
    with open("marker", "w") as f:
        f.write("call")
    return float(len(STATE) == 1 and not leftover)


def segfault(_):
    ctypes.string_at(0)


def read_stdin(_):
    return 1.0 if sys.stdin.read() == "" else 0.0


ATTACKS = {f.__name__: f for f in (
    infinite_loop, long_sleep, ignore_signals, memory_bomb, memory_spread_over_forks,
    fork_bomb, double_fork_setsid,
    environ_canary, connect, resolve, write_outside, read_outside, fill_scratch, print_100mb,
    return_value, kill_parent, kill_everything, kill_host_pid, ctypes_system, leak_state,
    segfault, read_stdin)}
"""
)


@pytest.fixture(scope="module")
def pool():
    os.environ[CANARY_NAME] = CANARY  # in the parent's environment before the pool starts
    try:
        with SandboxPool(HOSTILE, limits=LIMITS) as sandbox:
            yield sandbox
    finally:
        del os.environ[CANARY_NAME]


# The memory attacks get a call limit they can't meet first. Their calls pass 128 MiB in well
# under 1 s alone, but in a CI run under load a memory bomb once reached the 1 s limit before
# the watchdog saw it over 128 MiB, and was reported as a timeout.
MEMORY_LIMITS = dataclasses.replace(LIMITS, timeout_s=4.0)


@pytest.fixture(scope="module")
def memory_pool():
    with SandboxPool(HOSTILE, limits=MEMORY_LIMITS) as sandbox:
        yield sandbox


@pytest.fixture
def attack(pool):
    """Run one attack, then check the pool still serves and nothing was left behind."""
    yield from attacks_on(pool)


@pytest.fixture
def memory_attack(memory_pool):
    """`attack`, on the pool whose calls have 4 s."""
    yield from attacks_on(memory_pool)


def attacks_on(pool):
    zygotes = list(pool.worker_pids)

    def run(name, ground_truth=None):
        started = time.monotonic()
        (result,) = pool.score_batch([request(name, ground_truth)])
        result.wall_s = time.monotonic() - started
        return result

    yield run
    (normal,) = pool.score_batch([request("ok")])
    assert (normal.score, normal.error) == (1.0, "")
    assert pool.worker_pids == zygotes, "the zygote had to be restarted"
    assert wait_for_no_sandbox_processes() == []


def test_an_infinite_loop_times_out(attack):
    result = attack("infinite_loop")
    assert result.error == "timeout: the call ran longer than 1 s"
    assert result.wall_s < 3


def test_a_long_sleep_times_out(attack):
    result = attack("long_sleep")
    assert result.error.startswith("timeout")
    assert result.wall_s < 3


def test_ignoring_sigterm_and_sigalrm_does_not_escape_the_timeout(attack):
    result = attack("ignore_signals")
    assert result.error.startswith("timeout")


def test_a_memory_bomb_that_catches_memoryerror_is_killed_for_memory(memory_attack):
    result = memory_attack("memory_bomb")
    assert result.error.startswith("memory: the call used")
    assert "128 MiB limit" in result.error


def test_memory_spread_over_several_processes_is_counted_together(memory_attack):
    result = memory_attack("memory_spread_over_forks")
    assert result.error.startswith("memory: the call used")


def test_a_fork_bomb_is_capped_and_cleaned_up(attack):
    result = attack("fork_bomb")
    assert result.error.startswith("timeout")
    assert wait_for_no_sandbox_processes() == []


def test_a_double_forked_setsid_daemon_does_not_outlive_the_call(attack):
    result = attack("double_fork_setsid")
    assert (result.score, result.error) == (1.0, "")
    assert wait_for_no_sandbox_processes(timeout_s=1.0) == []


def test_the_parents_secret_is_not_in_the_environment_or_proc(attack, pool):
    result = attack("environ_canary", CANARY_NAME)
    assert (result.score, result.error) == (0.0, "")
    assert CANARY not in result.output
    assert "PermissionError" in result.output  # /proc/<pid>/environ is refused, not empty
    for pid in pool.worker_pids:  # the zygotes were started with a scrubbed environment
        assert CANARY_NAME.encode() not in Path(f"/proc/{pid}/environ").read_bytes()


def test_no_connection_reaches_postgres_redis_or_a_local_listener(attack):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        result = attack("connect", [port, 5432, 6379])
        assert (result.score, result.error) == (0.0, "")
        assert "PermissionError" in result.output  # seccomp refuses inet sockets
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever arrived
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass  # while the host itself can connect: the listener works


def test_dns_resolution_fails(attack):
    result = attack("resolve", ["pypi.org", "localhost"])
    assert (result.score, result.error) == (0.0, "")


def test_writing_outside_scratch_is_refused(attack, tmp_path):
    targets = [
        "/tmp/rl-sandbox-escape",
        str(REPO / "rl-sandbox-escape"),
        str(tmp_path / "escape"),
        "/dev/shm/rl-sandbox-escape",
    ]
    result = attack("write_outside", targets)
    assert (result.score, result.error) == (0.0, "")
    assert not any(os.path.exists(t) for t in targets)


def test_reading_the_project_and_secrets_is_refused(attack):
    targets = [
        str(REPO / "pyproject.toml"),
        "/etc/shadow",
        "/root/.bashrc",
        "/etc/hostname",
        str(Path.home()),
    ]
    result = attack("read_outside", targets)
    assert (result.score, result.error) == (0.0, "")


def test_filling_scratch_stops_at_the_file_size_and_scratch_limits(attack):
    result = attack("fill_scratch")
    assert result.error == ""
    assert result.score <= LIMITS.scratch_mb  # MiB written in all, never past the tmpfs
    assert "File too large" in result.output or "No space left" in result.output


def test_printing_100mb_is_truncated_and_the_call_still_returns(attack):
    result = attack("print_100mb")
    assert (result.score, result.error) == (1.0, "")
    assert len(result.output) < LIMITS.output_bytes + 200
    assert "[output truncated" in result.output


@pytest.mark.parametrize(
    "kind",
    ["nan", "inf", "-inf", "str", "none", "huge_list", "huge_dict", "nan_component", "no_score"],
)
def test_invalid_return_values_become_errors(attack, kind):
    result = attack("return_value", kind)
    assert result.score == 0.0
    assert result.error.startswith("invalid return:")


def test_killing_the_parent_does_not_stop_the_pool(attack):
    result = attack("kill_parent")
    assert (result.score, result.error) == (1.0, "")  # pid 1 of its namespace ignores it


def test_kill_minus_one_reaches_nothing_outside(attack):
    result = attack("kill_everything")
    assert (result.score, result.error) == (1.0, "")
    assert "ProcessLookupError" in result.output  # nothing it may signal in its namespace


def test_killing_the_zygote_by_its_host_pid_is_impossible(attack, pool):
    result = attack("kill_host_pid", pool.worker_pids[0])
    assert result.error == ""


def test_ctypes_system_cannot_run_a_program(attack):
    target = f"/tmp/rl-sandbox-system-{uuid.uuid4().hex}"
    result = attack("ctypes_system", target)
    assert result.error == ""
    assert "system returned 0" not in result.output
    assert not os.path.exists(target)


def test_state_does_not_leak_between_calls(attack, pool):
    results = pool.score_batch([request("leak_state") for _ in range(3)])
    assert [(r.score, r.error) for r in results] == [(1.0, "")] * 3
    assert attack("leak_state").score == 1.0


def test_a_segfault_is_reported_with_its_signal(attack):
    result = attack("segfault")
    assert result.error == "crashed: killed by signal 11 (SIGSEGV) (segmentation fault)"


def test_reading_stdin_gets_end_of_file(attack):
    result = attack("read_stdin")
    assert (result.score, result.error) == (1.0, "")
    assert result.wall_s < 1


def test_oversized_source_is_refused_before_anything_starts():
    code = (
        "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
        "    return 1.0\n" + "#" * MAX_SOURCE_BYTES
    )
    with pytest.raises(RewardCodeError, match="the limit is 65536 bytes"):
        SandboxPool(code, limits=LIMITS)


def test_invalid_source_is_refused_with_its_line_number():
    code = "import re\n\ndef compute_score(data_source, solution_str, ground_truth, extra_info)\n"
    with pytest.raises(RewardCodeError, match="syntax error at line 3"):
        SandboxPool(code, limits=LIMITS)


def test_hostile_module_level_code_runs_sandboxed_too(no_leftover_processes):
    target = f"/tmp/rl-sandbox-module-{uuid.uuid4().hex}"
    code = (
        f"open({target!r}, 'w').write('x')\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
        "    return 1.0\n"
    )
    with pytest.raises(RewardCodeError, match="PermissionError"):
        SandboxPool(code, limits=LIMITS)
    assert not os.path.exists(target)


def test_a_module_that_hangs_while_loading_is_refused():
    code = (
        "while True:\n    pass\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
        "    return 1.0\n"
    )
    limits = SandboxLimits(timeout_s=1.0, load_timeout_s=1.0)
    with pytest.raises(RewardCodeError, match="timeout"):
        SandboxPool(code, limits=limits)
