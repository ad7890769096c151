"""The warm runtime's server: one per node, user and key, forking a ready process per run.

It imports torch, transformers and the trainer's modules once, runs no torch operation
and starts no thread (trainer.warm.preload), then listens on `<folder>/<key>.sock`
(trainer.warm.rendezvous). It is single-threaded: one loop over the listening socket,
each run's client connection and each child's pidfd (where the kernel has none, gVisor's
say, exited children are polled for every POLL_S instead).

- A connection from another uid (SO_PEERCRED) is refused and nothing is read from it.
- `run`: fork; the child becomes the job (trainer.warm.child); the client hears `started`
  and, when the child has exited and been reaped, `exit` with its code or signal. What
  is left of the child's process group then is killed, as Ray kills a finished job's.
- `signal` (the client got SIGTERM or SIGINT from Ray's job stop): sent to the child's
  process group, as Ray sends it to the entrypoint and its descendants.
- The client's connection closing first (its job was SIGKILLed): the child, its group
  and every descendant are killed and the child reaped.
- No child and no request for RLSTUDIO_WARM_IDLE_S (900 s; 0: never), or its code
  changed under it: it removes its socket and exits. SIGTERM: it stops its children
  (SIGTERM, then SIGKILL after STOP_GRACE_S) and exits. Each child dies with it
  (PR_SET_PDEATHSIG) if it is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import NoReturn

from trainer.rewards.sandbox.proctree import descendants, read_children
from trainer.warm import protocol
from trainer.warm.child import become_job, die_with_parent, name_process, set_child_subreaper
from trainer.warm.preload import (
    preload,
    preload_list,
    restart_without,
    thread_count,
    thread_names,
)
from trainer.warm.rendezvous import (
    STALE_CHECK_S,
    Rendezvous,
    idle_seconds,
    private_folder,
    runtime_key,
    take_lock,
)

log = logging.getLogger(__name__)

FORWARDED_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
REQUEST_TIMEOUT_S = 5.0  # a client sends its request at once
STOP_GRACE_S = 3.0  # as Ray's RAY_JOB_STOP_WAIT_TIME_S
BACKLOG = 64
POLL_S = 0.1  # how often exited children are looked for without pidfds


class Stop(BaseException):
    """SIGTERM, SIGINT or SIGHUP reached the runtime. Not an Exception, like SystemExit:
    the signal's handler raises it wherever the runtime is, and a preload's import is
    guarded by `except Exception` (preload.preload). As an Exception, a stop that came
    while torch was importing was logged as a failed import, and the runtime went on to
    serve with its adopter gone: `rlstudio up` SIGKILLed as its runtime started left the
    runtime running (seen in a test of `up`, under load)."""


def _on_stop_signal(signum: int, frame: FrameType | None) -> NoReturn:
    raise Stop(signal.Signals(signum).name)


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def open_pidfd(pid: int) -> int | None:
    """A descriptor readable when `pid` exits; None where the kernel has no pidfd_open."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def count_children() -> int:
    """This process's children (from /proc)."""
    return len(read_children(os.getpid()))


@dataclass
class Child:
    pid: int
    pidfd: int | None  # readable once the child has exited; None: polled instead
    conn: socket.socket | None  # None once the client is gone
    run: str  # RLSTUDIO_RUN_ID, for the log
    started: float = field(default_factory=time.monotonic)


