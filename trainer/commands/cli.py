"""`python -m trainer`: run training from a YAML config and overrides, like verl's CLI."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import yaml

from trainer.commands.sample import add_parser as add_sample_parser
from trainer.commands.sample import run as run_sample
from trainer.config import (
    VERL_KEY_MAP,
    Composed,
    ConfigError,
    ConfigRefusals,
    RunConfig,
    build_config,
    compose,
    join_problems,
    preset_names,
)
from trainer.config.overrides import split_override
from trainer.config.verl_config_files import from_the_file, read_config_file
from trainer.reporting import startup
from trainer.reporting.drain import add_parser as add_spool_send_parser
from trainer.reporting.drain import run as run_spool_send

DOCS_PATH = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m trainer",
        description="RL Studio trainer: GRPO/PPO-family post-training of language models.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="train: CONFIG.yaml (optional) then key=value overrides (ours or verl's)",
        description="Train a policy. Overrides are dotted keys, e.g. actor.optim.lr=1e-6 "
        "or verl's actor_rollout_ref.rollout.n=8.",
    )
    run.add_argument("items", nargs="*", help="[CONFIG.yaml] key=value ...")
    run.add_argument("--preset", choices=preset_names(), help="start from a named preset")
    _add_verl_config_options(run)
    run.add_argument("--jsonl", help="append every record to this JSONL file")
    run.add_argument("--quiet", action="store_true", help="no progress bar or metric lines")
    run.add_argument("--print-config", action="store_true", help="print the resolved config")
    run.add_argument(
        "--from-studio",
        action="store_true",
        help="a job the studio launched: fetch the run's config, token and reward code "
        "with the job's one-time secret (RLSTUDIO_BOOTSTRAP_FILE); items apply on top",
    )

    check = sub.add_parser("check", help="validate a config and print it resolved (YAML)")
    check.add_argument("items", nargs="*", help="[CONFIG.yaml] key=value ...")
    check.add_argument("--preset", choices=preset_names())
    _add_verl_config_options(check)

    demo = sub.add_parser(
        "make-demo-model",
        help="build the offline demo tokenizer + tiny Llama model and toy datasets",
    )
    demo.add_argument("--model-dir", default="var/demo-model")
    demo.add_argument("--data-dir", default="var/demo-data")
    demo.add_argument(
        "--reward-model-dir",
        default="var/demo-reward-model",
        help="the demo reward model (ranks correct arith answers above wrong ones)",
    )
    demo.add_argument(
        "--size",
        choices=["demo", "large"],
        default="demo",
        help="demo: hidden 256 x 4 layers; large: hidden 512 x 8 layers",
    )
    demo.add_argument(
        "--tools-model-dir",
        default="var/demo-model-tools",
        help="the demo model warm-started on calling a calculator (preset grpo-tools-arith)",
    )
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--force", action="store_true", help="rebuild even if present")

    add_sample_parser(sub)
    add_spool_send_parser(sub)
    sub.add_parser("presets", help="list the named presets")
    docs = sub.add_parser("config-docs", help="write docs/config.md from the schema")
    docs.add_argument("--out", default=str(DOCS_PATH))
    return parser


def _add_verl_config_options(parser: argparse.ArgumentParser) -> None:
    """verl's (Hydra's) way to start from a YAML file (trainer.config.verl_config_files)."""
    parser.add_argument(
        "--config-path", "-cp", help="verl: the folder of --config-name (`config`: verl's own)"
    )
    parser.add_argument(
        "--config-name", "-cn", help="verl: a trainer config YAML, read as overrides"
    )


def _resolve(
    items: list[str],
    preset: str | None,
    config_path: str | None = None,
    config_name: str | None = None,
) -> tuple[RunConfig, list[str]]:
    """The config, and its notes: the verl overrides it ignored (each reported once, with
    why) and the moved keys it read under their old spelling.

    Every problem is reported at once in one ConfigError: verl's config file refused,
    keys unknown or refused, values that cannot be translated, and what validation of
    the rest finds (each validated field named with the verl keys typed for it)."""
    path = items[0] if items and "=" not in items[0] else None
    typed = items[1:] if path else items
    verl_file = read_config_file(config_path, config_name)
    overrides = [*verl_file.overrides, *typed]  # typed keys win over the file's
    problems = list(verl_file.refused)
    try:
        composed = compose(path, overrides, preset=preset)
        tree, notes = composed.tree, config_notes(composed)
    except ConfigRefusals as exc:
        problems += exc.problems
        tree, notes = exc.tree, []
    try:
        cfg = build_config(tree)
    except ConfigError as exc:
        issues = [_with_typed_keys(i.path, i.message, overrides) for i in exc.issues]
        problems += issues or [str(exc)]
    if problems:
        raise ConfigError(join_problems(from_the_file(problems, verl_file, typed)))
    return cfg, notes


def config_notes(composed: Composed) -> list[str]:
    """One line for each key read with a note: verl's ignored keys and moved keys."""
    return [f"verl override {i.describe()}" for i in composed.ignored] + [
        r.describe() for r in composed.renamed
    ]


