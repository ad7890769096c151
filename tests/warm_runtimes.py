"""The warm trainer runtimes (trainer.warm) a test started, found by the folder they serve
from (RLSTUDIO_WARM_DIR): each test gives its runtimes a folder of its own and stops them
with it, since a runtime is detached from whatever started it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import psutil

from trainer.warm import protocol
from trainer.warm.client import ping
from trainer.warm.rendezvous import DIR_ENV, Rendezvous

__all__ = ["DIR_ENV", "answering", "private_folder", "remove_folder", "runtime_processes"]


def private_folder() -> Path:
    """A fresh folder for runtimes' sockets: mode 700 and short (a socket's path must fit
    in 108 bytes)."""
    return Path(tempfile.mkdtemp(prefix="rw-", dir="/tmp"))


def runtime_processes(folder: Path) -> list[psutil.Process]:
    """`python -m trainer.warm serve` processes serving from `folder`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            cmdline = process.info["cmdline"] or []
            if "trainer.warm" not in cmdline or "serve" not in cmdline:
                continue
            if process.environ().get(DIR_ENV) == str(folder):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def answering(folder: Path) -> list[protocol.Message]:
    """The `pong` of each runtime answering in `folder` (its pid and key)."""
    answers = [ping(Rendezvous(folder, sock.stem)) for sock in sorted(folder.glob("*.sock"))]
    return [answer for answer in answers if answer is not None]


def stop_runtimes(folder: Path) -> None:
    """SIGTERM the folder's runtimes (each stops its runs), SIGKILL what is left."""
    processes = runtime_processes(folder)
    for process in processes:
        process.terminate()
    _, alive = psutil.wait_procs(processes, timeout=10)
    for process in alive:
        process.kill()
    psutil.wait_procs(alive, timeout=10)


def remove_folder(folder: Path) -> None:
    stop_runtimes(folder)
    shutil.rmtree(folder, ignore_errors=True)
