"""`rlstudio sweeps ...`: sweeps against a running studio (docs/sweeps.md).

    rlstudio sweeps create --project P --name N --preset grpo-tiny-arith \\
        --param actor.optim.lr=float:1e-5:1e-3:log --param rollout.n=int:2:8:2 \\
        --method tpe --max-trials 16 --parallelism 2 --pruner asha --min-steps 2
    rlstudio sweeps list | watch ID [--once] | pause ID | resume ID | stop ID
    rlstudio sweeps add-trials ID COUNT | report ID [-o FILE]

Built on `studio.client` like the other remote commands (no Django). `watch` exits 0 when
the sweep finished with a best trial, 1 when it was stopped or no trial completed.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from studio.cli.input_files import UsageError, add_config_and_input_arguments, read_tree
from studio.cli.sweep_space import PARAM_HELP, SPACE_FILE_HELP, SYNTAX, build_space
from studio.cli.sweep_watch import list_lines, summary_line, watch_sweep
from studio.client import Client

EXIT_OK, EXIT_REFUSED = 0, 1

CREATE_EPILOG = (
    "parameters (--param NAME=TYPE:...):\n"
    + "".join(f"  NAME={syntax}\n" for syntax in SYNTAX.values())
    + "\nexamples:\n"
    "  --param actor.optim.lr=float:1e-5:1e-3:log   a float on a log scale\n"
    "  --param algorithm.kl_ctrl.kl_coef=float:0:0.1\n"
    "  --param rollout.n=int:2:8:2                  2, 4, 6 or 8\n"
    "  --param rollout.temperature=choice:0.7,1.0\n"
    "  --param reward_version=input:7,8             run inputs by id (needs --metric-reward)\n"
    "\nA choice value with a comma in it needs --space-file."
)


def _create_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--name", required=True)
    base = p.add_mutually_exclusive_group()
    base.add_argument("--from-run", type=int, metavar="RUN", help="clone this run for each trial")
    base.add_argument("--preset", help="a preset name (see /api/config/presets)")
    add_config_and_input_arguments(
        p, "override one config field of the base, e.g. --set trainer.total_steps=50"
    )
    p.add_argument("--param", action="append", default=[], metavar="NAME=TYPE:...", help=PARAM_HELP)
    p.add_argument("--space-file", type=Path, metavar="FILE", help=SPACE_FILE_HELP)
    p.add_argument("--method", choices=["random", "grid", "tpe"], help="default random")
    p.add_argument("--max-trials", type=int, help="the trial budget (default 8)")
    p.add_argument("--parallelism", type=int, help="trials at once (default 1)")
    p.add_argument(
        "--metric", help="a logged metric key to optimize (default: the validation score)"
    )
    p.add_argument("--direction", choices=["maximize", "minimize"], help="default maximize")
    p.add_argument(
        "--metric-reward",
        metavar="BUILTIN",
        help="a built-in reward that scores every trial's validation, e.g. exact_match "
        "(needed when the space searches reward versions)",
    )
    p.add_argument(
        "--pruner",
        choices=["asha", "median", "none"],
        help="stop losing trials early: successive halving (asha) or the median rule",
    )
    p.add_argument("--min-steps", type=int, help="with --pruner: the first step it may stop at")
    p.add_argument("--reduction-factor", type=int, help="with --pruner asha (default 2)")
    p.add_argument("--seed", type=int, help="the sampler's seed (default 0)")
    p.add_argument(
        "--stop-on-critical-alert",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stop a trial with a critical alert (default yes)",
    )
    p.add_argument("--json", action="store_true", help="print the API's JSON")


def add_sweep_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    server: argparse.ArgumentParser,
    run: Callable[..., int],
) -> None:
    sweeps = sub.add_parser(
        "sweeps", help="search a run's config and inputs: trials are runs"
    ).add_subparsers(dest="action", metavar="ACTION", required=True)

    p = sweeps.add_parser(
        "create",
        parents=[server],
        help="start a sweep from a run or a preset over a search space",
        epilog=CREATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _create_arguments(p)
    p.set_defaults(handler=sweeps_create, func=run)

    p = sweeps.add_parser("list", parents=[server], help="sweeps of your projects, newest first")
    p.add_argument("--project", help="only this project (slug)")
    p.add_argument("--status", action="append", help="only this status (repeatable)")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=sweeps_list, func=run)

    p = sweeps.add_parser(
        "watch",
        parents=[server],
        help="print trial rows as they change until the sweep ends "
        "(exit 0: finished with a best trial; 1: stopped, or no trial completed)",
    )
    p.add_argument("sweep", type=int, help="sweep id")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    p.add_argument("--once", action="store_true", help="print the trials once and exit")
    p.set_defaults(handler=sweeps_watch, func=run)

    for name, verb in (
        ("pause", "start no more trials (the running ones go on)"),
        ("resume", "start trials again"),
        ("stop", "end the sweep: its running trials are cancelled"),
    ):
        p = sweeps.add_parser(name, parents=[server], help=verb)
        p.add_argument("sweep", type=int, help="sweep id")
        p.set_defaults(handler=sweeps_act, func=run)

    p = sweeps.add_parser(
        "add-trials", parents=[server], help="raise the trial budget (a finished sweep goes on)"
    )
    p.add_argument("sweep", type=int, help="sweep id")
    p.add_argument("count", type=int, help="trials to add")
    p.set_defaults(handler=sweeps_add_trials, func=run)

    p = sweeps.add_parser(
        "report",
        parents=[server],
        help="download the sweep's self-contained HTML report (opens offline)",
    )
    p.add_argument("sweep", type=int, help="sweep id")
    p.add_argument("-o", "--output", type=Path, help="default report-sweep-ID.html")
    p.set_defaults(handler=sweeps_report, func=run)


def _pruner(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.pruner is None:
        if args.min_steps is not None or args.reduction_factor is not None:
            raise UsageError("--min-steps and --reduction-factor need --pruner asha or median")
        return None
    pruner: dict[str, Any] = {"kind": args.pruner}
    if args.min_steps is not None:
        pruner["min_steps"] = args.min_steps
    if args.reduction_factor is not None:
        pruner["reduction_factor"] = args.reduction_factor
    return pruner


def _inputs(args: argparse.Namespace) -> dict[str, Any]:
    fields = {
        "model": args.model,
        "dataset": args.dataset,
        "dataset_version": args.dataset_version,
        "validation": args.validation,
        "validation_version": args.validation_version,
        "reward_version": args.reward_version,
    }
    return {key: value for key, value in fields.items() if value is not None}


def sweep_url(client: Client, sweep: dict[str, Any]) -> str:
    return f"{client.url}/p/{sweep['project']}/sweeps/{sweep['id']}"


def sweeps_create(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    space = build_space(args.param, args.space_file)
    created = client.create_sweep(
        args.project,
        args.name,
        space,
        base_run=args.from_run,
        preset=args.preset,
        config=read_tree(args.config) if args.config else None,
        overrides=args.overrides or None,
        inputs=_inputs(args),
        method=args.method,
        max_trials=args.max_trials,
        parallelism=args.parallelism,
        metric=args.metric,
        direction=args.direction,
        metric_reward=args.metric_reward,
        pruner=_pruner(args),
        seed=args.seed,
        stop_on_critical_alert=args.stop_on_critical_alert,
    )
    if args.json:
        print(json.dumps(created, indent=2, sort_keys=True), file=out)
        return EXIT_OK
    print(f"created sweep {created['id']} ({created['status']}): {created['name']}", file=out)
    print(sweep_url(client, created), file=out)
    return EXIT_OK


def sweeps_list(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    found = client.sweeps(args.project, status=args.status, limit=args.limit)
    if args.json:
        print(json.dumps(found, indent=2, sort_keys=True), file=out)
        return EXIT_OK
    for line in list_lines(found):
        print(line, file=out)
    return EXIT_OK


def sweeps_watch(
    args: argparse.Namespace,
    client: Client,
    out: IO[str],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    ok = watch_sweep(client, args.sweep, args.interval, out, once=args.once, sleep=sleep)
    return EXIT_OK if ok else EXIT_REFUSED


def sweeps_act(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    verbs = {"pause": client.pause_sweep, "resume": client.resume_sweep, "stop": client.stop_sweep}
    print(summary_line(verbs[args.action](args.sweep)), file=out)
    return EXIT_OK


def sweeps_add_trials(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    print(summary_line(client.add_sweep_trials(args.sweep, args.count)), file=out)
    return EXIT_OK


def sweeps_report(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    """Write the studio's HTML report of the sweep (the API builds it)."""
    html = client.sweep_report(args.sweep)
    output = args.output or Path(f"report-sweep-{args.sweep}.html")
    try:
        output.write_bytes(html)
    except OSError as exc:
        raise UsageError(f"can't write {output}: {exc.strerror}") from None
    print(f"wrote {output} ({len(html) / 1e6:.1f} MB, sweep {args.sweep})", file=out)
    return EXIT_OK
