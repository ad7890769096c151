"""`rlstudio runs|datasets|rewards|eval|sweeps ...`: automation against a running studio.

Built on `studio.client` (HTTP + a personal token), never on Django: these commands
work from any machine that can reach the server. The server is `--url` or RLSTUDIO_URL,
the token `--token` or RLSTUDIO_TOKEN.

Exit codes: 0 done; 1 the API refused (4xx; the error line says why), or a watched run
ended failed or cancelled, or a watched sweep was stopped or completed no trial; 2 bad
command line or unreadable input file; 3 the server can't be reached or failed (5xx).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from studio.cli.evaluations import add_eval_commands
from studio.cli.input_files import (
    UsageError,
    add_config_and_input_arguments,
    read_jsonl,
    read_tree,
)
from studio.cli.run_watch import format_number, watch_run
from studio.cli.sweeps import add_sweep_commands
from studio.client import ApiError, Client, ServerUnreachable

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


Handler = Callable[[argparse.Namespace, Client, IO[str]], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--url", help="studio URL (default: $RLSTUDIO_URL or 127.0.0.1:8000)")
    server.add_argument("--token", help="personal API token, rls_... (default: $RLSTUDIO_TOKEN)")

    runs = sub.add_parser("runs", help="list, create, cancel, resume or watch runs").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    p = runs.add_parser("list", parents=[server], help="runs of your projects, newest first")
    p.add_argument("--project", help="only this project (slug)")
    p.add_argument("--status", action="append", help="only this status (repeatable)")
    p.add_argument("--tag", help="only runs with this tag")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=runs_list, func=run)

    p = runs.add_parser("create", parents=[server], help="queue a run from a preset/config")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--name", required=True)
    p.add_argument("--preset", help="a preset name (see /api/config/presets)")
    add_config_and_input_arguments(
        p, "override one config field, e.g. --set actor.optim.lr=1e-6 (repeatable)"
    )
    p.add_argument("--priority", type=int)
    p.add_argument("--tag", dest="tags", action="append", help="a tag (repeatable)")
    p.add_argument("--notes")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=runs_create, func=run)

    for name, verb in (("cancel", "cancel a run"), ("resume", "queue a failed/cancelled run")):
        p = runs.add_parser(name, parents=[server], help=verb)
        p.add_argument("run", type=int, help="run id")
        p.add_argument("--reason", default="", help="shown in the run's history")
        p.set_defaults(handler=runs_cancel if name == "cancel" else runs_resume, func=run)

    for name, verb in (
        ("delete", "delete a run that has ended, with its checkpoints and files"),
        ("archive", "hide a run that has ended from the runs list (frees nothing)"),
        ("unarchive", "list an archived run again"),
    ):
        p = runs.add_parser(name, parents=[server], help=verb)
        p.add_argument("run", type=int, help="run id")
        p.set_defaults(handler=RUN_STORAGE_HANDLERS[name], func=run)

    p = runs.add_parser(
        "watch", parents=[server], help="print status changes and metrics until the run ends"
    )
    p.add_argument("run", type=int, help="run id")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between polls")
    p.add_argument("--keys", help="comma-separated metric keys to print")
    p.set_defaults(handler=runs_watch, func=run)

    datasets = sub.add_parser("datasets", help="upload dataset versions").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    p = datasets.add_parser("upload", parents=[server], help="upload a file as a new version")
    p.add_argument("file", type=Path, help="parquet, JSONL or CSV")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--dataset", type=int, help="dataset id")
    target.add_argument("--project", help="project slug (with --name)")
    p.add_argument("--name", help="dataset name in --project; created if missing")
    p.add_argument("--message", default="", help="what changed in this version")
    p.add_argument("--format", default="auto", choices=["auto", "verl", "prompt_answer"])
    p.add_argument("--prompt-key")
    p.add_argument("--answer-key")
    p.add_argument("--data-source", help="data_source for rows without one")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=datasets_upload, func=run)

    rewards = sub.add_parser("rewards", help="push and test reward functions").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    p = rewards.add_parser("push", parents=[server], help="push a Python file as a new version")
    p.add_argument("file", type=Path, help="Python source defining the entry point")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--function", type=int, help="reward function id")
    target.add_argument("--project", help="project slug (with --name)")
    p.add_argument("--name", help="reward function name in --project; created if missing")
    p.add_argument("--entrypoint", default="compute_score")
    p.add_argument("--message", default="")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=rewards_push, func=run)

    p = rewards.add_parser("test", parents=[server], help="test-run a version in the sandbox")
    p.add_argument("function", type=int, help="reward function id")
    p.add_argument("--version", type=int, help="version number (default: the latest)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--completions",
        type=Path,
        help="JSONL file, one {solution_str, ground_truth[, data_source, extra_info]} a line",
    )
    source.add_argument("--dataset-version", type=int, help="score a dataset version's rows")
    p.add_argument("--rows", type=int, help="dataset rows to score (default 20)")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=rewards_test, func=run)

    add_eval_commands(sub, server, run)
    add_sweep_commands(sub, server, run)

    p = sub.add_parser(
        "report",
        parents=[server],
        help="download one self-contained HTML report of runs (opens offline)",
    )
    p.add_argument("runs", nargs="+", type=int, metavar="RUN", help="run ids (at most 8)")
    p.add_argument(
        "-o", "--output", type=Path, default=Path("report.html"), help="default report.html"
    )
    p.set_defaults(handler=report, func=run, action="")


def run(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run one parsed remote command; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    command = " ".join(part for part in ("rlstudio", args.command, args.action) if part)
    handler: Handler = args.handler
    try:
        return handler(args, Client(args.url, args.token), out)
    except ApiError as exc:
        print(f"{command}: {exc.status} {exc.code}: {exc.message}", file=err)
        for field, problems in _field_lines(exc.fields):
            print(f"  {field}: {problems}", file=err)
        return EXIT_UNREACHABLE if exc.status >= 500 else EXIT_REFUSED
    except ServerUnreachable as exc:
        print(f"{command}: {exc}", file=err)
        return EXIT_UNREACHABLE
    except UsageError as exc:
        print(f"{command}: {exc}", file=err)
        return EXIT_USAGE


def _field_lines(fields: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for key, value in fields.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            lines += _field_lines(value, f"{name}.")
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            lines.append((name, " ".join(value)))
        else:
            lines.append((name, json.dumps(value)))
    return lines


def _print_json(data: Any, out: IO[str]) -> None:
    print(json.dumps(data, indent=2, sort_keys=True), file=out)


# --- runs ------------------------------------------------------------------------------


def runs_list(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    runs = client.runs(args.project, status=args.status, tag=args.tag, limit=args.limit)
    if args.json:
        _print_json(runs, out)
        return EXIT_OK
    print(f"{'ID':>6}  {'STATUS':<10}  {'PRIO':>4}  {'PROJECT':<16}  NAME", file=out)
    for r in runs:
        print(
            f"{r['id']:>6}  {r['status']:<10}  {r['priority']:>4}  {r['project']:<16}  {r['name']}",
            file=out,
        )
    return EXIT_OK


def runs_create(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    created = client.create_run(
        args.project,
        args.name,
        preset=args.preset,
        config=read_tree(args.config) if args.config else None,
        overrides=args.overrides or None,
        model=args.model,
        dataset=args.dataset,
        dataset_version=args.dataset_version,
        validation=args.validation,
        validation_version=args.validation_version,
        reward_version=args.reward_version,
        priority=args.priority,
        tags=args.tags,
        notes=args.notes,
    )
    if args.json:
        _print_json(created, out)
    else:
        print(f"created run {created['id']} ({created['status']}): {created['name']}", file=out)
    return EXIT_OK


def runs_cancel(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    result = client.cancel_run(args.run, args.reason)
    print(f"run {result['id']}: {result['status']}", file=out)
    return EXIT_OK


def runs_resume(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    result = client.resume_run(args.run, args.reason)
    print(f"run {result['id']}: {result['status']}", file=out)
    return EXIT_OK


def runs_delete(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    result = client.delete_run(args.run)
    freed = result["freed_bytes"] / 1024**2
    print(f"deleted run {result['id']} ({result['name']}): {freed:.1f} MiB freed", file=out)
    return EXIT_OK


def runs_archive(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    client.archive_run(args.run)
    print(f"run {args.run}: archived", file=out)
    return EXIT_OK


def runs_unarchive(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    client.unarchive_run(args.run)
    print(f"run {args.run}: listed again", file=out)
    return EXIT_OK


RUN_STORAGE_HANDLERS = {
    "delete": runs_delete,
    "archive": runs_archive,
    "unarchive": runs_unarchive,
}


def runs_watch(
    args: argparse.Namespace,
    client: Client,
    out: IO[str],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Follow the run until it ends (studio.cli.run_watch)."""
    wanted = [k.strip() for k in args.keys.split(",") if k.strip()] if args.keys else None
    succeeded = watch_run(client, args.run, wanted, args.interval, out, sleep)
    return EXIT_OK if succeeded else EXIT_REFUSED


