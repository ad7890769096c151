"""`rlstudio eval ...`: evaluations against a running studio (docs/evaluate.md).

    rlstudio eval checkpoints RUN                  every checkpoint of a run + its base model
    rlstudio eval create --project P --model 3 --checkpoint 12:40 --validation-of-run 12
    rlstudio eval ask SAMPLE                       a sample's prompt, to every checkpoint
    rlstudio eval list | show ID | cancel ID | report ID [-o FILE]

Built on `studio.client` like the other remote commands (no Django); `show --wait` polls
until the evaluation ends, and exits 1 when it failed or was cancelled.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from studio.cli.input_files import UsageError
from studio.client import Client

EXIT_OK, EXIT_REFUSED = 0, 1
TERMINAL = frozenset({"succeeded", "failed", "cancelled"})


def _sampling_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", help="shown in lists")
    p.add_argument("--k", type=int, help="responses per prompt (needs --sample when > 1)")
    p.add_argument(
        "--sample",
        action="store_true",
        help="sample at --temperature instead of greedy decoding",
    )
    p.add_argument("--temperature", type=float, help="with --sample (default 1.0)")
    p.add_argument("--max-prompts", type=int, help="only the first N prompts")
    p.add_argument("--max-new-tokens", type=int, help="longest response")
    p.add_argument("--priority", type=int)
    p.add_argument("--json", action="store_true", help="print the API's JSON")


def add_eval_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    server: argparse.ArgumentParser,
    run: Callable[..., int],
) -> None:
    evals = sub.add_parser(
        "eval", help="evaluate models and checkpoints on a dataset"
    ).add_subparsers(dest="action", metavar="ACTION", required=True)

    p = evals.add_parser(
        "checkpoints",
        parents=[server],
        help="evaluate every checkpoint of a run and its base model on its validation data",
    )
    p.add_argument("run", type=int, help="run id")
    _sampling_arguments(p)
    p.set_defaults(handler=eval_checkpoints, func=run)

    p = evals.add_parser("create", parents=[server], help="evaluate chosen models")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--model", type=int, action="append", default=[], help="model id (repeatable)")
    p.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="RUN:STEP",
        help="a run's checkpoint, e.g. 12:40 (repeatable)",
    )
    prompts = p.add_mutually_exclusive_group(required=True)
    prompts.add_argument("--dataset-version", type=int, help="every row of this version")
    prompts.add_argument("--validation-of-run", type=int, help="this run's validation data")
    reward = p.add_mutually_exclusive_group()
    reward.add_argument("--reward-version", type=int, help="reward version id")
    reward.add_argument("--builtin-reward", help="a built-in reward, e.g. exact_match")
    _sampling_arguments(p)
    p.set_defaults(handler=eval_create, func=run)

    p = evals.add_parser(
        "ask",
        parents=[server],
        help="ask a training sample's prompt of every checkpoint of its run and its base model",
    )
    p.add_argument("sample", type=int, help="rollout sample id (of a training run)")
    _sampling_arguments(p)
    p.set_defaults(handler=eval_ask, func=run)

    p = evals.add_parser(
        "report",
        parents=[server],
        help="download the evaluation's self-contained HTML report (opens offline)",
    )
    p.add_argument("evaluation", type=int, help="evaluation id")
    p.add_argument("-o", "--output", type=Path, help="default report-evaluation-ID.html")
    p.set_defaults(handler=eval_report, func=run)

    p = evals.add_parser("list", parents=[server], help="evaluations of your projects")
    p.add_argument("--project", help="only this project (slug)")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=eval_list, func=run)

    p = evals.add_parser("show", parents=[server], help="an evaluation's results per model")
    p.add_argument("evaluation", type=int, help="evaluation id")
    p.add_argument("--wait", action="store_true", help="poll until it ends, then show")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between polls")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(handler=eval_show, func=run)

    p = evals.add_parser("cancel", parents=[server], help="cancel an evaluation")
    p.add_argument("evaluation", type=int, help="evaluation id")
    p.add_argument("--reason", default="", help="shown in its history")
    p.set_defaults(handler=eval_cancel, func=run)


def _sampling(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "name": args.name,
        "k": args.k,
        "greedy": not args.sample,
        "temperature": args.temperature,
        "max_prompts": args.max_prompts,
        "max_new_tokens": args.max_new_tokens,
        "priority": args.priority,
    }


def _checkpoint(text: str) -> dict[str, int]:
    run, sep, step = text.partition(":")
    if not (sep and run.isdigit() and step.isdigit()):
        raise UsageError(f"--checkpoint {text!r}: expected RUN:STEP, e.g. 12:40")
    return {"run": int(run), "step": int(step)}


def _created(created: dict[str, Any], args: argparse.Namespace, out: IO[str]) -> int:
    if args.json:
        print(json.dumps(created, indent=2, sort_keys=True), file=out)
        return EXIT_OK
    labels = ", ".join(m["label"] for m in created["models"])
    print(f"created evaluation {created['id']} ({created['status']}): {labels}", file=out)
    return EXIT_OK


def eval_checkpoints(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    return _created(client.evaluate_run_checkpoints(args.run, **_sampling(args)), args, out)


def eval_ask(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    return _created(client.ask_checkpoints(args.sample, **_sampling(args)), args, out)


def eval_report(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    """Write the studio's HTML report of the evaluation (the API builds it)."""
    html = client.evaluation_report(args.evaluation)
    output = args.output or Path(f"report-evaluation-{args.evaluation}.html")
    try:
        output.write_bytes(html)
    except OSError as exc:
        raise UsageError(f"can't write {output}: {exc.strerror}") from None
    print(f"wrote {output} ({len(html) / 1e6:.1f} MB, evaluation {args.evaluation})", file=out)
    return EXIT_OK


