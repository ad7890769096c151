"""What a run's Ray job runs: `python -m trainer.warm run --from-studio`.

It asks this node's warm runtime (trainer.warm.server) for a forked process that becomes
`python -m trainer run --from-studio` with this job's argv, environment, working
directory and standard streams, then stays the job's process: it forwards Ray's SIGTERM
or SIGINT to the run and exits with the run's exit code (or dies by its signal). Ray
SIGKILLing it closes its connection, and the runtime kills the run.

When no runtime answers, it starts one (detached, for the next runs) and this run starts
cold: it execs `python -m trainer ...` itself, so the first run never waits for a runtime
to import torch. Every path is said on stderr, which is the job's log:
`warm runtime: forked pid N in X ms` or `cold start: <why>`.

Stdlib only, and nothing heavy imported: this is the cold path's start too.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import struct
import sys
import time
from typing import NoReturn

from trainer.warm import protocol
from trainer.warm.rendezvous import (
    ENABLE_ENV,
    Rendezvous,
    UnsafeFolder,
    enabled,
    rendezvous,
    server_env,
    take_lock,
)

TRAINER_MODULE = "trainer"
STARTED_TIMEOUT_S = 30.0  # the runtime forks at once; a wedged one must not hold the job
PING_TIMEOUT_S = 5.0
LOG_MAX_BYTES = 1024 * 1024  # a runtime's log is started afresh past this
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT)
EXIT_RUNTIME_LOST = 1


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- the cold path ---------------------------------------------------------------------
def cold(module: str, argv: list[str], reason: str) -> NoReturn:
    """Become `python -m <module> <argv>` (the job as it ran before the warm runtime)."""
    say(f"cold start: {reason}")
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *argv])


# -- talking to a runtime --------------------------------------------------------------
def connect(place: Rendezvous) -> socket.socket | None:
    """A connection to the key's runtime; None when none listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(place.socket_path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    if uid != os.geteuid():  # the folder is ours alone, so this would be a bug or an attack
        sock.close()
        raise UnsafeFolder(f"{place.socket_path} is served by uid {uid}, not by us")
    return sock


def ping(place: Rendezvous) -> protocol.Message | None:
    """The runtime's `pong` (its pid and key), or None when none answers."""
    try:
        sock = connect(place)
    except UnsafeFolder:
        return None
    if sock is None:
        return None
    with sock:
        sock.settimeout(PING_TIMEOUT_S)
        try:
            protocol.send(sock, {"kind": "ping"})
            answer, _ = protocol.receive(sock)
        except (protocol.ProtocolError, OSError):
            return None
    return answer if answer["kind"] == "pong" else None


def spawn_runtime(place: Rendezvous) -> bool:
    """Start the key's runtime, detached (double fork and setsid: it outlives this job's
    process group, which Ray kills when the job ends), holding the key's lock, which it
    inherits from here. False if the lock is held: a runtime is running or starting."""
    lock_fd = take_lock(place)
    if lock_fd is None:
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            middle = os.getpid()
            if os.fork() == 0:
                # Adopted (by init or a subreaper) before the runtime asks to die with its
                # parent: the parent it asks about must not be this middle process.
                while os.getppid() == middle:
                    time.sleep(0.001)
                _exec_runtime(place, lock_fd)
        finally:
            os._exit(0)
    os.close(lock_fd)
    os.waitpid(pid, 0)
    return True