class WarmServer:
    def __init__(
        self, place: Rendezvous, lock_fd: int, idle_s: float, stale_check_s: float = STALE_CHECK_S
    ) -> None:
        self.place = place
        self.lock_fd = lock_fd
        self.idle_s = idle_s
        self.stale_check_s = stale_check_s
        # The environment the key was computed from, kept before the runtime's own imports:
        # they set variables the key reads (torch's inductor sets TORCHINDUCTOR_CACHE_DIR,
        # serve_main OPENBLAS_NUM_THREADS), and a key read from os.environ later would
        # differ, so every runtime retired itself at its first check (once a minute).
        self.environ = dict(os.environ)
        self.selector = selectors.PollSelector()  # no descriptor of its own to leak
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.children: dict[int, Child] = {}
        self.last_activity = time.monotonic()
        self.next_stale_check = self.last_activity + stale_check_s
        self.refusal = ""  # set when forking this process would be unsafe
        self.socket_inode = 0
        self.orphans = False  # processes re-parented to us are alive

    # -- the socket --------------------------------------------------------------------
    def bind(self) -> None:
        path = self.place.socket_path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a runtime that died left it; we hold the key's lock
        mask = os.umask(0o177)
        try:
            self.listener.bind(str(path))
        finally:
            os.umask(mask)
        self.socket_inode = os.stat(path).st_ino
        self.listener.listen(BACKLOG)
        self.selector.register(self.listener, selectors.EVENT_READ, ("listener", None))

    def unbind(self) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        with contextlib.suppress(OSError):
            if os.stat(self.place.socket_path).st_ino == self.socket_inode:
                os.unlink(self.place.socket_path)
        self.listener.close()

    # -- the loop ----------------------------------------------------------------------
    def serve(self) -> str:
        """Serve until idle, stale or stopped; why it stopped."""
        while True:
            for key, _events in self.selector.select(self._timeout()):
                self._dispatch(key)
            self._reap_orphans()
            reason = self._idle_reason()
            if reason:
                return reason

    def _dispatch(self, key: selectors.SelectorKey) -> None:
        """One ready descriptor; a key of one batch may be stale by the time it is handled
        (its run was reaped, its client dropped), so each checks it still holds."""
        role, child = key.data
        if role == "listener":
            self._accept()
        elif role == "client" and child.conn is not None and key.fileobj is child.conn:
            self._from_client(child)
        elif role == "exit" and child.pid in self.children:
            self._reap(child)

    def _timeout(self) -> float:
        if any(child.pidfd is None for child in self.children.values()):
            return POLL_S
        if self.children or self.orphans:
            return 1.0  # orphans of runs are reaped at this pace
        now = time.monotonic()
        waits = [self.next_stale_check - now]
        if self.idle_s > 0:
            waits.append(self.last_activity + self.idle_s - now)
        return max(0.05, min(waits))

    def _idle_reason(self) -> str:
        if self.children:
            return ""
        now = time.monotonic()
        if self.idle_s > 0 and now - self.last_activity >= self.idle_s:
            return f"idle for {self.idle_s:g} s"
        if now >= self.next_stale_check:
            self.next_stale_check = now + self.stale_check_s
            if runtime_key(self.environ) != self.place.key:
                return "its code or Python changed (a new runtime serves the new key)"
        return ""

    # -- requests ----------------------------------------------------------------------
    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        self.last_activity = time.monotonic()
        uid = peer_uid(conn)
        if uid != os.geteuid():
            log.warning(
                "refused a connection from uid %d (this runtime is uid's %d)", uid, os.geteuid()
            )
            with contextlib.suppress(OSError):
                refusal = f"uid {uid} may not use the warm runtime of uid {os.geteuid()}"
                protocol.send(conn, {"kind": "refused", "reason": refusal})
            conn.close()
            return
        conn.settimeout(REQUEST_TIMEOUT_S)
        try:
            message, fds = protocol.receive(conn, max_fds=protocol.STDIO_FDS)
        except (protocol.ProtocolError, OSError) as exc:
            log.warning("dropped a connection: %s", exc)
            conn.close()
            return
        if message["kind"] == "ping":
            with contextlib.suppress(OSError):
                protocol.send(conn, {"kind": "pong", "pid": os.getpid(), "key": self.place.key})
            conn.close()
            return
        if message["kind"] == "run":
            self._start(conn, message, fds)
            return
        self._refuse(conn, f"unknown request {message['kind']!r}", fds)

    def _refuse(self, conn: socket.socket, reason: str, fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            protocol.send(conn, {"kind": "refused", "reason": reason})
        conn.close()

    def _own_fds(self) -> list[int]:
        """Every descriptor of the runtime's, which a child must not keep."""
        fds = [self.listener.fileno(), self.lock_fd]
        for child in self.children.values():
            if child.pidfd is not None:
                fds.append(child.pidfd)
            if child.conn is not None:
                fds.append(child.conn.fileno())
        return fds

    def _start(self, conn: socket.socket, message: protocol.Message, fds: list[int]) -> None:
        if len(fds) != protocol.STDIO_FDS:
            self._refuse(conn, f"a run needs {protocol.STDIO_FDS} descriptors, not {len(fds)}", fds)
            return
        try:
            request = protocol.RunRequest.parse(message)
        except protocol.ProtocolError as exc:
            self._refuse(conn, str(exc), fds)
            return
        if self.refusal:
            self._refuse(conn, self.refusal, fds)
            return
        if protocol.peer_closed(conn):  # it gave up waiting and started the run cold
            self._refuse(conn, "the client hung up before the run started", fds)
            return
        # A stop signal waits until the child is known (and the child until it has reset
        # the handlers it inherits, which would run the runtime's stop in it).
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            began = time.monotonic()
            pid = os.fork()
            if pid == 0:
                become_job(request, fds, [*self._own_fds(), conn.fileno()])
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)  # the child does it too; whichever runs first
            for fd in fds:
                os.close(fd)
            fork_ms = (time.monotonic() - began) * 1000
            run = request.env.get("RLSTUDIO_RUN_ID", "-")
            child = Child(pid, open_pidfd(pid), conn, run)
            del request, message  # the job's environment stays with the job
            self.children[pid] = child
            conn.settimeout(None)
            self.selector.register(conn, selectors.EVENT_READ, ("client", child))
            if child.pidfd is not None:
                self.selector.register(child.pidfd, selectors.EVENT_READ, ("exit", child))
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        log.info("run %s: forked pid %d in %.1f ms", child.run, pid, fork_ms)
        try:
            protocol.send(conn, {"kind": "started", "pid": pid, "fork_ms": round(fork_ms, 1)})
        except OSError:
            self._client_lost(child, "could not tell it the run started")

    def _from_client(self, child: Child) -> None:
        assert child.conn is not None
        try:
            message, _ = protocol.receive(child.conn)
        except (protocol.ProtocolError, OSError) as exc:
            self._client_lost(child, str(exc))
            return
        signum = message.get("signum")
        if message["kind"] == "signal" and signum in FORWARDED_SIGNALS:
            log.info(
                "run %s: %s to pid %d's group", child.run, signal.Signals(signum).name, child.pid
            )
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signum)
        else:
            log.warning("run %s: ignored %r from its client", child.run, message)

    def _client_lost(self, child: Child, why: str) -> None:
        """Its job's process is gone (SIGKILLed by Ray): the run must not outlive it."""
        log.warning(
            "run %s: client gone (%s); killing pid %d and its descendants",
            child.run,
            why,
            child.pid,
        )
        self._drop_client(child)
        kill_tree(child.pid)

    def _drop_client(self, child: Child) -> None:
        if child.conn is not None:
            self.selector.unregister(child.conn)
            child.conn.close()
            child.conn = None

    def _reap(self, child: Child) -> None:
        # Still a zombie here, so its group id can't be reused: kill what is left of the
        # group (Ray kills a finished job's process group the same way).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        _, status = os.waitpid(child.pid, 0)
        if child.pidfd is not None:
            self.selector.unregister(child.pidfd)
            os.close(child.pidfd)
        del self.children[child.pid]
        self.last_activity = time.monotonic()
        ended: protocol.Message = {"kind": "exit", "code": None, "signal": None}
        if os.WIFSIGNALED(status):
            ended["signal"] = os.WTERMSIG(status)
        else:
            ended["code"] = os.WEXITSTATUS(status)
        took = time.monotonic() - child.started
        log.info("run %s: pid %d ended (%s) after %.1f s", child.run, child.pid, ended, took)
        if child.conn is not None:
            with contextlib.suppress(OSError):
                protocol.send(child.conn, ended)
            self._drop_client(child)

    def _reap_orphans(self) -> None:
        """Reap the processes a run left that were re-parented to us (the runtime is a
        child subreaper), so none stays a zombie; a run's own child is reaped as such."""
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # no process of ours at all
                self.orphans = False
                return
            if info is None:  # some alive, none exited
                self.orphans = len(self.children) < count_children()
                return
            child = self.children.get(info.si_pid)
            if child is not None:
                self._reap(child)
            else:
                os.waitpid(info.si_pid, 0)

    # -- stopping ----------------------------------------------------------------------
    def stop_children(self) -> None:
        """SIGTERM every child's group, SIGKILL what is left after STOP_GRACE_S, reap all."""
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while self.children and time.monotonic() < deadline:
            for key, _events in self.selector.select(POLL_S):
                self._dispatch(key)
            self._reap_orphans()
        for pid in list(self.children):
            kill_tree(pid)
        for child in list(self.children.values()):
            self._reap(child)