# --- datasets and rewards --------------------------------------------------------------


def datasets_upload(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    if not args.file.is_file():
        raise UsageError(f"no such file: {args.file}")
    dataset_id = args.dataset
    if dataset_id is None:
        if not args.name:
            raise UsageError("--project needs --name (the dataset to upload into)")
        found = client.find_dataset(args.project, args.name)
        dataset = found or client.create_dataset(args.project, args.name)
        dataset_id = dataset["id"]
    version = client.upload_dataset_version(
        dataset_id,
        args.file,
        message=args.message,
        format=args.format,
        prompt_key=args.prompt_key,
        answer_key=args.answer_key,
        data_source=args.data_source,
    )
    if args.json:
        _print_json(version, out)
    else:
        print(
            f"dataset {dataset_id} version {version['number']} (id {version['id']}): "
            f"{version['row_count']} rows, {version['data_format']}",
            file=out,
        )
    return EXIT_OK


def rewards_push(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    try:
        code = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"can't read {args.file}: {exc}") from None
    function_id = args.function
    if function_id is None:
        if not args.name:
            raise UsageError("--project needs --name (the reward function to push to)")
        found = client.find_reward_function(args.project, args.name)
        if found is None:  # a new function, with this code as version 1
            created = client.create_reward_function(
                args.project, args.name, code=code, entrypoint=args.entrypoint, message=args.message
            )
            return _pushed(args, created["id"], created["latest_version"], out)
        function_id = found["id"]
    version = client.push_reward_version(
        function_id, code, entrypoint=args.entrypoint, message=args.message
    )
    return _pushed(args, function_id, version, out)


def _pushed(args: argparse.Namespace, function_id: int, version: Any, out: IO[str]) -> int:
    if args.json:
        _print_json(version, out)
    else:
        print(
            f"reward function {function_id} version {version['number']} "
            f"(id {version['id']}, sha256 {version['code_hash'][:12]})",
            file=out,
        )
    return EXIT_OK


def rewards_test(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    number = args.version
    if number is None:
        latest = client.get(f"/api/reward-functions/{args.function}/")["latest_version"]
        if latest is None:
            raise UsageError(f"reward function {args.function} has no versions yet")
        number = latest["number"]
    completions = read_jsonl(args.completions) if args.completions else None
    report = client.test_reward_version(
        args.function,
        number,
        completions=completions,
        dataset_version=args.dataset_version,
        rows=args.rows,
    )
    if args.json:
        _print_json(report, out)
        return EXIT_OK
    for row in report["rows"]:
        score = format_number(row["score"])
        outcome = f"error: {row['error']}" if row["error"] else f"score {score}"
        print(f"row {row['index']}: {outcome}", file=out)
    s = report["summary"]
    mean = "n/a" if s["mean"] is None else format_number(s["mean"])
    print(f"{s['count']} rows, {s['failed']} failed, mean score {mean}", file=out)
    return EXIT_OK


def report(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    """Write the studio's HTML report of the runs (the API builds it: one definition)."""
    html = client.report(args.runs)
    try:
        args.output.write_bytes(html)
    except OSError as exc:
        raise UsageError(f"can't write {args.output}: {exc.strerror}") from None
    print(
        f"wrote {args.output} ({len(html) / 1e6:.1f} MB, runs {', '.join(map(str, args.runs))})",
        file=out,
    )
    return EXIT_OK