def _with_typed_keys(path: str, message: str, overrides: list[str]) -> str:
    """A validation problem at our `path`, naming the verl keys typed that set it."""
    typed = []
    for item in overrides:
        key = split_override(item)[0]
        if VERL_KEY_MAP.get(key) == path:
            typed.append(key)
    via = f" (set by {', '.join(dict.fromkeys(typed))})" if typed else ""
    return f"{path}: {message}{via}" if path else message


def _run(args: argparse.Namespace) -> int:
    from transformers.utils import logging as hf_logging

    from trainer.reporting.base import MultiReporter
    from trainer.reporting.console import ConsoleReporter
    from trainer.reporting.jsonl import JsonlReporter
    from trainer.reporting.lifecycle import EXIT_CANCELLED, EXIT_INTERRUPTED, run_reported
    from trainer.reporting.process_exit import exit_now
    from trainer.reporting.spool import SpoolError
    from trainer.reporting.studio import StudioReporter, TargetError, target_from_env

    hf_logging.disable_progress_bar()  # weight loading bars would drown the metric lines
    if args.from_studio:
        from trainer.reporting.bootstrap import BootstrapError, account_line, launch_from_studio

        try:
            print(account_line(), flush=True)
            launched = launch_from_studio()
        except BootstrapError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        composed = compose(overrides=args.items, base=launched.config)
        cfg, notes = build_config(composed.tree), config_notes(composed)
    else:
        cfg, notes = _resolve(args.items, args.preset, args.config_path, args.config_name)
    if args.print_config:
        print(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    reporters: list[object] = []
    if cfg.logging.console and not args.quiet:
        reporters.append(ConsoleReporter())
    jsonl = args.jsonl or cfg.logging.jsonl_path
    if jsonl:
        reporters.append(JsonlReporter(jsonl))
    try:  # launched by a studio (docs/telemetry.md): spool and upload every record
        target = target_from_env()
        if target is not None:
            studio = StudioReporter(target, cfg.logging)
            reporters.append(studio)
            startup.attach(studio.startup)  # the startup timeline's marks, now and later
    except (TargetError, SpoolError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    reporter = MultiReporter(reporters)
    for note in notes:  # in the run's log, once, before training starts
        reporter.log("warning", note)
    code = run_reported(lambda: _fit(cfg, reporter), reporter, cfg.logging)
    if code in (EXIT_CANCELLED, EXIT_INTERRUPTED):
        exit_now(code)  # reported and flushed; Ray's SIGKILL is at most 3 s away
    return code


def _fit(cfg: RunConfig, reporter: Any) -> object:
    """Train in this process, or on Ray worker groups when the run asks for several
    workers or a GPU (trainer.distributed); the workers are stopped however it ends.
    A config with `evaluation.models` evaluates them instead (trainer.evaluation.evaluate)."""
    if cfg.evaluation.models:
        from trainer.evaluation.evaluate import evaluate  # torch is imported only when it runs

        return evaluate(cfg, reporter)
    from trainer.commands.training_runtime import open_runtime
    from trainer.training.loop import Trainer  # torch is imported only when training

    startup.mark("imports_done")
    with open_runtime(cfg, reporter) as runtime:
        return Trainer(cfg, reporter, runtime).fit()


def _make_demo(args: argparse.Namespace) -> int:
    from trainer.demo.model import build_demo_assets
    from trainer.demo.reward_model import build_demo_reward_model
    from trainer.demo.tools_model import build_demo_tools_model
    from trainer.demo.tools_program import write_tools_program

    model_dir = Path(args.model_dir)
    reward_dir = Path(args.reward_model_dir)
    if (model_dir / "config.json").exists() and not args.force:
        print(f"demo model already at {model_dir} (use --force to rebuild)")
    else:
        sizes = {"demo": (256, 4), "large": (512, 8)}
        hidden, layers = sizes[args.size]
        assets = build_demo_assets(
            model_dir, args.data_dir, seed=args.seed, hidden_size=hidden, num_layers=layers
        )
        print(f"demo assets: {assets}")
    if (reward_dir / "config.json").exists() and not args.force:
        print(f"demo reward model already at {reward_dir} (use --force to rebuild)")
    else:
        print(f"demo reward model: {build_demo_reward_model(model_dir, reward_dir, args.seed)}")
    tools_dir = Path(args.tools_model_dir)
    if (tools_dir / "config.json").exists() and not args.force:
        print(f"demo tools model already at {tools_dir} (use --force to rebuild)")
    else:
        loss = build_demo_tools_model(model_dir, tools_dir, args.data_dir, seed=args.seed)
        print(f"demo tools model: {tools_dir} (warm-start loss {loss:.3f})")
    print(f"tools-program data (python tool): {write_tools_program(args.data_dir, seed=args.seed)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "check":
            cfg, notes = _resolve(args.items, args.preset, args.config_path, args.config_name)
            # As YAML comments, so the output still loads as the resolved config.
            for note in notes:
                print(f"# {note}")
            print(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
            return 0
        if args.command == "make-demo-model":
            return _make_demo(args)
        if args.command == "sample":
            return run_sample(args)
        if args.command == "spool-send":
            return run_spool_send(args)
        if args.command == "presets":
            print("\n".join(preset_names()))
            return 0
        if args.command == "config-docs":
            from trainer.config.docs import render_config_docs

            Path(args.out).write_text(render_config_docs())
            print(f"wrote {args.out}")
            return 0
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    return 1