def kill_tree(pid: int) -> None:
    """SIGKILL `pid`'s descendants (found before it dies: then they are re-parented out of
    reach), its process group, and itself; reaping is its parent's business."""
    below = descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for process in [*below, pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process, signal.SIGKILL)


def serve_main(args: argparse.Namespace) -> int:
    """`python -m trainer.warm serve`: run a runtime in the foreground until it stops."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s warm runtime[%(process)d]: %(message)s",
    )
    place = Rendezvous(private_folder(os.environ), runtime_key(os.environ))
    if args.key and args.key != place.key:
        log.error(
            "started for key %s but this process's key is %s: not serving", args.key, place.key
        )
        return 1
    lock_fd = args.lock_fd if args.lock_fd is not None else take_lock(place)
    if lock_fd is None:
        log.info("a runtime for key %s is already running or starting", place.key)
        return 0
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    name_process("rls-warm")
    set_child_subreaper()  # what a run leaves behind is re-parented to us and reaped
    # Stops when whatever adopted it dies: `rlstudio up` (a subreaper) SIGKILLed, say.
    die_with_parent(signal.SIGTERM)
    # The call binds to the parent it has now. If its adopter died while this process
    # started (imports take seconds on a busy machine), that parent is init or another
    # subreaper, which outlives it: nothing would stop it.
    if args.adopter is not None and os.getppid() != args.adopter:
        log.info("the process that adopted this runtime (pid %d) has exited", args.adopter)
        return 0
    server = WarmServer(
        place,
        lock_fd,
        idle_seconds(os.environ) if args.idle_s is None else args.idle_s,
        args.stale_check_s,
    )
    # numpy's OpenBLAS would start its threads as it loads; the child sizes its pool.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        began = time.monotonic()
        modules = [name for name in preload_list(os.environ) if name not in args.skip]
        failed, threaded = preload(modules)
        if threaded is not None:
            restart_without(args, lock_fd, threaded)
        os.chdir("/")  # hold no job's folder
        threads = thread_count()
        if threads > 1:  # no import started it: a bug, or an unknown library
            server.refusal = (
                f"the warm runtime runs {threads} threads ({', '.join(thread_names())}); "
                "forking it would not be safe"
            )
            log.error("%s: every run will start cold", server.refusal)
        gc.collect()
        gc.freeze()  # children's collections leave the runtime's objects (and pages) alone
        server.bind()
        log.info(
            "ready: key %s, %d modules imported in %.1f s (%s failed, %s skipped: they start "
            "threads), %d thread(s), python %s",
            place.key,
            len(modules),
            time.monotonic() - began,
            len(failed),
            ", ".join(args.skip) or "none",
            threads,
            sys.executable,
        )
        why = server.serve()
        log.info("exiting: %s", why)
    except Stop as stop:
        log.info("exiting: %s", stop)
    finally:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)  # a second one must not cut the cleanup
        server.unbind()
        server.stop_children()
    return 0
