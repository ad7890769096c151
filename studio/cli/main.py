"""`rlstudio`: the studio's console command.

    rlstudio up               start and supervise the whole studio on this machine
    rlstudio doctor           check this machine can run it, one line per check
    rlstudio backup|restore   the database and the studio's files, to and from a folder
    rlstudio rotate-secrets   new generated passwords for the embedded Postgres and Redis
    rlstudio train ...        python -m trainer run ...
    rlstudio make-demo-model  python -m trainer make-demo-model ...
    rlstudio runs list|create|cancel|resume|watch     } against a running studio, with a
    rlstudio datasets upload                          } personal token (--url/--token or
    rlstudio rewards push|test                        } RLSTUDIO_URL/RLSTUDIO_TOKEN)
    rlstudio eval ...                                 }
    rlstudio sweeps create|list|watch|stop|report     }

train and make-demo-model exec the trainer's own CLI in a fresh interpreter: the
studio package never imports torch, transformers or Ray.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from studio.cli import remote
from studio.paths import demo_asset_dirs, var_dir
from studio.platform import doctor, operator_commands, up

# rlstudio subcommand -> `python -m trainer` subcommand
DELEGATED = {"train": "run", "make-demo-model": "make-demo-model"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlstudio",
        description="RL Studio: web-managed RL post-training (GRPO, PPO, ...) of language models.",
        epilog="Each subcommand has its own --help. See docs/operations.md.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    up_parser = sub.add_parser(
        "up",
        help="start and supervise the whole studio on this machine",
        description=(
            "Start embedded Postgres and Redis (unless DATABASE_URL / REDIS_URL are set), a "
            "local Ray head (unless RAY_ADDRESS is set or --no-ray), migrate, seed the admin "
            "user and demo, then the web server, Celery worker and beat. Prints the URL once "
            "/api/health answers 200. Ctrl-C or SIGTERM stops every process it started. "
            "State lives in RLSTUDIO_VAR_DIR (default ./var) and survives restarts."
        ),
    )
    up.add_arguments(up_parser)
    up_parser.set_defaults(func=up.run)

    doctor_parser = sub.add_parser(
        "doctor",
        help="check Python, torch, node, ports, services and disk; one line each",
        description="Check what `rlstudio up` and training need. Exit 1 if something required "
        "is missing; every failing line names the fix.",
    )
    doctor.add_arguments(doctor_parser)
    doctor_parser.set_defaults(func=doctor.run)

    operator_commands.add_commands(sub)
    remote.add_commands(sub)

    sub.add_parser(
        "train",
        add_help=False,
        help="train from a config: CONFIG.yaml [key=value ...] (= python -m trainer run)",
    )
    sub.add_parser(
        "make-demo-model",
        add_help=False,
        help="build the offline demo model and toy data in var/ "
        "(= python -m trainer make-demo-model)",
    )
    return parser


def delegate(command: str, rest: list[str]) -> int:
    """Replace this process with `python -m trainer <command> ...` (never returns on success)."""
    if importlib.util.find_spec("trainer.__main__") is None:
        print(
            f"rlstudio {command}: the trainer CLI (python -m trainer) is not installed; "
            "run `make install`",
            file=sys.stderr,
        )
        return 1
    args = list(rest)
    if command == "make-demo-model" and "--help" not in args and "-h" not in args:
        for flag, folder in demo_asset_dirs(var_dir()).items():
            if not any(a == flag or a.startswith(f"{flag}=") for a in args):
                args += [flag, str(folder)]
    argv = [sys.executable, "-m", "trainer", DELEGATED[command], *args]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in and args_in[0] in DELEGATED:
        return delegate(args_in[0], args_in[1:])
    parser = build_parser()
    args = parser.parse_args(args_in)
    if args.command is None:
        parser.print_help()
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
