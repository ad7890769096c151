"""A forked child of the warm runtime becoming the job's process, then running it.

The runtime has imported torch, transformers and the trainer; everything a fresh
`python -m trainer run --from-studio` would take from its start is set here from the
job's request, in this order: its own process group and death with the runtime, the
runtime's descriptors closed, the signal dispositions and mask a fresh interpreter would
have, the job's stdin/stdout/stderr, environment, working directory, umask and sys.path,
fresh standard streams and random seeds, the root logger as Python starts it, torch's
thread count from OMP_NUM_THREADS (torch read the environment when it was imported) and
numpy's OpenBLAS pool (loaded with one thread in the runtime). Then
it runs the module as `python -m` does (`runpy`) and exits as the interpreter would:
non-daemon threads joined, atexit handlers run, streams flushed.

Nothing here may return into the runtime's code: `become_job` ends in `os._exit`.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import logging
import os
import random
import runpy
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable
from typing import NoReturn

from trainer.reporting.process_exit import flush_stdio, shut_down_like_python
from trainer.warm.protocol import RunRequest

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE: the child could not become the job
# Python ignores these at start; every other signal starts at its default.
IGNORED_BY_PYTHON = (signal.SIGPIPE, signal.SIGXFSZ)


def _prctl(option: int, value: int | bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def name_process(name: str) -> None:
    """This process's name in `ps -o comm` and `top` (at most 15 bytes kept)."""
    _prctl(PR_SET_NAME, name.encode()[:15])


def die_with_parent(signum: int) -> None:
    """`signum` reaches this process when its parent dies (the parent it has now: for a
    detached runtime, the subreaper or init it was re-parented to)."""
    _prctl(PR_SET_PDEATHSIG, signum)


def set_child_subreaper() -> None:
    """Orphans of this process's descendants are re-parented to it, not to init (not
    inherited by a forked child)."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def process_name(env: dict[str, str]) -> str:
    """The child's name in `ps -o comm`/`top` (15 bytes at most): its cmdline is still
    the runtime's, so this is how to tell one run's process from another's."""
    run_id = env.get("RLSTUDIO_RUN_ID")
    return f"rls-run-{run_id}"[:15] if run_id else "rls-warm-child"


def _reset_signals(request: RunRequest) -> None:
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            continue  # signals Python may not touch (SIGRTMIN-ish ones on some libcs)
    for ignored in (*IGNORED_BY_PYTHON, *request.ignored):
        signal.signal(ignored, signal.SIG_IGN)
    if signal.SIGINT not in request.ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_SETMASK, request.sigmask)


def _take_stdio(fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)


def _announce(request: RunRequest) -> None:
    """The job log's first line says the run took the warm path, and how long its start
    took since the client began (the same monotonic clock: one machine)."""
    took = (time.monotonic() - request.began) * 1000
    with contextlib.suppress(OSError):
        os.write(2, f"warm runtime: forked pid {os.getpid()} in {took:.0f} ms\n".encode())


def _stream(fd: int, old: io.TextIOWrapper, unbuffered: bool) -> io.TextIOWrapper:
    """A standard stream as the interpreter makes it at start (Python/pylifecycle.c):
    stdout line-buffered on a terminal, stderr always, both write-through with -u or
    PYTHONUNBUFFERED."""
    writing = fd != 0
    raw = io.FileIO(fd, "wb" if writing else "rb", closefd=False)
    buffer: io.FileIO | io.BufferedWriter | io.BufferedReader = raw  # unbuffered: no buffer
    if not writing:
        buffer = io.BufferedReader(raw)
    elif not unbuffered:
        buffer = io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffer,
        encoding=old.encoding,
        errors=old.errors,
        line_buffering=writing and (fd == 2 or os.isatty(fd)),
        write_through=writing and unbuffered,
    )


def _fresh_streams(env: dict[str, str]) -> None:
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        stream = _stream(fd, old, unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _fresh_state(request: RunRequest) -> None:
    os.environ.clear()
    os.environ.update(request.env)
    os.chdir(request.cwd)
    os.umask(request.umask)
    sys.path[:] = request.sys_path
    _fresh_streams(request.env)
    random.seed()  # seeded from the OS at import, so every child would share one stream
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    tempfile.tempdir = None  # found again from this job's TMPDIR
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    _openblas_threads(request.env)
    torch = sys.modules.get("torch")
    threads = request.env.get("OMP_NUM_THREADS", "")
    if torch is not None and threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))


# The environment numpy's OpenBLAS sizes its thread pool from, first set first.
OPENBLAS_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
OPENBLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads")


def _openblas_threads(env: dict[str, str]) -> None:
    """numpy's OpenBLAS starts its threads when loaded, so the runtime imported it with
    one (trainer.warm.preload); give the job the pool a fresh process would start."""
    if "numpy" not in sys.modules:
        return
    given = [env[name] for name in OPENBLAS_THREAD_ENV if env.get(name, "").isdigit()]
    wanted = int(given[0]) if given else len(os.sched_getaffinity(0))
    if wanted <= 1:
        return
    with open("/proc/self/maps") as maps:
        loaded = sorted({line.split()[-1] for line in maps if "openblas" in line})
    for path in loaded:
        library = ctypes.CDLL(path)
        for name in OPENBLAS_SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(wanted)
                return


def _exit_code(code: object) -> int:
    """SystemExit's code as the interpreter turns it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run_module(request: RunRequest) -> tuple[int, int | None]:
    """The exit code `python -m <module>` would have, and the signal it would die by
    (SIGINT after an uncaught KeyboardInterrupt, as Python does)."""
    sys.argv = [request.module, *request.argv]  # runpy puts the module's file first
    try:
        runpy.run_module(request.module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return _exit_code(exc.code), None
    except KeyboardInterrupt:
        traceback.print_exc()
        return 128 + signal.SIGINT, signal.SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())
        return 1, None
    return 0, None


def _die_by(signum: int) -> NoReturn:
    flush_stdio()
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def become_job(request: RunRequest, stdio: list[int], runtime_fds: Iterable[int]) -> NoReturn:
    """In the freshly forked child: become the job's process, run it, exit."""
    code = EXIT_INTERNAL_ERROR
    try:
        runtime_pid = os.getppid()
        os.setpgid(0, 0)  # its own group: the runtime signals and kills the run as one
        die_with_parent(signal.SIGKILL)  # dies with the runtime, never orphaned
        if os.getppid() != runtime_pid:
            os._exit(EXIT_INTERNAL_ERROR)
        name_process(process_name(request.env))
        for fd in runtime_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        _reset_signals(request)
        _take_stdio(stdio)
        _announce(request)
        _fresh_state(request)
        code, die_by = _run_module(request)
        shut_down_like_python()
        if die_by is not None:
            _die_by(die_by)
    except BaseException:
        try:
            traceback.print_exc()
        finally:
            flush_stdio()
            os._exit(code)
    flush_stdio()
    os._exit(code)
