"""Completions for a test-run, sampled by `python -m trainer sample` in a subprocess.

The studio and its workers never import torch (see the import contracts), so the
trainer's own CLI loads the model and generates, the same way training does. The child
gets a clean environment (no database URL, no secret key), runs in its own process
group, and is bounded twice: it exits by itself at `time_limit_s`, and is killed with
everything it started `KILL_GRACE_S` later if it has not.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from studio.paths import REPO_ROOT
from studio.rewards.errors import TestRunError
from trainer.config.sampling import SamplingParams

KILL_GRACE_S = 10.0
POLL_S = 0.5  # how often progress is read from the child's output
STDERR_TAIL_BYTES = 8000
# The `trainer sample` command's exit statuses (not imported: that module loads torch).
EXIT_BAD_INPUT = 2
EXIT_TIME_LIMIT = 3


@dataclass(frozen=True)
class SampledCompletion:
    prompt_index: int
    sample_index: int
    text: str
    finish_reason: str
    error: str  # the prompt was not generated (too long); empty otherwise


def child_env(home: str) -> dict[str, str]:
    """What the sampling child sees: nothing of the studio's own environment (secrets)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",  # nothing is downloaded, ever
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": os.path.join(home, "hf"),
        "TOKENIZERS_PARALLELISM": "false",
    }


def sample_completions(
    model_dir: str,
    prompts: Sequence[list[dict[str, str]]],
    settings: SamplingParams,
    *,
    time_limit_s: float,
    on_progress: Callable[[int, int], None],
) -> list[SampledCompletion]:
    """`settings.n` completions per prompt, prompt-major. Raises `TestRunError` when the
    model can't be used, sampling fails, or it runs past `time_limit_s`."""
    total = len(prompts) * settings.n
    with tempfile.TemporaryDirectory(prefix="rlstudio-sample-") as tmp:
        prompts_path, out_path, log_path = (Path(tmp) / n for n in ("in.jsonl", "out", "log"))
        with prompts_path.open("w", encoding="utf-8") as handle:
            for messages in prompts:
                handle.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
        # `--model=PATH` in one word: a path starting with "-" can't pass for an option.
        argv = [sys.executable, "-m", "trainer", "sample", f"--model={model_dir}"]
        argv += ["--prompts", str(prompts_path), "--out", str(out_path)]
        argv += ["--n", str(settings.n), "--temperature", str(settings.temperature)]
        argv += ["--top-p", str(settings.top_p), "--top-k", str(settings.top_k)]
        argv += ["--max-new-tokens", str(settings.max_new_tokens)]
        if settings.seed is not None:
            argv += ["--seed", str(settings.seed)]
        argv += ["--time-limit-s", str(time_limit_s)]
        with log_path.open("wb") as log:
            child = subprocess.Popen(
                argv,
                cwd=REPO_ROOT,  # relative model paths in checkpoints are the trainer's
                env=child_env(tmp),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as one
            )
        try:
            status = _wait(child, out_path, total, time_limit_s, on_progress)
        finally:
            _kill_group(child)
        if status != 0:
            raise _failure(status, _tail(log_path))
        completions = _read_completions(out_path)
    if len(completions) != total:
        raise TestRunError(
            "sampling_failed", f"sampling wrote {len(completions)} completions, expected {total}"
        )
    on_progress(total, total)
    return completions


def _wait(
    child: subprocess.Popen[bytes],
    out_path: Path,
    total: int,
    time_limit_s: float,
    on_progress: Callable[[int, int], None],
) -> int:
    deadline = time.monotonic() + time_limit_s + KILL_GRACE_S
    reported = -1
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return child.wait(timeout=POLL_S)
        done = _count_lines(out_path)
        if done != reported:
            on_progress(done, total)
            reported = done
        if time.monotonic() > deadline:
            raise TestRunError(
                "sampling_time_limit",
                f"sampling ran past its time limit of {time_limit_s:g} s and was killed",
            )


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=10)


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def _tail(path: Path) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - STDERR_TAIL_BYTES))
        return handle.read().decode("utf-8", errors="replace")


def _failure(status: int, log: str) -> TestRunError:
    """The child's own `sample error:` line, or the end of its traceback."""
    reasons = [r.strip() for r in re.findall(r"sample error: (.*)", log)]
    if status == EXIT_TIME_LIMIT:
        return TestRunError("sampling_time_limit", reasons[-1] if reasons else "time limit")
    if status == EXIT_BAD_INPUT and reasons:
        return TestRunError("model_unavailable", reasons[-1])
    lines = [line for line in log.splitlines() if line.strip()]
    last = lines[-1].strip() if lines else "no output"
    return TestRunError("sampling_failed", f"sampling failed (exit status {status}): {last}")


def _read_completions(path: Path) -> list[SampledCompletion]:
    completions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        completions.append(
            SampledCompletion(
                prompt_index=int(item["prompt_index"]),
                sample_index=int(item["sample_index"]),
                text=str(item["text"]),
                finish_reason=str(item["finish_reason"]),
                error=str(item["error"]),
            )
        )
    return completions
