"""The warm trainer runtime (trainer.warm) on a CUDA machine: forked runs can use the GPU.

A CUDA driver initialized before a fork is unusable in the child, so the runtime's
imports must not touch CUDA. This starts a runtime that imports torch, transformers and
the Llama model class (RLSTUDIO_WARM_PRELOAD; the trainer's own modules need the
project's environment, which a bare CUDA image may lack), then checks and prints as JSON:

- the runtime: its thread count and whether the CUDA driver (libcuda) is loaded in it,
  after its imports and again after the runs below;
- runs forked from it (`python -m trainer.warm run --module tests.trainer.warm_target
  cuda`) with CUDA_VISIBLE_DEVICES unset, "0" and "" (no GPU): what CUDA each sees after
  a matrix product on each GPU, and the job's time from start to exit;
- the same run cold (RLSTUDIO_WARM_RUNTIME=0), for the time.

    PYTHONPATH=. python bench/warm_gpu_check.py [--out results.json]

Nothing here runs in the test suite: CI has no GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.warm_runtimes import answering, remove_folder  # noqa: E402
from trainer.warm.rendezvous import DIR_ENV, ENABLE_ENV, PRELOAD_ENV  # noqa: E402

PRELOAD = "torch,transformers,transformers.models.llama.modeling_llama"
JOB = [sys.executable, "-m", "trainer.warm", "run", "--module", "tests.trainer.warm_target"]


def runtime_state(pid: int) -> dict[str, Any]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {
        "threads": len(os.listdir(f"/proc/{pid}/task")),
        "libcuda_loaded": "libcuda.so" in maps,
        "torch_loaded": "libtorch" in maps,
    }


def job(env: dict[str, str]) -> dict[str, Any]:
    began = time.monotonic()
    done = subprocess.run(
        [*JOB, "cuda", "-"], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.strip().splitlines()
    facts: dict[str, Any] = json.loads(lines[-1]) if done.returncode == 0 and lines else {}
    facts.update(
        exit=done.returncode,
        seconds=round(time.monotonic() - began, 3),
        path=done.stderr.splitlines()[0] if done.stderr else "",
    )
    if done.returncode != 0:
        facts["stderr"] = done.stderr[-3000:]
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rw-gpu-", dir="/tmp"))
    env = {**os.environ, DIR_ENV: str(folder), PRELOAD_ENV: PRELOAD, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    results: dict[str, Any] = {"python": sys.version.split()[0], "kernel": os.uname().release}
    try:
        os.close(os.pidfd_open(os.getpid()))
        results["pidfd"] = True
    except OSError as exc:  # the runtime then polls for exited children
        results["pidfd"] = repr(exc)
    try:
        began = time.monotonic()
        start = [sys.executable, "-m", "trainer.warm", "start"]
        subprocess.run(start, env=env, cwd=REPO_ROOT, check=True, timeout=300)
        results["runtime_ready_s"] = round(time.monotonic() - began, 2)
        [pong] = answering(folder)
        results["runtime_after_imports"] = runtime_state(pong["pid"])
        for name, visible in (("all", None), ("gpu0", "0"), ("none", "")):
            job_env = dict(env)
            job_env.pop("CUDA_VISIBLE_DEVICES", None)
            if visible is not None:
                job_env["CUDA_VISIBLE_DEVICES"] = visible
            results[f"warm_{name}"] = job(job_env)
        results["cold_all"] = job({**env, ENABLE_ENV: "0"})
        results["warm_all_again"] = job(env)
        results["runtime_after_runs"] = runtime_state(pong["pid"])
        log = sorted(folder.glob("*.log"))
        results["runtime_log"] = log[0].read_text()[-3000:] if log else ""
    finally:
        remove_folder(folder)
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
