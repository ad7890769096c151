"""What the warm runtime imports before it forks, and the guard that it starts no thread.

A process forked while another of its threads holds a lock (the allocator's, the
interpreter's) can deadlock, so the runtime imports its modules one by one and checks its
thread count after each; a module whose import started a thread is dropped by running the
runtime again without it (`restart_without`: the same key and lock, a fresh process).
numpy's OpenBLAS is loaded with one thread (the child sizes its pool, trainer.warm.child).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Mapping
from typing import NoReturn

from trainer.warm.rendezvous import PRELOAD_ENV

log = logging.getLogger(__name__)

# What `trainer run` imports before its first step (`sys.modules` after a tiny run):
# torch, transformers, the model class the demo and most runs load, and the trainer's
# run path. Not pyarrow: it starts a thread (jemalloc's) when imported; the child imports
# it (0.1 s).
DEFAULT_PRELOAD = (
    "torch",
    "transformers",
    "transformers.models.llama.modeling_llama",
    "trainer.commands.cli",
    "trainer.commands.training_runtime",
    "trainer.training.loop",
    "trainer.evaluation.evaluate",
    "trainer.reporting.bootstrap",
    "trainer.reporting.console",
    "trainer.reporting.jsonl",
    "trainer.reporting.lifecycle",
    "trainer.reporting.studio",
)


def thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


def thread_names() -> list[str]:
    names = []
    for task in sorted(os.listdir("/proc/self/task")):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/comm") as comm:
            names.append(comm.read().strip())
    return names


def preload(modules: list[str]) -> tuple[list[str], str | None]:
    """Import `modules` in order: the ones that failed (logged: the child imports them
    itself), and the first one after which this process runs a thread, where it stopped
    (pyarrow's allocator starts one, and some transformers versions import it with a
    model class)."""
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # any import error only costs the child that import
            log.exception("preloading %s failed", name)
            failed.append(name)
        if thread_count() > 1:
            return failed, name
    return failed, None


def restart_without(args: argparse.Namespace, lock_fd: int, module: str) -> NoReturn:
    """Exec this runtime again (same key, same lock) without importing `module`."""
    log.warning(
        "importing %s started a thread (threads: %s); starting again without it",
        module,
        ", ".join(thread_names()),
    )
    argv = [sys.executable, "-m", "trainer.warm", "serve", "--lock-fd", str(lock_fd)]
    if args.key:
        argv += ["--key", args.key]
    if args.idle_s is not None:
        argv += ["--idle-s", str(args.idle_s)]
    argv += ["--stale-check-s", str(args.stale_check_s)]
    if args.adopter is not None:
        argv += ["--adopter", str(args.adopter)]
    for skipped in [*args.skip, module]:
        argv += ["--skip", skipped]
    os.set_inheritable(lock_fd, True)
    for handler in logging.getLogger().handlers:
        handler.flush()
    os.execv(sys.executable, argv)


def preload_list(environ: Mapping[str, str]) -> list[str]:
    given = environ.get(PRELOAD_ENV)
    if given is None:
        return list(DEFAULT_PRELOAD)
    return [name.strip() for name in given.split(",") if name.strip()]
