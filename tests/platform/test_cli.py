"""Fast checks of the `rlstudio` command: ports, error lines, supervision, delegation."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.cli import main as cli_main
from studio.platform.ports import PortNeed, busy_port_message, free_port, port_free
from studio.platform.services import RAY_TEMP_DIR_MAX_CHARS, ray_temp_dir
from studio.platform.supervisor import ChildSpec, Supervisor, UpError
from tests.platform.conftest import RLSTUDIO, studio_env


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


def test_a_listening_port_is_busy_and_the_message_names_its_owner_and_the_fix(listening):
    port = listening.getsockname()[1]
    assert not port_free(port)
    message = busy_port_message(PortNeed(port, "web server", "pass --port"))
    assert message is not None
    assert message.startswith(f"port {port} for the web server is in use (by pid {os.getpid()} ")
    assert message.endswith("; stop it or pass --port")


def test_a_closed_port_is_free():
    port = free_port()
    assert port_free(port)
    assert busy_port_message(PortNeed(port, "web server", "pass --port")) is None


def test_up_refuses_a_busy_port_with_one_line_and_starts_nothing(listening, var_dir):
    port = listening.getsockname()[1]
    result = subprocess.run(
        [str(RLSTUDIO), "up", "--port", str(port)],
        env=studio_env(var_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        f"rlstudio up: port {port} for the web server is in use (by pid {os.getpid()} "
    )
    assert lines[0].endswith("; stop it or pass --port")
    assert not (var_dir / "postgres").exists(), "nothing may start after a failed check"


def test_a_child_that_exits_early_is_named_with_its_log(tmp_path):
    sup = Supervisor()
    spec = ChildSpec(
        name="celery worker",
        argv=[sys.executable, "-c", "print('broker refused'); raise SystemExit(3)"],
        env=dict(os.environ),
        cwd=tmp_path,
        log_path=tmp_path / "worker.log",
    )
    sup.start(spec)
    try:
        with pytest.raises(UpError) as caught:
            sup.wait_until(lambda: False, "the worker", 30, None)
    finally:
        sup.stop_all()
    message = str(caught.value)
    assert message.startswith("celery worker exited unexpectedly (exit code 3)")
    assert message.endswith(f"see {tmp_path / 'worker.log'} (last line: broker refused)")


def test_a_child_is_ready_on_what_this_start_logged_not_an_earlier_one(tmp_path):
    """`rlstudio up` waits for the Ray head's own ready line (ray_settings.READY_LINE) in
    its log, which every start appends to: an earlier start's line must not count."""
    log = tmp_path / "ray.log"
    log.write_text("Ray runtime started.\n")  # the last `up`'s head
    sup = Supervisor()
    spec = ChildSpec(
        name="ray head",
        argv=[sys.executable, "-c", "import time; time.sleep(1); print('Ray runtime started.')"],
        env=dict(os.environ),
        cwd=tmp_path,
        log_path=log,
    )
    head = sup.start(spec, service=False)
    try:
        assert not head.logged("Ray runtime started")
        head.popen.wait(timeout=30)
        assert head.logged("Ray runtime started")
    finally:
        sup.stop_all()


SWEEP_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from studio.platform.supervisor import ChildSpec, Supervisor, become_subreaper

    out = Path(sys.argv[1])
    # The child double-forks a daemon in its own session, then exits: the daemon
    # re-parents to us (the subreaper) and must still be swept.
    daemon = (
        "import os, time, sys\\n"
        "if os.fork() == 0:\\n"
        "    os.setsid()\\n"
        "    if os.fork() == 0:\\n"
        "        open(sys.argv[1], 'w').write(str(os.getpid()))\\n"
        "        time.sleep(300)\\n"
        "    os._exit(0)\\n"
        "time.sleep(300)\\n"
    )
    assert become_subreaper()
    sup = Supervisor()
    sup.start(ChildSpec("daemoniser", [sys.executable, "-c", daemon, str(out)],
                        dict(os.environ), out.parent, grace_s=1.0))
    while not out.exists() or not out.read_text():
        time.sleep(0.05)
    started = time.monotonic()
    sup.stop_all()
    print(f"stopped in {time.monotonic() - started:.1f}")
    """
)


def test_stop_all_sweeps_grandchildren_that_escaped_into_their_own_session(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    result = subprocess.run(
        [sys.executable, "-c", SWEEP_SCRIPT, str(pid_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    daemon = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(daemon):
        time.sleep(0.1)
    assert not _alive(daemon), "the daemonised grandchild survived"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_ray_temp_dir_stays_short_enough_for_unix_sockets(tmp_path):
    assert ray_temp_dir(Path("/srv/rl")) == Path("/srv/rl/ray/t")
    deep = Path("/home/someone/projects/rl-studio/checkouts/main/var")
    assert len(str(ray_temp_dir(deep))) <= RAY_TEMP_DIR_MAX_CHARS


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        cli_main.main(["--help"])
    text = capsys.readouterr().out
    for command in ("up", "doctor", "backup", "restore", "rotate-secrets", "train"):
        assert command in text
