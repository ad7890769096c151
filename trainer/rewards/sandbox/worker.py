"""One sandbox worker seen from the pool: a zygote process and the pipes to it."""

from __future__ import annotations

import contextlib
import selectors
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from trainer.rewards.errors import RewardCodeError, SandboxUnavailableError
from trainer.rewards.sandbox import wire
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
            [sys.executable, "-I", "-c", BOOTSTRAP.format(path=package_root)],
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

    def kill(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.kill()
            return
        with contextlib.suppress(OSError, ValueError):
            self.send({"op": "exit"})
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        self.kill()


def shutdown(workers: list[Worker], scratch: str) -> None:
    for worker in workers:
        worker.stop()
    shutil.rmtree(scratch, ignore_errors=True)
