"""The warm trainer runtime (trainer.warm) with real processes: a runtime, clients as a
Ray job would start them, and a tiny module (tests.trainer.warm_target) in place of
training. Each test's runtimes serve from a folder of their own and import only `json`
(RLSTUDIO_WARM_PRELOAD), except the one that checks torch's.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from studio.platform.trainer_account import DEFAULT_TRAINER_OS_USER
from tests.warm_runtimes import answering, private_folder, remove_folder, runtime_processes
from trainer.warm import protocol
from trainer.warm.rendezvous import DIR_ENV, ENABLE_ENV, PRELOAD_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests.trainer.warm_target"
TIMEOUT_S = 60


def eventually(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} not true after {timeout_s:g} s")


def gone(pid: int) -> bool:
    """No process `pid`, not even a zombie."""
    return not Path(f"/proc/{pid}").exists()


@pytest.fixture
def folder() -> Iterator[Path]:
    made = private_folder()
    try:
        yield made
    finally:
        remove_folder(made)


def job_env(folder: Path, **extra: str) -> dict[str, str]:
    """A Ray job's environment, as far as the runtime cares."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLSTUDIO_WARM")}
    env.update({DIR_ENV: str(folder), PRELOAD_ENV: "json", "PYTHONPATH": str(REPO_ROOT)})
    env.update(extra)
    return env


