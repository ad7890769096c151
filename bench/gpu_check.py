"""The trainer on a CUDA GPU, measured in one call: correctness, throughput, MFU.

Phases (each in its own subprocess with a time limit; results land in OUT/results.json
as each ends, so a phase that fails or runs out of time loses only itself):

- `env`: device, versions, and the bf16 matrix-product rate this GPU really reaches
  (8192^3, mean of 10 after 3 warm-ups): the "measured peak" MFU is also given against.
- `demo`: the demo GRPO preset (grpo-tiny-arith, 40 steps) on the GPU, in bf16 and in
  fp32: validation reward before and after, per-step time.
- `shape05b`: a Qwen2.5-0.5B-shaped model (24 layers, hidden 896, 14 heads / 2 KV
  heads, MLP 4864, vocabulary 151,936, tied embeddings; random weights, built here) runs
  GRPO steps in the single-process trainer in bf16: 8 prompts of ~256 tokens x 8 samples,
  512 new tokens (random weights almost never sample EOS, so every completion runs to
  the limit). Reports `timing_s/*`, tokens/s per phase, peak memory and `perf/mfu/actor`.
- `generate`: on that model and batch (64 rows, 512 new tokens, bf16), plain
  `transformers` `generate` with a static KV cache (sampling, min_new_tokens =
  max_new_tokens; no torch.compile) against our engine's device loop and its CUDA-graph
  loop, in the same process; then greedy tokens of the graph and device loops against
  the eager loop's, in fp32 with TF32 off and in bf16 (64 fixed prompts x 64 tokens).
- `fsdp`: FSDP2 (`fully_shard`, nccl, one rank) through the distributed worker class
  (`trainer.distributed.worker.PolicyWorker`, no Ray), bf16 compute with fp32 master
  weights: one update on the demo model against the non-sharded fp32 update of the same
  batch, then the update's time and MFU on the 0.5B shape.

    python bench/gpu_check.py --out OUT            # every phase, on cuda
    python bench/gpu_check.py --out OUT --phases demo,fsdp
    python bench/gpu_check.py --out OUT --smoke    # tiny shapes on CPU (checks the script)

Nothing here runs in the test suite: CI has no GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DIGIT_SHARE_REWARD = ROOT / "bench" / "digit_share_reward.py"
PHASES = ("env", "generate", "demo", "shape05b", "fsdp", "profile")  # generation first
PHASE_LIMIT_S = {
    "env": 60,
    "demo": 120,
    "shape05b": 150,
    "generate": 240,
    "fsdp": 120,
    "profile": 120,
}

# Qwen2.5-0.5B's layer sizes (its config.json); --smoke shrinks them for a CPU check.
QWEN05B = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
}
SMOKE_SHAPE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 4096,
}


def _device(args: argparse.Namespace) -> str:
    return "cpu" if args.smoke else "cuda"


def _sizes(args: argparse.Namespace) -> dict[str, int]:
    """Batch shape of the 0.5B phases: prompts, samples each, prompt and new tokens."""
    if args.smoke:
        return {"prompts": 2, "n": 4, "prompt_tokens": 32, "new_tokens": 16, "micro": 4}
    return {"prompts": 8, "n": 8, "prompt_tokens": 256, "new_tokens": 512, "micro": 16}


class Recorder:
    """Reporter protocol: keeps per-step metrics, prints warnings."""

    def __init__(self) -> None:
        self.steps: dict[int, dict[str, float]] = {}

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self.steps.setdefault(step, {}).update(values)

    def samples(self, step: int, samples: list[Any]) -> None:
        pass

    def log(self, level: str, message: str) -> None:
        if level in ("warning", "error"):
            print(f"[trainer {level}] {message}", file=sys.stderr)

    def checkpoint(self, step: int, path: str) -> None:
        pass

    def status(self, status: Any, detail: str = "") -> None:
        pass

    def progress(self, step: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _peak_bf16_flops() -> float:
    """The bf16 matrix-product rate this GPU reaches (FLOP/s)."""
    import torch

    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    _sync()
    started = time.perf_counter()
    for _ in range(10):
        a @ b
    _sync()
    return 10 * 2 * n**3 / (time.perf_counter() - started)


def phase_env(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import transformers

    info: dict[str, Any] = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": torch.version.cuda,
        "python": sys.version.split()[0],
    }
    if _device(args) == "cuda":
        props = torch.cuda.get_device_properties(0)
        info |= {
            "device": torch.cuda.get_device_name(0),
            "memory_gib": props.total_memory / 2**30,
            "multiprocessors": props.multi_processor_count,
            "measured_bf16_tflops": _peak_bf16_flops() / 1e12,
        }
    return info


# --------------------------------------------------------------------------------------
# demo: the preset learns on the GPU
# --------------------------------------------------------------------------------------


def _demo_assets(work: Path) -> Path:
    from trainer.demo.model import build_demo_assets

    root = work / "demo"
    if not (root / "model" / "config.json").is_file():
        build_demo_assets(root / "model", root / "data", seed=0, evaluate=False)
    return root


def _demo_config(root: Path, run_dir: Path, *overrides: str) -> Any:
    from trainer.config import load_config

    base = [
        f"model.path={root / 'model'}",
        f"data.train_files=[{root / 'data' / 'arith' / 'train.parquet'}]",
        f"data.val_files=[{root / 'data' / 'arith' / 'test.parquet'}]",
        f"checkpoint.dir={run_dir / 'ckpt'}",
        "checkpoint.save_hf=false",
        "logging.console=false",
        "logging.samples_per_step=0",
        "reward.executor=inprocess",  # the sandbox's isolation is not the point here
    ]
    return load_config(overrides=base + list(overrides), preset="grpo-tiny-arith")


def _val_reward(metrics: dict[str, float]) -> float | None:
    return next((v for k, v in metrics.items() if k.startswith("val-core/")), None)


def phase_demo(args: argparse.Namespace) -> dict[str, Any]:
    from trainer.training.loop import Trainer

    root = _demo_assets(args.work)
    device = _device(args)
    results: dict[str, Any] = {}
    for dtype in ("bfloat16", "float32"):
        steps = 4 if args.smoke else 40
        cfg = _demo_config(
            root,
            args.work / f"demo-{dtype}",
            f"resources.device={device}",
            f"model.dtype={dtype}",
            f"trainer.total_steps={steps}",
            f"trainer.val_every={steps // 4}",
        )
        recorder = Recorder()
        started = time.perf_counter()
        Trainer(cfg, recorder).fit()
        wall = time.perf_counter() - started
        val = {s: r for s, m in sorted(recorder.steps.items()) if (r := _val_reward(m)) is not None}
        step_times = [m["timing_s/step"] for m in recorder.steps.values() if "timing_s/step" in m]
        results[dtype] = {
            "val_reward_by_step": val,
            "val_gain": rewards[-1] - rewards[0] if (rewards := list(val.values())) else None,
            "median_step_s": statistics.median(step_times) if step_times else None,
            "wall_s": wall,
        }
        print(f"demo {dtype} on {device}: val {val}, {wall:.1f} s", flush=True)
    return results


# --------------------------------------------------------------------------------------
# The 0.5B shape
# --------------------------------------------------------------------------------------


def _shape_model(args: argparse.Namespace) -> Path:
    """A Qwen2 model of the 0.5B's layer sizes with random weights, saved in bf16, with
    the demo tokenizer (its ids are a subset of the model's vocabulary; ids it lacks
    decode to nothing, which only shortens the text the reward sees)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from trainer.demo.model import BOS, build_tokenizer

    folder = args.work / "shape05b"
    if (folder / "config.json").is_file():
        return folder
    tokenizer = build_tokenizer()
    config = Qwen2Config(
        **(SMOKE_SHAPE if args.smoke else QWEN05B),
        max_position_embeddings=32768,
        rope_theta=1_000_000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids(BOS),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    with torch.device(_device(args)):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _shape_prompts(args: argparse.Namespace, model_dir: Path) -> tuple[Path, list[list[int]]]:
    """A verl parquet of prompts of about `prompt_tokens` tokens (digits: one token
    each), and their chat-templated token ids."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    sizes = _sizes(args)
    rng = random.Random(0)
    contents = [
        "".join(rng.choice("0123456789") for _ in range(sizes["prompt_tokens"] - 12))
        for _ in range(sizes["prompts"])
    ]
    rows = [
        {
            "data_source": "digits",
            "prompt": [{"role": "user", "content": text}],
            "reward_model": {"style": "rule", "ground_truth": "0"},
            "extra_info": {"index": i},
        }
        for i, text in enumerate(contents)
    ]
    path = args.work / "shape05b-prompts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
        )
        for text in contents
    ]
    ids = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    return path, ids


def _num_params(model_dir: Path) -> int:
    """Parameters stored in the folder (tied embeddings count once, as perf/mfu counts)."""
    from safetensors import safe_open

    total = 0
    for file in model_dir.glob("*.safetensors"):
        with safe_open(str(file), "pt") as f:
            for key in f.keys():  # noqa: SIM118 (safe_open has no __iter__)
                total += math.prod(f.get_slice(key).get_shape())
    return total


def _shape_config(
    args: argparse.Namespace, model_dir: Path, data: Path, steps: int, new_tokens: int
) -> Any:
    """The 0.5B phases' run: one optimizer step per batch, the digit-share reward."""
    from trainer.config.schema import RunConfig

    sizes = _sizes(args)
    return RunConfig.model_validate(
        {
            "model": {"path": str(model_dir), "dtype": "bfloat16"},
            "data": {
                "train_files": [str(data)],
                "val_files": [],
                "format": "verl",
                "max_prompt_length": sizes["prompt_tokens"] + 64,
                "train_batch_size": sizes["prompts"],
                "shuffle": False,
            },
            "rollout": {
                "n": sizes["n"],
                "max_new_tokens": new_tokens,
                "micro_batch_size": sizes["prompts"] * sizes["n"],
            },
            "actor": {
                "ppo_mini_batch_size": sizes["prompts"],  # one optimizer step per batch
                "micro_batch_size": sizes["micro"],
            },
            "reward": {
                "function": "custom",
                "custom_path": str(DIGIT_SHARE_REWARD),
                "executor": "inprocess",
            },
            "resources": {"device": _device(args)},
            "checkpoint": {
                "dir": str(args.work / f"ckpt-{time.time_ns()}"),  # never resumes a run
                "save_every": 0,
                "resume": "never",
            },
            "logging": {"console": False, "samples_per_step": 0},
            "trainer": {"total_steps": steps, "val_every": 0, "val_before_train": False},
        }
    )


def phase_shape05b(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from trainer.training.loop import Trainer

    model_dir = _shape_model(args)
    data, prompt_ids = _shape_prompts(args, model_dir)
    sizes = _sizes(args)
    steps = 2 if args.smoke else 3
    cfg = _shape_config(args, model_dir, data, steps, sizes["new_tokens"])
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    recorder = Recorder()
    Trainer(cfg, recorder).fit()
    per_step = [recorder.steps[s] for s in sorted(recorder.steps)]
    timed = per_step[1:] or per_step  # step 1 includes warm-up (kernels, allocator)

    def median(key: str) -> float | None:
        values = [m[key] for m in timed if key in m]
        return statistics.median(values) if values else None

    rows = sizes["prompts"] * sizes["n"]
    response_tokens = (median("response_length/mean") or 0) * rows
    timing = {k.removeprefix("timing_s/"): median(k) for k in timed[0] if k.startswith("timing_s/")}
    update_tokens = median("perf/total_num_tokens") or 0
    num_params = _num_params(model_dir)
    result: dict[str, Any] = {
        "num_params": num_params,
        "batch": sizes,
        "prompt_tokens_mean": statistics.mean(len(p) for p in prompt_ids),
        "response_length_mean": median("response_length/mean"),
        "timing_s": timing,
        "generation_tokens_per_s": response_tokens / timing["gen"] if timing.get("gen") else None,
        # forward + backward: ~6 FLOPs a parameter a token, as perf/mfu counts them
        "update_tokens_per_s": update_tokens / timing["update_actor"]
        if timing.get("update_actor")
        else None,
        "step_tokens_per_s": median("perf/throughput"),
        "perf_mfu_actor": median("perf/mfu/actor"),
        "max_memory_allocated_gib": torch.cuda.max_memory_allocated() / 2**30
        if torch.cuda.is_available()
        else None,
    }
    if result["update_tokens_per_s"]:
        result["update_tflops"] = 6 * num_params * result["update_tokens_per_s"] / 1e12
    print(json.dumps(result, indent=1), flush=True)
    return result


class ProfiledStep(Recorder):
    """Profiles the second training step (the first warms up kernels and the allocator)."""

    def __init__(self, profiler: Any) -> None:
        super().__init__()
        self.profiler = profiler
        self.wall_s = 0.0
        self.started = 0.0

    def progress(self, step: int, total: int) -> None:
        if step == 1:
            _sync()
            self.profiler.start()
            self.started = time.perf_counter()
        elif step == 2 and self.started:
            _sync()
            self.profiler.stop()
            self.wall_s = time.perf_counter() - self.started


def phase_profile(args: argparse.Namespace) -> dict[str, Any]:
    """Where a 0.5B step's time goes (128 new tokens): the operators with the most host
    time and the most GPU time, and how busy the GPU was over the step."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from trainer.training.loop import Trainer

    activities = [ProfilerActivity.CPU] + ([] if args.smoke else [ProfilerActivity.CUDA])
    profiler = profile(activities=activities)
    recorder = ProfiledStep(profiler)
    model_dir = _shape_model(args)
    data, _ = _shape_prompts(args, model_dir)
    Trainer(_shape_config(args, model_dir, data, 2, 32 if args.smoke else 128), recorder).fit()
    events = profiler.key_averages()
    # Kernel rows only: an operator's row repeats the time of the kernels it launched.
    gpu_s = sum(e.self_device_time_total for e in events if e.device_type == DeviceType.CUDA) / 1e6
    step_s = recorder.steps[2]["timing_s/step"]
    result = {
        "step_wall_s": recorder.wall_s,
        "timing_s": {k: v for k, v in recorder.steps[2].items() if k.startswith("timing_s/")},
        "gpu_kernel_s": gpu_s,
        "gpu_busy_fraction": gpu_s / step_s,  # of the profiled step (profiling slows it)
        "top_host": events.table(sort_by="self_cpu_time_total", row_limit=15),
        "top_gpu": events.table(sort_by="self_device_time_total", row_limit=15),
    }
    print(result["top_host"], result["top_gpu"], sep="\n", flush=True)
    print({k: v for k, v in result.items() if not k.startswith("top_")}, flush=True)
    return result


def _hf_static_generate(model: Any, rows: list[list[int]], new_tokens: int) -> dict[str, float]:
    """Plain transformers generate with a static KV cache (no torch.compile), sampling,
    every row made to run `new_tokens` tokens: the baseline generation is measured
    against. Timed on its second call (the first warms up)."""
    import torch

    device = model.device
    width = max(len(p) for p in rows)
    pad = int(model.generation_config.pad_token_id)
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in rows], device=device)
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in rows], device=device)
    times = []
    for _ in range(2):
        _sync()
        started = time.perf_counter()
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            cache_implementation="static",
        )
        _sync()
        times.append(time.perf_counter() - started)
    tokens = (out.shape[1] - width) * len(rows)
    return {"seconds": times[-1], "tokens": tokens, "tokens_per_s": tokens / times[-1]}


def _engine_generate(
    model: Any, tokenizer: Any, prompts: list[list[int]], sampling: Any, decode: str
) -> tuple[dict[str, float], list[list[int]]]:
    """Our HF engine with one decode loop, timed on its second call; its token ids."""
    from trainer.rollout.hf import HFEngine

    engine = HFEngine(model, tokenizer, model.device, max_batch_size=64, decode=decode)  # type: ignore[arg-type]
    times = []
    for _ in range(2):
        _sync()
        started = time.perf_counter()
        completions = engine.generate(prompts, sampling)
        _sync()
        times.append(time.perf_counter() - started)
    tokens = sum(len(c.token_ids) for c in completions)
    figures = {"seconds": times[-1], "tokens": tokens, "tokens_per_s": tokens / times[-1]}
    return figures, [c.token_ids for c in completions]


def _fixed_prompts(count: int, longest: int) -> list[list[int]]:
    """`count` prompts of digit tokens, 16 to `longest` long (left padding differs per row)."""
    import random

    rng = random.Random(1)
    return [
        [rng.randrange(10, 1000) for _ in range(rng.randint(16, longest))] for _ in range(count)
    ]


def _same_rows(a: list[list[int]], b: list[list[int]]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def _logprob_gap(
    model: Any, tokenizer: Any, prompts: list[list[int]], sampling: Any, decode: str
) -> dict[str, float]:
    """The rollout's sampling log-probs against the trainer's teacher-forced ones for the
    same tokens and weights (what a rollout correction corrects): statistics of
    trainer - rollout over every response token, and the k3 estimate of
    KL(rollout || trainer)."""
    import torch

    from trainer.rollout.hf import HFEngine
    from trainer.training.batch import build_batch
    from trainer.training.logprobs import response_token_stats

    engine = HFEngine(model, tokenizer, model.device, max_batch_size=64, decode=decode)  # type: ignore[arg-type]
    completions = engine.generate(prompts, sampling)
    batch = build_batch(
        [prompts[c.prompt_index] for c in completions],
        [c.token_ids for c in completions],
        [c.prompt_index for c in completions],
        [0.0] * len(completions),
        int(tokenizer.pad_token_id),
    ).to(model.device)
    rollout = torch.zeros(batch.response_mask.shape, device=model.device)
    for row, completion in enumerate(completions):
        rollout[row, : len(completion.logprobs)] = torch.tensor(completion.logprobs)
    trainer = torch.zeros_like(rollout)
    with torch.no_grad():
        for start in range(0, batch.size, 8):  # full-vocabulary logits: 8 rows at a time
            rows = torch.arange(start, min(start + 8, batch.size), device=model.device)
            stats = response_token_stats(model, batch.select(rows), 1.0, with_entropy=False)
            trainer[rows] = stats.logprobs.float()
    mask = batch.response_mask.bool()
    diff = (trainer - rollout)[mask]
    log_ratio = (rollout - trainer)[mask]  # log q/p with q the rollout's policy
    return {
        "tokens": int(mask.sum()),
        "mean_trainer_minus_rollout": float(diff.mean()),
        "mean_abs": float(diff.abs().mean()),
        "p99_abs": float(diff.abs().quantile(0.99)),
        "max_abs": float(diff.abs().max()),
        "k3_kl_rollout_trainer": float((torch.exp(-log_ratio) + log_ratio - 1).mean()),
    }


def phase_generate(args: argparse.Namespace) -> dict[str, Any]:
    """Generation on the 0.5B shape, batch 64, in one process:
    1. bf16 throughput, sampling: transformers generate with a static cache, our engine's
       device loop, and its graph loop (trainer.rollout.static_decode);
    2. the gap between the rollout's log-probs and the trainer's for the same tokens
       (bf16, the graph loop, two prompts' samples);
    3. greedy, fp32 with TF32 off, 64 fixed prompts x 64 tokens: the graph and device
       loops' tokens against the eager loop's (every row should match);
    4. the same in bf16 (rows may part where rounding flips a near tie)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.rollout.engine import SamplingParams

    model_dir = _shape_model(args)
    _, prompt_ids = _shape_prompts(args, model_dir)
    sizes = _sizes(args)
    device = _device(args)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)

    def load(dtype: torch.dtype) -> Any:
        return (
            AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype, local_files_only=True)
            .to(device)
            .eval()
        )

    results: dict[str, Any] = {"batch": sizes}
    model = load(torch.bfloat16)
    rows = [p for p in prompt_ids for _ in range(sizes["n"])]
    results["hf_static"] = _hf_static_generate(model, rows, sizes["new_tokens"])
    print(f"hf generate (static cache): {results['hf_static']}", flush=True)
    sampling = SamplingParams(
        n=sizes["n"], temperature=1.0, max_new_tokens=sizes["new_tokens"], seed=0
    )
    for decode in ("device", "graph"):
        try:  # a loop that fails (a capture error, say) loses only its own figures
            results[decode], _ = _engine_generate(model, tokenizer, prompt_ids, sampling, decode)
        except Exception as error:  # recorded; the phase goes on
            results[decode] = {"error": f"{type(error).__name__}: {error}"}
            print(f"engine ({decode} loop) failed: {error!r}", flush=True)
            continue
        results[f"{decode}_vs_hf_static"] = (
            results[decode]["tokens_per_s"] / results["hf_static"]["tokens_per_s"]
        )
        print(f"engine ({decode} loop): {results[decode]}", flush=True)

    # The log-prob gap: two prompts' n samples, sampled by the graph loop in bf16.
    try:
        gap_sampling = SamplingParams(
            n=sizes["n"], temperature=1.0, max_new_tokens=sizes["new_tokens"], seed=1
        )
        results["logprob_gap_bf16"] = _logprob_gap(
            model, tokenizer, prompt_ids[:2], gap_sampling, "graph"
        )
    except Exception as error:  # recorded; the phase goes on
        results["logprob_gap_bf16"] = {"error": f"{type(error).__name__}: {error}"}
    print(f"log-prob gap (bf16): {results['logprob_gap_bf16']}", flush=True)

    fixed = _fixed_prompts(64, sizes["prompt_tokens"])
    greedy = SamplingParams(n=1, temperature=0.0, max_new_tokens=16 if args.smoke else 64)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        model = load(dtype)
        tokens = {}
        for decode in ("eager", "device", "graph"):
            try:
                tokens[decode] = _engine_generate(model, tokenizer, fixed, greedy, decode)[1]
            except Exception as error:  # recorded; the phase goes on
                print(f"greedy {name} ({decode} loop) failed: {error!r}", flush=True)
        results[f"greedy_{name}"] = {"rows": len(fixed), "new_tokens": greedy.max_new_tokens}
        for decode in ("device", "graph"):
            if decode in tokens and "eager" in tokens:
                same = _same_rows(tokens[decode], tokens["eager"])
                results[f"greedy_{name}"][f"{decode}_rows_same_as_eager"] = same
        print(f"greedy {name}: {results[f'greedy_{name}']}", flush=True)
        del model
    if torch.cuda.is_available():
        results["max_memory_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return results


# --------------------------------------------------------------------------------------
# FSDP2, one rank, nccl
# --------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _random_batch(vocab: int, pad: int, sizes: dict[str, int], seed: int) -> Any:
    import torch

    from trainer.training.batch import build_batch

    g = torch.Generator().manual_seed(seed)
    prompts, responses, groups = [], [], []
    for group in range(sizes["prompts"]):
        prompt = torch.randint(5, vocab, (sizes["prompt_tokens"],), generator=g).tolist()
        for _ in range(sizes["n"]):
            prompts.append(prompt)
            responses.append(torch.randint(5, vocab, (sizes["new_tokens"],), generator=g).tolist())
            groups.append(group)
    batch = build_batch(prompts, responses, groups, [0.0] * len(prompts), pad)
    batch.advantages = torch.randn(batch.response_mask.shape, generator=g) * batch.response_mask
    return batch


def _worker_config(model_dir: Path, work: Path, micro: int, gpus: float) -> dict[str, Any]:
    return {
        "model": {"path": str(model_dir), "dtype": "float32"},  # fp32 master weights
        "data": {"train_files": [], "val_files": []},
        "actor": {"micro_batch_size": micro, "optim": {"lr": 1e-4}},
        "reward": {"executor": "inprocess"},
        "resources": {"num_workers": 1, "gpus_per_worker": gpus},
        "checkpoint": {"dir": str(work / "fsdp-ckpt")},
        "logging": {"console": False},
    }


def phase_fsdp(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    import trainer.distributed.worker as worker_module
    from trainer.config.schema import RunConfig
    from trainer.distributed import fsdp
    from trainer.distributed.worker import PolicyWorker
    from trainer.models.loading import load_policy
    from trainer.training.optim import build_optimizer
    from trainer.training.update import update_actor

    # Ray is not installed on the GPU machine; setup's WorkerInfo (rank, pid, node address
    # for the controller's logs) is the one part of the worker that asks it anything.
    worker_module.worker_info = lambda *_: None  # type: ignore[assignment]
    gpus = 0.0 if args.smoke else 1.0
    device = torch.device(_device(args))
    results: dict[str, Any] = {}

    # 1. The demo model: one sharded update (bf16 compute, fp32 master) against the
    # plain fp32 update of the same batch.
    root = _demo_assets(args.work)
    small = {"prompts": 4, "n": 4, "prompt_tokens": 24, "new_tokens": 40, "micro": 8}
    cfg_dict = _worker_config(root / "model", args.work, small["micro"], gpus)
    worker = PolicyWorker(cfg_dict, 0, 1)
    worker.setup("127.0.0.1", _free_port())
    cfg = RunConfig.model_validate(cfg_dict)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(root / "model"), local_files_only=True)
    batch = _random_batch(len(tokenizer), int(tokenizer.pad_token_id), small, seed=1)
    before = {k: v.float().cpu() for k, v in fsdp.full_model_state(worker.actor).items()}
    rows = small["prompts"] * small["n"]
    generator = torch.Generator().manual_seed(0)  # both updates shuffle rows alike
    state = generator.get_state()
    sharded = worker.update_actor(batch, 1.0, rows, 1.0, state).metrics
    after_sharded = {k: v.float().cpu() for k, v in fsdp.full_model_state(worker.actor).items()}

    torch.manual_seed(cfg.trainer.seed)
    plain = load_policy(root / "model", "float32", device)
    optimizer = build_optimizer(plain, cfg.actor.optim)
    reference = update_actor(
        plain, optimizer, batch.to(device), cfg.actor, 1.0, rows, 1.0, generator
    )
    after_plain = {k: v.float().cpu() for k, v in plain.state_dict().items()}
    moved = [(after_sharded[k] - before[k], after_plain[k] - before[k]) for k in after_plain]
    agree = sum(int((torch.sign(a) == torch.sign(b)).sum()) for a, b in moved)
    total = sum(b.numel() for _, b in moved)
    max_diff = max(float((a - b).abs().max()) for a, b in moved)
    results["demo_update"] = {
        "sharded": {k: sharded[k] for k in ("actor/pg_loss", "actor/grad_norm", "actor/entropy")},
        "plain_fp32": {
            k: reference[k] for k in ("actor/pg_loss", "actor/grad_norm", "actor/entropy")
        },
        "update_sign_agreement": agree / total,
        "max_abs_weight_diff": max_diff,
        "lr": cfg.actor.optim.lr,
    }
    print(json.dumps(results, indent=1), flush=True)
    del worker, plain, optimizer
    dist.destroy_process_group()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()

    # 2. The 0.5B shape: the sharded update's time and MFU (bf16 compute, fp32 master).
    model_dir = _shape_model(args)
    sizes = _sizes(args)
    worker = PolicyWorker(_worker_config(model_dir, args.work, sizes["micro"], gpus), 0, 1)
    worker.setup("127.0.0.1", _free_port())
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    vocab = int(worker.actor.config.vocab_size)
    rows = sizes["prompts"] * sizes["n"]
    times = []
    for seed in range(3):  # the first includes warm-up
        batch = _random_batch(vocab, int(tokenizer.pad_token_id), sizes, seed)
        _sync()
        started = time.perf_counter()
        worker.update_actor(batch, 1.0, rows, 1.0, state)
        _sync()
        times.append(time.perf_counter() - started)
    tokens = float(batch.attention_mask.sum())
    seconds = statistics.median(times[1:])
    flops = 6 * _num_params(model_dir) * tokens / seconds
    results["shape05b_update"] = {
        "tokens": tokens,
        "seconds": times,
        "tflops": flops / 1e12,
        "memory": worker.memory(),
    }
    if torch.cuda.is_available():
        results["shape05b_update"]["max_memory_allocated_gib"] = (
            torch.cuda.max_memory_allocated() / 2**30
        )
    dist.destroy_process_group()
    print(json.dumps(results, indent=1), flush=True)
    return results


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------

PHASE_FUNCTIONS = {
    "env": phase_env,
    "demo": phase_demo,
    "shape05b": phase_shape05b,
    "generate": phase_generate,
    "fsdp": phase_fsdp,
    "profile": phase_profile,
}


def _with_mfu(results: dict[str, Any]) -> dict[str, Any]:
    """MFU of the update against the spec sheet's dense bf16 peak (trainer.training.state's
    PEAK_FLOPS, as perf/mfu) and against the rate this GPU measured in `env`."""
    from trainer.training.state import PEAK_FLOPS

    env = results.get("env", {}).get("result", {})
    name = env.get("device", "")
    spec = next((peak for key, peak in PEAK_FLOPS.items() if key in name), None)
    measured = env.get("measured_bf16_tflops")
    summary: dict[str, Any] = {"spec_bf16_tflops": spec / 1e12 if spec else None}
    for phase, key in (("shape05b", "update_tflops"), ("fsdp", "shape05b_update")):
        value = ((results.get(phase) or {}).get("result") or {}).get(key)
        tflops = value.get("tflops") if isinstance(value, dict) else value
        if tflops:
            summary[f"{phase}_mfu_spec"] = tflops * 1e12 / spec if spec else None
            summary[f"{phase}_mfu_measured"] = tflops / measured if measured else None
    return summary


def _summary(results: dict[str, Any]) -> dict[str, Any]:
    """The issue's figures, one key each (None until the phase that gives it has run)."""

    def result(phase: str) -> dict[str, Any]:
        return (results.get(phase) or {}).get("result") or {}

    demo = result("demo")
    bf16, fp32 = demo.get("bfloat16") or {}, demo.get("float32") or {}
    step_ratio = val_gap = None
    if bf16.get("median_step_s") and fp32.get("median_step_s"):
        step_ratio = bf16["median_step_s"] / fp32["median_step_s"]
    if bf16.get("val_gain") is not None and fp32.get("val_gain") is not None:
        val_gap = bf16["val_gain"] - fp32["val_gain"]
    return {
        "device": result("env").get("device"),
        "generation_vs_hf_static": result("generate").get("graph_vs_hf_static"),
        "mfu_actor": result("shape05b").get("perf_mfu_actor"),
        "mfu_actor_fsdp": results.get("mfu", {}).get("fsdp_mfu_spec"),
        "bf16_over_fp32_step_time": step_ratio,
        "bf16_minus_fp32_val_gain": val_gap,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "bench" / "gpu_check")
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--smoke", action="store_true", help="tiny shapes on CPU")
    parser.add_argument("--phase", help=argparse.SUPPRESS)  # one phase, in a subprocess
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.phase:
        result = PHASE_FUNCTIONS[args.phase](args)
        (args.out / f"{args.phase}.json").write_text(json.dumps(result, indent=1))
        return 0
    results: dict[str, Any] = {}
    for phase in args.phases.split(","):
        command = [sys.executable, __file__, "--out", str(args.out), "--work", str(args.work)]
        command += ["--phase", phase] + (["--smoke"] if args.smoke else [])
        started = time.perf_counter()
        print(f"=== {phase}", flush=True)
        try:
            code = subprocess.run(command, timeout=PHASE_LIMIT_S[phase], env=os.environ).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        file = args.out / f"{phase}.json"
        results[phase] = {
            "exit": code,
            "seconds": time.perf_counter() - started,
            "result": json.loads(file.read_text()) if file.is_file() else None,
        }
        results["mfu"] = _with_mfu(results)
        (args.out / "results.json").write_text(json.dumps(results, indent=1))
        (args.out / "summary.json").write_text(json.dumps(_summary(results), indent=1))
        print(f"=== {phase}: exit {code}, {results[phase]['seconds']:.0f} s", flush=True)
    print(json.dumps(_summary(results), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
