"""What a trainer worker leaves behind when it dies of a fatal signal.

A heap corruption killed a gloo worker twice in CI (#46, docs/distributed.md) and left
one line from glibc plus the aborting thread's stack; its cause is still unknown. So a
worker, as it starts:

- prints every thread's Python stack on a fatal signal, first. Ray enables
  `faulthandler` for the crashing thread only, and then installs its own failure handler
  (absl's) over it, which logs through `new`: on a corrupt heap that handler aborts again
  inside malloc and the process dies before anything else runs (seen on a worker made to
  corrupt a fastbin link, as CI's had). So `faulthandler` is installed again here, over
  Ray's: it writes without allocating, then hands the signal on to Ray's handler. The
  worker's stderr is its log;
- dumps core where the operator asks for it (`RLSTUDIO_WORKER_CORE_DUMPS=1` in the Ray
  head's environment, which its workers inherit): the soft core-size limit is raised to
  the hard one. Only the trainer's workers: Ray's own processes (its dashboard agent, for
  one) can abort while a head is torn down, and their cores would say nothing about ours.
  The test suite's heads set it (tests/crash_cores.py reads the cores into the report).
- writes every thread's Python stack when it gets `STACKS_SIGNAL` and goes on: the
  controller sends it to a worker of its node that has not answered a call in time
  (trainer.distributed.group), so a hang leaves where each thread was, not only the phase.
  Where cores are asked, the controller then makes that worker dump one (SIGQUIT): a
  thread stuck in C (a gloo collective, malloc) shows only its Python caller in the
  Python stack, and the core has every thread's native frames.
"""

from __future__ import annotations

import faulthandler
import os
import resource
import signal
import sys
from collections.abc import Mapping

CORE_DUMPS_ENV = "RLSTUDIO_WORKER_CORE_DUMPS"
# Free in a Ray worker: Ray's dashboard agent takes it for the same kind of stack dump
# (Tune takes SIGUSR1), torch only in torchrun's launcher. Its default action would end
# the process, so it is sent only to processes that run `enable` (ActorGroup checks the
# process title first).
STACKS_SIGNAL = signal.SIGUSR2


def asks_for_cores(environ: Mapping[str, str]) -> bool:
    """Whether a worker started with `environ` dumps core on a fatal signal."""
    return environ.get(CORE_DUMPS_ENV) == "1"


def enable() -> None:
    # enable() on an enabled faulthandler changes its settings but not the signal
    # handlers: disable first, so that its handlers go in over Ray's and chain to them.
    faulthandler.disable()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(STACKS_SIGNAL, file=sys.stderr, all_threads=True, chain=False)
    if asks_for_cores(os.environ):
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        # The controller asks for a core by SIGQUIT (trainer.distributed.group). A shell
        # starts a background job (`cmd &`) with SIGQUIT ignored, and the ignore outlives
        # exec into every descendant: a head started that way gave workers that never dumped.
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)