def _exec_runtime(place: Rendezvous, lock_fd: int) -> NoReturn:
    """(In the detached grandchild.) Exec `python -m trainer.warm serve` in this working
    directory, so its sys.path finds the trainer this job would."""
    try:
        log_fd = os.open(
            place.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
        )
        if os.fstat(log_fd).st_size > LOG_MAX_BYTES:
            os.ftruncate(log_fd, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.set_inheritable(lock_fd, True)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        argv = [sys.executable, "-m", "trainer.warm", "serve", "--lock-fd", str(lock_fd)]
        argv += ["--key", place.key, "--adopter", str(os.getppid())]
        os.execve(sys.executable, argv, server_env(os.environ))
    finally:
        os._exit(127)


def start(timeout_s: float) -> int:
    """`python -m trainer.warm start`: make sure this user's runtime for this code and
    environment is up; return once it answers (0) or it failed to start (1)."""
    if not enabled(os.environ):
        print(f"warm runtime: disabled ({ENABLE_ENV}=0)")
        return 0
    try:
        place = rendezvous(os.environ)
    except UnsafeFolder as exc:
        print(f"warm runtime: not started: {exc}", file=sys.stderr)
        return 1
    spawned = spawn_runtime(place)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = ping(place)
        if answer is not None:
            print(f"warm runtime: ready (pid {answer['pid']}, {place.socket_path})")
            return 0
        lock_fd = take_lock(place)
        if lock_fd is not None:  # nobody holds the lock: the runtime died starting
            os.close(lock_fd)
            if not spawned:
                spawned = spawn_runtime(place)
                continue
            print(f"warm runtime: it exited while starting; see {place.log_path}", file=sys.stderr)
            return 1
        time.sleep(0.2)
    print(f"warm runtime: not ready after {timeout_s:g} s; see {place.log_path}", file=sys.stderr)
    return 1


# -- the warm path ---------------------------------------------------------------------
class Signals:
    """SIGTERM and SIGINT caught and queued (through a wakeup pipe) for the run."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        for signum in FORWARDED_SIGNALS:
            signal.signal(signum, lambda signum, frame: None)  # noted through the pipe

    def take(self) -> list[int]:
        try:
            return list(os.read(self.read_fd, 512))
        except BlockingIOError:
            return []


def this_request(module: str, argv: list[str], began: float) -> protocol.RunRequest:
    umask = os.umask(0o077)
    os.umask(umask)
    ignored = [
        int(signum)
        for signum in signal.valid_signals()
        if signum not in (signal.SIGKILL, signal.SIGSTOP)
        and signal.getsignal(signum) is signal.SIG_IGN
        and signum not in (signal.SIGPIPE, signal.SIGXFSZ)  # Python's own, not inherited
    ]
    return protocol.RunRequest(
        argv=argv,
        module=module,
        env=dict(os.environ),
        cwd=os.getcwd(),
        sys_path=list(sys.path),
        umask=umask,
        sigmask=sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        ignored=ignored,
        began=began,
    )


def relay_exit(ended: protocol.Message) -> NoReturn:
    """Exit as the run did: with its code, or killed by its signal."""
    sys.stdout.flush()
    sys.stderr.flush()
    signum = ended.get("signal")
    if isinstance(signum, int):
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(int(ended.get("code") or 0))


def run_warm(conn: socket.socket, module: str, argv: list[str], began: float) -> NoReturn:
    signals = Signals()
    try:
        protocol.send(conn, this_request(module, argv, began).message(), [0, 1, 2])
    except OSError as exc:  # refused and closed before the request was read, or gone
        cold(module, argv, f"the warm runtime closed the connection ({exc})")
    pending: list[int] = []
    child_pid = 0
    deadline = time.monotonic() + STARTED_TIMEOUT_S
    while True:
        wait = None if child_pid else max(0.0, deadline - time.monotonic())
        readable, _, _ = select.select([conn.fileno(), signals.read_fd], [], [], wait)
        if not readable and not child_pid:
            conn.close()
            cold(module, argv, f"the warm runtime did not start the run in {STARTED_TIMEOUT_S:g} s")
        if signals.read_fd in readable:
            pending += [s for s in signals.take() if s in FORWARDED_SIGNALS]
        if conn.fileno() in readable:
            try:
                message, _ = protocol.receive(conn)
            except (protocol.ProtocolError, OSError) as exc:
                if not child_pid:
                    cold(module, argv, f"the warm runtime closed the connection ({exc})")
                say(f"warm runtime: lost it before the run ended ({exc}); the run dies with it")
                os._exit(EXIT_RUNTIME_LOST)
            if message["kind"] == "refused":
                if pending:  # Ray asked this job to stop before anything started
                    relay_exit({"signal": pending[0]})
                cold(module, argv, f"the warm runtime refused: {message.get('reason')}")
            if message["kind"] == "started":
                # The child itself said `warm runtime: forked pid N`, before any output of
                # the job's: said from here, it came after the job's first lines at times.
                child_pid = int(message["pid"])
            elif message["kind"] == "exit":
                relay_exit(message)
        if child_pid:
            for signum in pending:
                protocol.send(conn, {"kind": "signal", "signum": signum})
            pending = []


def run_job(module: str, argv: list[str]) -> NoReturn:
    """The job: `python -m <module> <argv>` in a process of the warm runtime, or cold."""
    began = time.monotonic()
    if not enabled(os.environ):
        cold(module, argv, f"{ENABLE_ENV}=0")
    try:
        place = rendezvous(os.environ)
        conn = connect(place)
    except UnsafeFolder as exc:
        cold(module, argv, str(exc))
    if conn is None:
        if spawn_runtime(place):
            cold(
                module,
                argv,
                f"no warm runtime yet; started one for the next runs ({place.log_path})",
            )
        cold(module, argv, "the warm runtime is still starting")
    with contextlib.closing(conn):
        run_warm(conn, module, argv, began)