def serve(env: dict[str, str], *args: str, cwd: Path = REPO_ROOT) -> subprocess.Popen[bytes]:
    """A runtime in the foreground; returns once it answers."""
    runtime = subprocess.Popen(
        [sys.executable, "-m", "trainer.warm", "serve", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    folder = Path(env[DIR_ENV])
    eventually(lambda: bool(answering(folder)) or runtime.poll() is not None, TIMEOUT_S, "ready")
    assert runtime.poll() is None, f"the runtime exited with {runtime.returncode}"
    return runtime


def client(*args: str) -> list[str]:
    """A job's command line, running the test module in place of `trainer`."""
    return [sys.executable, "-m", "trainer.warm", "run", "--module", TARGET, *args]


def run(env: dict[str, str], *args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        client(*args),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        umask=0o027,
    )


def reported(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return facts


def test_a_run_gets_its_argv_env_cwd_umask_and_streams_and_its_exit_code_comes_back(
    folder: Path, tmp_path: Path
) -> None:
    env = job_env(folder, RLSTUDIO_RUN_ID="77", ONLY_THIS_JOB="yes")
    runtime = serve(env)

    done = run(env, "report", "5", cwd=tmp_path)

    assert done.returncode == 5, done.stderr
    assert "warm runtime: forked pid" in done.stderr
    assert "a line on stderr" in done.stderr  # the child wrote to the client's stderr
    facts = reported(done)
    assert facts["ppid"] == runtime.pid  # forked by the runtime, not started by the client
    assert facts["pgid"] == facts["pid"]  # in a process group of its own
    assert f"forked pid {facts['pid']}" in done.stderr
    assert facts["argv"] == ["report", "5"]
    assert facts["cwd"] == str(tmp_path)
    assert facts["umask"] == 0o027
    assert facts["env"]["ONLY_THIS_JOB"] == "yes"  # the job's, not the runtime's own
    assert facts["env"]["RLSTUDIO_RUN_ID"] == "77"
    assert facts["comm"] == "rls-run-77"
    assert facts["main_file"].endswith("warm_target.py")
    eventually(lambda: gone(facts["pid"]), 10, "the run was reaped")
    assert runtime.poll() is None


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_the_runs_streams_buffer_as_a_fresh_pythons_would(folder: Path, unbuffered: str) -> None:
    """With PYTHONUNBUFFERED (as every studio job has it) each line reaches the job's log
    at once; without it, stdout to a pipe is block-buffered. Cold and warm alike."""
    env = job_env(folder, PYTHONUNBUFFERED=unbuffered)
    serve(env)
    lines = {}
    for path, extra in (("warm", {}), ("cold", {ENABLE_ENV: "0"})):
        done = subprocess.run(
            client("interleave", "-"),
            env={**env, **extra},
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT_S,
        )
        said = done.stdout.splitlines()
        assert said[0].startswith(f"{path} ") and done.returncode == 0, said
        lines[path] = said[1:]

    assert lines["warm"] == lines["cold"]
    if unbuffered:
        assert lines["warm"] == ["out 1", "err 2", "out 3"]
    else:
        assert lines["warm"] == ["err 2", "out 1", "out 3"]


def test_torch_is_imported_before_the_fork_with_no_thread_and_takes_the_jobs_thread_count(
    folder: Path,
) -> None:
    env = job_env(folder)
    del env[PRELOAD_ENV]  # the real list: torch, transformers, the trainer's run path
    runtime = serve(env)
    assert len(os.listdir(f"/proc/{runtime.pid}/task")) == 1

    for threads in ("1", "2"):
        done = run({**env, "OMP_NUM_THREADS": threads}, "report", "0")
        assert done.returncode == 0, done.stderr
        assert "warm runtime: forked pid" in done.stderr
        assert reported(done)["torch_threads"] == int(threads)


def test_a_preloaded_module_that_starts_a_thread_is_skipped(folder: Path) -> None:
    """pyarrow starts its allocator's threads when imported (and some transformers
    versions import it with a model class): the runtime starts again without it."""
    env = job_env(folder, **{PRELOAD_ENV: "json,pyarrow"})
    runtime = serve(env)

    assert len(os.listdir(f"/proc/{runtime.pid}/task")) == 1
    assert psutil.Process(runtime.pid).cmdline()[-2:] == ["--skip", "pyarrow"]
    done = run(env, "report", "0")
    assert "warm runtime: forked pid" in done.stderr, done.stderr


SLOW_IMPORT = """
import pathlib, time
pathlib.Path({started!r}).touch()
time.sleep(5)
"""


def test_a_runtime_stopped_while_it_preloads_exits_instead_of_serving(
    folder: Path, tmp_path: Path
) -> None:
    """SIGTERM (the parent-death signal `rlstudio up`'s death sends) while a preloaded
    module is importing: the import's error handling must not take the stop for a failed
    import and serve on."""
    started = tmp_path / "import-started"
    (tmp_path / "slow_to_import.py").write_text(SLOW_IMPORT.format(started=str(started)))
    env = job_env(folder, **{PRELOAD_ENV: "json,slow_to_import"})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(tmp_path)])
    runtime = subprocess.Popen(
        [sys.executable, "-m", "trainer.warm", "serve"],
        env=env,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        eventually(started.exists, TIMEOUT_S, "the slow import started")
        runtime.send_signal(signal.SIGTERM)
        _, stderr = runtime.communicate(timeout=TIMEOUT_S)
    finally:
        runtime.kill()
    assert runtime.returncode == 0, stderr
    assert "exiting: SIGTERM" in stderr and "preloading slow_to_import failed" not in stderr
    assert not answering(folder)


def test_a_runtime_whose_adopter_died_as_it_started_does_not_serve(folder: Path) -> None:
    """`rlstudio up` SIGKILLed while a detached runtime was still importing: the runtime's
    parent-death call then binds to init, so it checks that its adopter is its parent."""
    gone_adopter = subprocess.Popen(["true"])
    gone_adopter.wait()
    runtime = subprocess.run(
        [sys.executable, "-m", "trainer.warm", "serve", "--adopter", str(gone_adopter.pid)],
        env=job_env(folder),
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert runtime.returncode == 0, runtime.stderr
    assert f"adopted this runtime (pid {gone_adopter.pid}) has exited" in runtime.stderr
    assert not answering(folder)


def test_sigterm_to_the_client_reaches_the_run_and_its_exit_code_comes_back(
    folder: Path, tmp_path: Path
) -> None:
    env = job_env(folder)
    serve(env)
    marker = tmp_path / "marker"
    job = subprocess.Popen(client("until-term", str(marker)), env=env, cwd=REPO_ROOT)
    eventually(lambda: marker.exists() and marker.read_text().isdigit(), TIMEOUT_S, "started")
    pid = int(marker.read_text())

    job.send_signal(signal.SIGTERM)

    assert job.wait(timeout=TIMEOUT_S) == 128 + signal.SIGTERM
    assert marker.read_text() == "term"
    eventually(lambda: gone(pid), 10, "the run was reaped")


def test_sigkill_of_the_client_kills_the_run_and_its_children_and_reaps_them(
    folder: Path, tmp_path: Path
) -> None:
    env = job_env(folder)
    runtime = serve(env)
    marker = tmp_path / "marker"
    job = subprocess.Popen(client("sleep", str(marker)), env=env, cwd=REPO_ROOT)
    eventually(lambda: marker.exists() and bool(marker.read_text()), TIMEOUT_S, "started")
    pids = json.loads(marker.read_text())

    job.kill()  # what Ray does to a job that ignores its stop
    job.wait(timeout=TIMEOUT_S)

    eventually(lambda: gone(pids["pid"]) and gone(pids["grandchild"]), 10, "nothing left")
    assert runtime.poll() is None  # the runtime serves on


def test_a_connection_from_another_uid_is_refused(folder: Path) -> None:
    """The runtime runs as the trainer account; root, who may open any socket, is
    refused by its SO_PEERCRED check."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to run a runtime as another account")
    try:
        account = pwd.getpwnam(DEFAULT_TRAINER_OS_USER)
    except KeyError:
        pytest.skip(f"no {DEFAULT_TRAINER_OS_USER} account on this machine")
    os.chown(folder, account.pw_uid, account.pw_gid)
    env = job_env(folder, HOME=str(folder))
    runtime = subprocess.Popen(
        [sys.executable, "-m", "trainer.warm", "serve"],
        env=env,
        cwd=REPO_ROOT,
        user=account.pw_uid,
        group=account.pw_gid,
        extra_groups=[],
        start_new_session=True,
    )
    eventually(lambda: any(folder.glob("*.sock")) or runtime.poll() is not None, TIMEOUT_S, "up")
    [path] = folder.glob("*.sock")

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        # The runtime answers a stranger on accept, reads nothing and closes: the ping may
        # find the socket already closed (EPIPE), but the refusal is queued to be read.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            protocol.send(sock, {"kind": "ping"})
        answer, _ = protocol.receive(sock)

    assert answer["kind"] == "refused"
    assert f"uid 0 may not use the warm runtime of uid {account.pw_uid}" in answer["reason"]
    assert runtime.poll() is None


@pytest.mark.parametrize("problem", ["open to others", "another owner"])
def test_a_folder_others_could_enter_makes_the_run_start_cold(folder: Path, problem: str) -> None:
    if problem == "open to others":
        folder.chmod(0o755)
        said = "has mode 755: group or others may enter it"
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root, to give the folder to another account")
        os.chown(folder, 65534, 65534)  # nobody
        said = "belongs to uid 65534, not to this user"
    env = job_env(folder)

    done = run(env, "report", "3")

    assert done.returncode == 3, done.stderr  # the run ran, cold
    assert f"cold start: the warm runtime's folder {folder} " in done.stderr
    assert said in done.stderr
    assert reported(done)["main_file"].endswith("warm_target.py")
    assert list(folder.iterdir()) == []  # no runtime started there, no lock, no socket


def test_disabled_the_run_starts_cold_and_starts_no_runtime(folder: Path) -> None:
    env = job_env(folder, **{ENABLE_ENV: "0"})

    done = run(env, "report", "0")

    assert done.returncode == 0
    assert f"cold start: {ENABLE_ENV}=0" in done.stderr
    assert runtime_processes(folder) == []


def test_the_first_runs_start_cold_and_one_runtime_serves_the_next(folder: Path) -> None:
    env = job_env(folder)
    first = [
        subprocess.Popen(client("report", "0"), env=env, cwd=REPO_ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]  # fmt: skip
    outputs = [job.communicate(timeout=TIMEOUT_S) for job in first]

    for job, (stdout, stderr) in zip(first, outputs, strict=True):
        assert job.returncode == 0, stderr
        if "cold start: " in stderr:
            assert json.loads(stdout)["pid"] == job.pid  # the client became the run (exec)
        else:  # on a loaded machine the other's runtime (json only) answered first
            assert "warm runtime: forked pid" in stderr, stderr
    assert sum("cold start: " in err for _, err in outputs) >= 1
    assert sum("started one for the next runs" in err for _, err in outputs) >= 1
    eventually(lambda: bool(answering(folder)), TIMEOUT_S, "the runtime answers")
    assert len(runtime_processes(folder)) == 1  # its lock let one start, whoever raced

    done = run(env, "report", "0")
    assert "warm runtime: forked pid" in done.stderr, done.stderr


def test_start_returns_once_the_runtime_answers(folder: Path) -> None:
    env = job_env(folder)
    started = subprocess.run(
        [sys.executable, "-m", "trainer.warm", "start"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert started.returncode == 0, started.stderr
    [pong] = answering(folder)
    assert f"warm runtime: ready (pid {pong['pid']}" in started.stdout
    again = subprocess.run(
        [sys.executable, "-m", "trainer.warm", "start"], env=env, cwd=REPO_ROOT,
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert again.returncode == 0
    assert [p.pid for p in runtime_processes(folder)] == [pong["pid"]]


def test_an_idle_runtime_exits_and_removes_its_socket(folder: Path) -> None:
    runtime = serve(job_env(folder), "--idle-s", "1")

    assert runtime.wait(timeout=TIMEOUT_S) == 0
    assert list(folder.glob("*.sock")) == []


def test_a_runtime_whose_code_did_not_change_keeps_serving(folder: Path, tmp_path: Path) -> None:
    """Its imports may set variables its key reads (torch's inductor sets
    TORCHINDUCTOR_CACHE_DIR as it is imported): its check that its code is current must not
    count them, or it retires at every check and every few runs start cold."""
    (tmp_path / "sets_env.py").write_text(
        'import os\nos.environ["TORCHINDUCTOR_CACHE_DIR"] = "/tmp/torchinductor_test"\n'
    )
    env = job_env(folder, PYTHONPATH=f"{REPO_ROOT}:{tmp_path}")
    env[PRELOAD_ENV] = "json,sets_env"
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    runtime = serve(env, "--stale-check-s", "0.2")
    time.sleep(2.0)  # ten checks

    assert runtime.poll() is None, "the runtime retired though nothing changed"
    done = run(env, "report", "0")
    assert "warm runtime: forked pid" in done.stderr, done.stderr
    assert reported(done)["ppid"] == runtime.pid


def test_a_runtime_of_older_code_is_not_used(folder: Path, tmp_path: Path) -> None:
    """The trainer's sources change under a runtime (an upgrade, a checkout): the next
    run does not find it, starts cold and starts a runtime of the new code."""
    copy = tmp_path / "code"
    shutil.copytree(
        REPO_ROOT / "trainer", copy / "trainer", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = job_env(folder, PYTHONPATH=f"{copy}:{REPO_ROOT}")  # the copy's trainer, our tests
    old = serve(env, cwd=tmp_path)
    assert "warm runtime: forked pid" in run(env, "report", "0", cwd=tmp_path).stderr

    changed = copy / "trainer" / "warm" / "protocol.py"
    changed.write_text(changed.read_text() + "\n# changed\n")
    done = run(env, "report", "0", cwd=tmp_path)

    assert done.returncode == 0
    assert "cold start: no warm runtime yet; started one for the next runs" in done.stderr
    assert reported(done)["ppid"] != old.pid
    eventually(lambda: len(answering(folder)) == 2, TIMEOUT_S, "the new runtime answers")
    again = run(env, "report", "0", cwd=tmp_path)
    assert "warm runtime: forked pid" in again.stderr
    assert reported(again)["ppid"] != old.pid