def eval_create(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    models: list[dict[str, int]] = [{"model": m} for m in args.model]
    models += [_checkpoint(c) for c in args.checkpoint]
    if not models:
        raise UsageError("name at least one --model or --checkpoint")
    created = client.create_evaluation(
        args.project,
        models,
        dataset_version=args.dataset_version,
        validation_of_run=args.validation_of_run,
        reward_version=args.reward_version,
        builtin_reward=args.builtin_reward,
        **_sampling(args),
    )
    return _created(created, args, out)


def eval_list(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    found = client.evaluations(args.project, limit=args.limit)
    if args.json:
        print(json.dumps(found, indent=2, sort_keys=True), file=out)
        return EXIT_OK
    print(f"{'ID':>6}  {'STATUS':<10}  {'MODELS':>6}  {'PROJECT':<16}  NAME", file=out)
    for e in found:
        print(
            f"{e['id']:>6}  {e['status']:<10}  {len(e['models']):>6}  {e['project']:<16}  "
            f"{e['name']}",
            file=out,
        )
    return EXIT_OK


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def results_table(detail: dict[str, Any]) -> list[str]:
    """One line per model: mean score, pass@k, mean@k, length, error rate."""
    k = detail["results"]["settings"]["k"]
    head = (
        f"{'MODEL':<32} {'MEAN':>7} {f'PASS@{k}':>7} {f'MEAN@{k}':>7} {'LENGTH':>7} {'ERRORS':>7}"
    )
    lines = [head]
    for m in detail["results"]["models"]:
        s = m["scores"] or {}
        lines.append(
            f"{m['label'][:32]:<32} {_cell(s.get('mean_score')):>7} {_cell(s.get('pass_at_k')):>7} "
            f"{_cell(s.get('mean_at_k')):>7} {_cell(s.get('mean_length')):>7} "
            f"{_cell(s.get('error_rate')):>7}"
        )
    return lines


def eval_show(
    args: argparse.Namespace,
    client: Client,
    out: IO[str],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    detail = client.evaluation(args.evaluation)
    while args.wait and detail["status"] not in TERMINAL:
        sleep(args.interval)
        detail = client.evaluation(args.evaluation)
    if args.json:
        print(json.dumps(detail, indent=2, sort_keys=True), file=out)
    else:
        progress = detail["results"]["progress"]
        done = f"{progress['responses']}/{progress['total'] or '?'} responses"
        print(f"evaluation {detail['id']} ({detail['status']}, {done}): {detail['name']}", file=out)
        for line in results_table(detail):
            print(line, file=out)
        if detail["status"] == "failed" and detail.get("last_error"):
            print(detail["last_error"].rstrip(), file=out)
    failed = detail["status"] in ("failed", "cancelled")
    return EXIT_REFUSED if args.wait and failed else EXIT_OK


def eval_cancel(args: argparse.Namespace, client: Client, out: IO[str]) -> int:
    result = client.cancel_evaluation(args.evaluation, args.reason)
    print(f"evaluation {result['id']}: {result['status']}", file=out)
    return EXIT_OK
