"""`python -m trainer spool-send`: send what a finished or dead trainer left in its spool.

The token comes from RLSTUDIO_RUN_TOKEN only (a command line is visible in `ps`); the
run and attempt from the flags or RLSTUDIO_RUN_ID / RLSTUDIO_ATTEMPT. The spool is
locked while sending, so a live trainer's spool is never sent twice at once.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trainer.config.schema import LoggingConfig
from trainer.reporting.spool import Spool, SpoolError, SpoolPaths, read_acked, scan

if TYPE_CHECKING:
    from trainer.reporting.upload import IngestTarget

SPOOL_NAME = re.compile(r"^run-(?P<run>[A-Za-z0-9_.-]+)-attempt-(?P<attempt>\d+)\.spool$")


@dataclass(frozen=True)
class SpoolSummary:
    run_id: str
    attempt: int
    path: Path
    unsent: int  # records after the acked marker


def list_spools(spool_dir: str | Path) -> list[SpoolSummary]:
    """Every spool in `spool_dir` with its count of records not yet acknowledged."""
    found = []
    for path in sorted(Path(spool_dir).glob("run-*-attempt-*.spool")):
        match = SPOOL_NAME.match(path.name)
        if match is None:
            continue
        run_id, attempt = match["run"], int(match["attempt"])
        paths = SpoolPaths.for_attempt(spool_dir, run_id, attempt)
        acked = read_acked(paths.acked)
        with open(path, "rb") as handle:
            recovery = scan(handle.fileno(), acked)
        unsent = count_after(path, recovery.read_offset, recovery.end)
        found.append(SpoolSummary(run_id, attempt, path, unsent))
    return found


def count_after(path: Path, start: int, end: int) -> int:
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(end - start).count(b"\n")


@dataclass(frozen=True)
class DrainResult:
    sent: int
    rejected: int
    left: int
    refused: str


def send_spool(target: IngestTarget, cfg: LoggingConfig, timeout: float) -> DrainResult:
    """Send the spool of `target`'s (run, attempt) for at most `timeout` seconds."""
    from trainer.reporting.upload import IngestClient, Uploader, UploadLimits

    spool = Spool(SpoolPaths.for_attempt(cfg.spool_dir, target.run_id, target.attempt), "record")
    uploader = Uploader(
        spool,
        IngestClient(target),
        UploadLimits.from_config(cfg),
    )
    uploader.start()
    uploader.finish(timeout)
    left = spool.next_seq - 1 - spool.acked_through
    if not uploader.alive:
        spool.close()
    stats = uploader.stats
    return DrainResult(stats.records, stats.rejected, left, stats.refused)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    send = sub.add_parser(
        "spool-send",
        help="send the records a trainer left in its studio spool",
        description="Send the unsent records of one (run, attempt) spool to the studio. "
        "The token is read from RLSTUDIO_RUN_TOKEN; the URL, run and attempt from the flags "
        "or RLSTUDIO_URL / RLSTUDIO_RUN_ID / RLSTUDIO_ATTEMPT. With --list, only show "
        "what each spool in the folder still holds.",
    )
    send.add_argument("--spool-dir", default=LoggingConfig().spool_dir)
    send.add_argument("--url")
    send.add_argument("--run-id")
    send.add_argument("--attempt", type=int)
    send.add_argument("--timeout", type=float, default=60.0, help="seconds, at most")
    send.add_argument("--list", action="store_true", help="list spools and unsent counts")


def run(args: argparse.Namespace) -> int:
    from trainer.reporting.upload import IngestTarget, TargetError  # requests: only when used

    if args.list:
        for s in list_spools(args.spool_dir):
            print(f"run {s.run_id} attempt {s.attempt}: {s.unsent} unsent ({s.path})")
        return 0
    env = os.environ
    try:
        target = IngestTarget(
            url=args.url or env.get("RLSTUDIO_URL", ""),
            run_id=args.run_id or env.get("RLSTUDIO_RUN_ID", ""),
            attempt=args.attempt or int(env.get("RLSTUDIO_ATTEMPT", "0") or 0),
            token=env.get("RLSTUDIO_RUN_TOKEN", ""),
        )
        result = send_spool(target, LoggingConfig(spool_dir=args.spool_dir), args.timeout)
    except (TargetError, SpoolError, ValueError) as exc:
        print(f"spool-send: {exc}", file=sys.stderr)
        return 2
    print(f"sent {result.sent}, rejected {result.rejected}, left {result.left}")
    if result.refused:
        print(f"spool-send: the studio refused: {result.refused}", file=sys.stderr)
    return 0 if result.left == 0 else 1
