"""`ray start` as every Ray node we run starts: Ray's own command line (the `ray` script's
entry point), in a process that first takes back out of its environment the variables
`import ray` set, so that the raylet and every worker it starts do not inherit them, and
puts in the settings every node of ours runs with (`ray_settings.NODE_ENV`), so that a
node started any other way than by our own code (the trainer image's `ray`, which KubeRay
and compose start) has them too.

Why (#46): `import ray` runs `os.environ.update({"RAY_CLIENT_MODE": "0"})`, and
glibc's `setenv` replaces an *existing* entry with a string on the heap. A raylet hands
each worker its environment in a random order; where an inherited RAY_CLIENT_MODE came
first, the worker's own `import ray` moved `environ[0]` to the heap before its first
process title. Ray's setproctitle (py-setproctitle's code, vendored) finds the argv area
it writes titles over by walking backwards from `environ[0]`, so it walked the heap: the
address sanitizer reported the read (dvarrazzo/py-setproctitle#131), and had the walk
met argv[0]'s text there, every title after it would have been written over heap memory.
Not inherited, the variable is appended by each process's import, and `environ[0]` stays
in the block the kernel put the environment in (docs/distributed.md, "What the address
sanitizer found").

    python -m trainer.distributed.ray_start start --head ...   # as `ray start --head ...`
"""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import MutableMapping

from trainer.distributed.crash_evidence import STACKS_SIGNAL
from trainer.distributed.ray_settings import NODE_ENV, SET_BY_RAY_IMPORT


def add_node_settings(environ: MutableMapping[str, str]) -> None:
    """Before `import ray` (some are read into Ray's Python constants at import, the
    drain's among them): each NODE_ENV setting the caller's environment does not already
    choose (an operator's own choice wins)."""
    for name, value in NODE_ENV.items():
        environ.setdefault(name, value)


def drop_import_leftovers(environ: MutableMapping[str, str]) -> None:
    """After `import ray`: what it set, which the node's processes must not inherit."""
    for name in SET_BY_RAY_IMPORT:
        environ.pop(name, None)


def main() -> None:
    # Where a start that hangs is: the caller that gave up waiting sends STACKS_SIGNAL
    # (trainer.distributed.cluster.ask_for_stacks), and every thread's Python stack goes to
    # the node's log. Ray's processes are started by exec, which drops the handler.
    faulthandler.register(STACKS_SIGNAL, file=sys.stderr, all_threads=True)
    add_node_settings(os.environ)
    from ray.scripts.scripts import cli as ray_command_line  # imports ray: sets them

    drop_import_leftovers(os.environ)
    # Ray's usage lines name the command `ray`, not `python -m ...` (click reads that
    # from how Python was started, not from argv[0]).
    ray_command_line(prog_name="ray")


if __name__ == "__main__":
    main()
