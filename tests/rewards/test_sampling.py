"""`python -m trainer sample`: completions for reward test-runs, from a model folder or a
trainer checkpoint, bounded in time, with clear errors for unusable folders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainer.commands.cli import main

PROMPTS = [
    {"messages": [{"role": "user", "content": "What is 2 + 3?"}]},
    {"messages": [{"role": "system", "content": "Answer."}, {"role": "user", "content": "7-1?"}]},
]


def write_prompts(path: Path, prompts: list[dict] = PROMPTS) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in prompts))
    return path


def sample(model: Path, tmp_path: Path, *extra: str, prompts: Path | None = None) -> int:
    prompts = prompts or write_prompts(tmp_path / "prompts.jsonl")
    argv = ["sample", "--model", str(model), "--prompts", str(prompts)]
    return main([*argv, "--out", str(tmp_path / "out.jsonl"), "--device", "cpu", *extra])


def lines(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]


def test_it_writes_n_completions_per_prompt_prompt_major(demo_assets, tmp_path):
    status = sample(demo_assets / "model", tmp_path, "--n", "3", "--max-new-tokens", "6")
    assert status == 0
    out = lines(tmp_path)
    assert [(o["prompt_index"], o["sample_index"]) for o in out] == [
        (p, k) for p in range(2) for k in range(3)
    ]
    for o in out:
        assert o["error"] == ""
        assert 1 <= o["response_length"] <= 6
        assert o["finish_reason"] in ("eos", "length", "stop")
        assert isinstance(o["text"], str)


def test_the_same_seed_gives_the_same_completions(demo_assets, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        assert sample(demo_assets / "model", folder, "--n", "2", "--seed", "7") == 0
    assert lines(first) == lines(second)


def test_a_trainer_checkpoint_is_loaded_on_its_base_model(demo_assets, tmp_path):
    import torch

    from trainer.models.loading import load_policy

    base = demo_assets / "model"
    step = tmp_path / "ckpt" / "step_00000001"
    step.mkdir(parents=True)
    config = {"model": {"path": str(base), "dtype": "float32"}}
    (step / "meta.json").write_text(json.dumps({"step": 1, "config": config}))
    model = load_policy(base)
    with torch.no_grad():  # greedy decoding now picks each step's least likely token
        model.lm_head.weight.neg_()
    torch.save(model.state_dict(), step / "actor.pt")
    greedy = ("--temperature", "0", "--max-new-tokens", "4")
    assert sample(step, tmp_path, *greedy) == 0
    from_checkpoint = lines(tmp_path)
    assert len(from_checkpoint) == 2 and all(o["error"] == "" for o in from_checkpoint)
    assert sample(base, tmp_path, *greedy) == 0
    assert [o["text"] for o in lines(tmp_path)] != [o["text"] for o in from_checkpoint]


def test_a_prompt_over_the_length_limit_gets_an_error_line(demo_assets, tmp_path):
    long_prompt = {"messages": [{"role": "user", "content": "1 + 1 = 2. " * 200}]}
    prompts = write_prompts(tmp_path / "p.jsonl", [PROMPTS[0], long_prompt])
    status = sample(
        demo_assets / "model", tmp_path, "--n", "2", "--max-prompt-length", "64", prompts=prompts
    )
    assert status == 0
    out = lines(tmp_path)
    assert [o["error"] == "" for o in out] == [True, True, False, False]
    assert "longer than 64 tokens" in out[2]["error"]


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        ("missing", "does not exist"),
        ("empty", "is not a model folder: expected a Hugging Face folder"),
        ("corrupt", "is not a state dict of tensors"),
        ("orphan", "which is no longer a model folder"),
    ],
)
def test_an_unusable_model_folder_exits_2_saying_why(
    demo_assets, tmp_path, capsys, folder, message
):
    path = tmp_path / folder
    if folder != "missing":
        path.mkdir()
    if folder in ("corrupt", "orphan"):  # a checkpoint on a real base, or on a lost one
        base = demo_assets / "model" if folder == "corrupt" else tmp_path / "gone"
        meta = {"config": {"model": {"path": str(base), "dtype": "float32"}}}
        (path / "meta.json").write_text(json.dumps(meta))
        (path / "actor.pt").write_bytes(b"not a pickle at all")
    assert sample(path, tmp_path) == 2
    assert message in capsys.readouterr().err


def test_a_bad_prompts_file_exits_2_naming_the_line(demo_assets, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(PROMPTS[0]) + "\n" + '{"messages": "hello"}\n')
    assert sample(demo_assets / "model", tmp_path, prompts=bad) == 2
    assert "bad.jsonl, line 2" in capsys.readouterr().err


def test_the_time_limit_stops_the_command_with_status_3(demo_assets, tmp_path):
    prompts = write_prompts(tmp_path / "prompts.jsonl")
    argv = [sys.executable, "-m", "trainer", "sample", "--model", str(demo_assets / "model")]
    argv += ["--prompts", str(prompts), "--out", str(tmp_path / "out.jsonl")]
    done = subprocess.run(
        [*argv, "--time-limit-s", "0.3"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3
    assert "sample error: sampling ran past its time limit of 0.3 s" in done.stderr
