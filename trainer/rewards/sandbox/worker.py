"""One sandbox worker seen from the pool: a zygote process and the pipes to it."""

from __future__ import annotations

import contextlib
import logging
import selectors
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from trainer.rewards.errors import RewardCodeError, SandboxUnavailableError
from trainer.rewards.sandbox import proctree, wire
from trainer.rewards.sandbox.values import escape_text

BOOTSTRAP = (
    "import sys; sys.path.insert(0, {path!r}); import trainer.rewards.sandbox.zygote as z; "
    "sys.path.remove({path!r}); z.main()"
)
ZYGOTE_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
logger = logging.getLogger(__name__)

GRACE_S = 5.0  # on top of a call's own limit before the zygote itself is presumed stuck


class Worker:
    """One zygote process and the pipes to it."""

    def __init__(self, init: dict[str, Any], index: int) -> None:
        self.init = init
        self.index = index
        self.proc: subprocess.Popen[bytes] | None = None
        self.isolation: dict[str, bool] = {}
        self.batch = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def spawn(self) -> None:
        package_root = str(Path(__file__).resolve().parents[3])
        self.proc = subprocess.Popen(
            # The worker's scratch folder as an argument names, in ps and /proc, the pool
            # that every process of this zygote (all forks of it) belongs to.
            [sys.executable, "-I", "-c", BOOTSTRAP.format(path=package_root), self.init["scratch"]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(ZYGOTE_ENV),
            close_fds=True,
            start_new_session=True,
            cwd="/",
        )
        assert self.proc.stdin is not None
        wire.send(self.proc.stdin.fileno(), self.init)

    def await_ready(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout_s):
                self.kill()
                raise SandboxUnavailableError(f"sandbox worker did not start in {timeout_s} s")
        try:
            ready: dict[str, Any] = wire.receive(self.proc.stdout.fileno())
        except (wire.WireClosed, ValueError) as exc:
            code = self.proc.wait(timeout=5)
            raise SandboxUnavailableError(
                f"sandbox worker exited during start (status {code}): {exc}"
            ) from None
        if not ready["ok"]:
            self.kill()
            if "code_error" in ready:
                raise RewardCodeError(escape_text(str(ready["code_error"])))
            raise SandboxUnavailableError(ready["error"])
        self.isolation = dict(ready["isolation"])
        self.batch = bool(ready["batch"])
        return ready

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        wire.send(self.proc.stdin.fileno(), message)

    def receive(self) -> Any:
        assert self.proc is not None and self.proc.stdout is not None
        return wire.receive(self.proc.stdout.fileno())

    def end_processes(self) -> None:
        """End the zygote and every process it started (the chunk's helper, template and
        calls, whatever they are doing), and return once all of them have exited. The
        pipes stay open: a thread waiting on them sees the end of the stream."""
        proc = self.proc  # another thread may replace it: end the one seen here
        if proc is None:
            return
        # Not yet reaped (poll() reaps only an exited zygote): its pid is still ours.
        if proc.returncode is None:
            left = proctree.end_tree(proc.pid)
            if left:
                logger.warning("reward sandbox: processes %s had not exited after a kill", left)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)

    def kill(self) -> None:
        """End every process of this worker (`end_processes`) and close its pipes."""
        self.end_processes()
        if self.proc is None:
            return
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def shutdown(workers: list[Worker], scratch: str) -> None:
    for worker in workers:
        worker.kill()
    shutil.rmtree(scratch, ignore_errors=True)
