"""The warm runtime's command line.

    python -m trainer.warm run ARGS...   `python -m trainer run ARGS...` through this node's
                                         warm runtime, or cold (the studio's job entrypoint)
    python -m trainer.warm start         start this user's runtime; return once it answers
    python -m trainer.warm serve         run a runtime in the foreground

`run --module M ARGS...` runs `python -m M ARGS...` instead: the runtime's tests use it
to run a tiny module in place of training.
"""

from __future__ import annotations

import argparse

from trainer.warm.client import TRAINER_MODULE, run_job, start
from trainer.warm.rendezvous import STALE_CHECK_S

START_TIMEOUT_S = 300.0  # a runtime imports torch and transformers: ~10 s on 2 cores


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.warm",
        description="A per-node fork server that has imported torch, transformers and the "
        "trainer, so a run's process starts warm (docs/operations.md, 'The job').",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="python -m trainer run ARGS..., warm when a runtime answers")
    begin = sub.add_parser("start", help="start the runtime; return once it answers")
    begin.add_argument("--timeout-s", type=float, default=START_TIMEOUT_S)
    serve = sub.add_parser("serve", help="run a runtime in the foreground")
    serve.add_argument(
        "--idle-s", type=float, help="exit after this long with no run (RLSTUDIO_WARM_IDLE_S)"
    )
    serve.add_argument(
        "--stale-check-s",
        type=float,
        default=STALE_CHECK_S,
        help=f"how often an idle runtime checks that its code is current ({STALE_CHECK_S:g})",
    )
    serve.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # held by its starter
    serve.add_argument("--key", help=argparse.SUPPRESS)  # the key its starter computed
    # The pid that adopted the detached runtime (trainer.warm.client.spawn_runtime).
    serve.add_argument("--adopter", type=int, help=argparse.SUPPRESS)
    # Preloaded modules that started a thread, skipped when the runtime starts again.
    serve.add_argument("--skip", action="append", default=[], help=argparse.SUPPRESS)
    return parser


def main(argv: list[str]) -> int:
    if argv[:1] == ["run"]:  # everything after `run` is the trainer's (its --help too)
        if argv[1:2] == ["--module"] and len(argv) > 2:
            run_job(argv[2], argv[3:])
        run_job(TRAINER_MODULE, argv)
    args = _parser().parse_args(argv)
    if args.command == "start":
        return start(args.timeout_s)
    from trainer.warm.server import serve_main  # torch and the trainer, only here

    return serve_main(args)
