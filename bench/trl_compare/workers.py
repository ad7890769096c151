"""The worker subprocesses: their entry points and how the parent spawns them.

Each worker runs in a fresh process of `bench/trainer_vs_trl.py --worker KIND` and writes
its result as JSON to `--out`: `build` (a workload's model, once), `ours` and `trl` (one
training run), `eval` (greedy accuracy of trained weights) and `show-config` (both
trainers' effective configs and the versions). `spawn` starts one and reads its result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .ours import ours_config, worker_ours
from .settings import MATCHED, MODELS, ROOT, SCRIPT, WORK, WORKLOADS, paths
from .trl import trl_config, trl_kwargs, worker_trl


def worker_build(workload: str) -> dict[str, Any]:
    """Build the workload's model with the demo builder (warm start if asked), once."""
    from trainer.demo.model import DEFAULT_WARM_START, build_demo_assets

    p = paths(workload)
    spec = MODELS[WORKLOADS[workload].model]
    marker = p["model"] / "bench_build.json"
    if marker.is_file() and p["train"].is_file():
        return dict(json.loads(marker.read_text()), cached=True)
    started = time.perf_counter()
    demo_size: Any = spec.demo_size
    assets = build_demo_assets(
        p["model"],
        p["data"],
        seed=MATCHED.seed,
        warmup_steps=DEFAULT_WARM_START.steps if spec.warm_start else 0,
        size=demo_size,
        evaluate=False,
    )
    info = {
        "model": WORKLOADS[workload].model,
        "demo_size": spec.demo_size,
        "warm_start": spec.warm_start,
        "build_seconds": time.perf_counter() - started,
        "warmup_seconds": assets.warmup_seconds,
        "num_params": _num_params(p["model"]),
    }
    marker.write_text(json.dumps(info))
    return dict(info, cached=False)


def _num_params(model_dir: Path) -> int:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    return sum(p.numel() for p in model.parameters())


def worker_eval(workload: str, model_dirs: list[str]) -> dict[str, Any]:
    """Greedy accuracy (arith reward) on the arith test split for each folder's weights,
    with one evaluator: plain transformers generate, the same prompts and tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM

    from trainer.config.schema import DataConfig
    from trainer.models.loading import load_tokenizer
    from trainer.rewards.builtins import BUILTIN_REWARDS
    from trainer.training.loop import load_prompt_items

    torch.manual_seed(0)
    p = paths(workload)
    tokenizer = load_tokenizer(p["model"])
    data_cfg = DataConfig(train_files=[], val_files=[str(p["test"])], format="verl")
    items, _ = load_prompt_items(data_cfg.val_files, tokenizer, data_cfg)
    batch = tokenizer.pad(
        {"input_ids": [it.prompt_ids for it in items]}, padding=True, return_tensors="pt"
    )
    arith = BUILTIN_REWARDS["arith"]
    out: dict[str, float] = {}
    checksums: dict[str, float] = {}
    for folder in model_dirs:
        model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.float32, local_files_only=True
        ).eval()
        checksums[folder] = float(sum(p.detach().double().abs().sum() for p in model.parameters()))
        with torch.inference_mode():
            generated = model.generate(
                **batch,
                do_sample=False,
                max_new_tokens=WORKLOADS[workload].matched.max_new_tokens,
                eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id,
            )
        texts = tokenizer.batch_decode(
            generated[:, batch["input_ids"].shape[1] :], skip_special_tokens=True
        )
        scores = [
            float(arith(it.data_source, t, it.ground_truth, None))
            for it, t in zip(items, texts, strict=True)
        ]
        out[folder] = sum(scores) / len(scores)
    return {"accuracy": out, "weights_abs_sum": checksums, "num_prompts": len(items)}


def worker_show_config(name: str, steps: int) -> dict[str, Any]:
    import torch
    import transformers
    import trl

    from trainer.cpu_speed.onednn_linear import resolve_kernel

    workload = WORKLOADS[name]
    p = paths(name)
    scratch = WORK / "runs" / "show-config"
    seed = MATCHED.seed
    ours = ours_config(workload, p["model"], p["train"], scratch, steps, seed)
    theirs = trl_config(workload.matched, scratch, steps, seed)
    trl_effective = {
        k: getattr(theirs, k) for k in trl_kwargs(workload.matched, scratch, steps, seed)
    }
    trl_effective["generation_batch_size (derived)"] = theirs.generation_batch_size
    has_max_prompt_length = hasattr(theirs, "max_prompt_length")
    print(f"== {name}: ours: effective RunConfig ==")
    print(json.dumps(ours.model_dump(mode="json"), indent=1))
    print(f"== {name}: TRL: effective GRPOConfig (every field this bench sets, read back) ==")
    print(json.dumps(trl_effective, indent=1, default=str))
    print(f"TRL GRPOConfig has max_prompt_length: {has_max_prompt_length}")
    return {
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
        },
        "torch_threads": torch.get_num_threads(),
        "trl_has_max_prompt_length": has_max_prompt_length,
        "our_cpu_linear_kernel": resolve_kernel(ours.speed.cpu_linear_kernel),
    }


def worker_main(args: argparse.Namespace) -> None:
    if args.worker == "build":
        result = worker_build(args.workload)
    elif args.worker == "ours":
        result = worker_ours(args.workload, Path(args.run_dir), args.steps, args.seed)
    elif args.worker == "trl":
        result = worker_trl(args.workload, Path(args.run_dir), args.steps, args.seed)
    elif args.worker == "eval":
        result = worker_eval(args.workload, args.model_dirs)
    elif args.worker == "show-config":
        result = worker_show_config(args.workload, args.steps)
    else:
        raise SystemExit(f"unknown worker {args.worker!r}")
    Path(args.out).write_text(json.dumps(result, indent=1))


def spawn(kind: str, out: Path, log: Path | None, *extra: str, echo: bool = False) -> Any:
    cmd = [sys.executable, str(SCRIPT), "--worker", kind, "--out", str(out)]
    cmd += list(extra)
    # This checkout first; an inherited PYTHONPATH (e.g. where trl is installed) after it.
    python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=python_path, TOKENIZERS_PARALLELISM="false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("HF_DATASETS_OFFLINE", "1")
    if echo:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
    else:
        assert log is not None
        with log.open("w") as fh:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh, stderr=fh, check=False)
    if proc.returncode != 0:
        tail = log.read_text()[-4000:] if log is not None and log.is_file() else ""
        raise RuntimeError(f"worker {kind} failed (exit {proc.returncode}):\n{tail}")
    return json.loads(out.read_text())
