"""An evaluation on CPU: the demo model and a checkpoint of it answer a few arith prompts,
every response is reported with its score, and each model's scores are reported at its
step (trainer.evaluation.evaluate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.trainer.conftest import demo_config
from tests.trainer.test_training import RecordingReporter
from trainer.commands.cli import main as trainer_main
from trainer.config import RunConfig
from trainer.evaluation.evaluate import EvaluationError, evaluate
from trainer.evaluation.scores import Response, summarise

PROMPTS = 6


def eval_config(assets: Path, tmp: Path, models: list[dict[str, str]], **section) -> RunConfig:
    base = demo_config(assets, tmp, "rollout.max_new_tokens=8", preset="grpo-tiny-arith")
    tree = base.model_dump(mode="json")
    tree["evaluation"] = {"models": models, "max_prompts": PROMPTS, "batch_size": 4, **section}
    return RunConfig.model_validate(tree)


def checkpoint_of(model_dir: Path, folder: Path) -> Path:
    """A trainer checkpoint folder holding the demo model's own weights."""
    from trainer.models.loading import load_policy

    folder.mkdir(parents=True)
    torch.save(load_policy(model_dir).state_dict(), folder / "actor.pt")
    meta = {"step": 3, "config": {"model": {"path": str(model_dir), "dtype": "float32"}}}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_every_response_of_every_model_is_reported_with_its_score(demo_assets, tmp_path):
    model_dir = demo_assets / "model"
    ckpt = checkpoint_of(model_dir, tmp_path / "ckpt" / "step_3")
    models = [{"label": "base", "path": str(model_dir)}, {"label": "step 3", "path": str(ckpt)}]
    reporter = RecordingReporter()
    results = evaluate(eval_config(demo_assets, tmp_path, models), reporter)

    assert [r.label for r in results] == ["base", "step 3"]
    assert reporter.steps[0]["eval/total_responses"] == 2 * PROMPTS
    rows = reporter.samples_seen
    assert {r.split for r in rows} == {"eval"}
    assert sorted({r.step for r in rows}) == [1, 2]
    for step in (1, 2):
        mine = [r for r in rows if r.step == step]
        assert len(mine) == PROMPTS and len({r.group_id for r in mine}) == PROMPTS
        # The stored rows give the reported metrics (what the studio recomputes).
        summary = summarise(
            [
                Response(r.group_id, r.data_source, r.score, r.response_length, bool(r.error))
                for r in mine
            ],
            k=1,
            pass_threshold=1.0,
        )
        assert summary is not None
        assert reporter.steps[step]["eval/score/mean"] == pytest.approx(summary.mean_score)
        assert reporter.steps[step]["eval/pass@1"] == pytest.approx(summary.pass_at_k)
        assert reporter.steps[step]["eval/arith/mean@1"] == pytest.approx(summary.mean_at_k)
        assert all(r.score in (0.0, 1.0) or 0 <= r.score <= 1 for r in mine)
    # Greedy: the checkpoint holding the base's weights answers exactly as the base does.
    by_step = {s: [r.response for r in rows if r.step == s] for s in (1, 2)}
    assert by_step[1] == by_step[2]
    assert reporter.statuses == ["running", "succeeded"]


def test_sampling_k_responses_per_prompt_is_seeded(demo_assets, tmp_path):
    models = [{"label": "base", "path": str(demo_assets / "model")}]
    cfg = eval_config(demo_assets, tmp_path, models, greedy=False, k=3, temperature=1.0)
    first, second = RecordingReporter(), RecordingReporter()
    evaluate(cfg, first)
    evaluate(cfg, second)
    assert len(first.samples_seen) == PROMPTS * 3
    assert [r.response for r in first.samples_seen] == [r.response for r in second.samples_seen]
    assert "eval/pass@3" in first.steps[1] and "eval/mean@3" in first.steps[1]


def test_greedy_needs_k_of_one_and_a_missing_model_is_named(demo_assets, tmp_path):
    with pytest.raises(ValueError, match="evaluation.k must be 1"):
        eval_config(demo_assets, tmp_path, [], k=2)
    missing = [{"label": "gone", "path": str(tmp_path / "nowhere")}]
    with pytest.raises(EvaluationError, match="nowhere"):
        evaluate(eval_config(demo_assets, tmp_path, missing), RecordingReporter())


def test_the_cli_evaluates_when_the_config_names_models(demo_assets, tmp_path):
    out = tmp_path / "records.jsonl"
    code = trainer_main(
        [
            "run",
            "--preset",
            "grpo-tiny-arith",
            "--quiet",
            "--jsonl",
            str(out),
            f"model.path={demo_assets / 'model'}",
            f"data.train_files=[{demo_assets / 'data' / 'arith' / 'train.parquet'}]",
            f"data.val_files=[{demo_assets / 'data' / 'arith' / 'test.parquet'}]",
            f"checkpoint.dir={tmp_path / 'ckpt'}",
            f"evaluation.models=[{{label: base, path: {demo_assets / 'model'}}}]",
            "evaluation.max_prompts=2",
            "rollout.max_new_tokens=4",
        ]
    )
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    kinds = {r["type"] for r in records}
    assert "samples" in kinds and "metrics" in kinds
    assert not (tmp_path / "ckpt").exists()  # nothing was trained or saved


def test_prompt_ids_evaluate_only_the_prompts_they_name(demo_assets, tmp_path):
    models = [{"label": "base", "path": str(demo_assets / "model")}]
    every = RecordingReporter()
    evaluate(eval_config(demo_assets, tmp_path, models), every)
    asked = every.samples_seen[3]
    one = RecordingReporter()
    evaluate(eval_config(demo_assets, tmp_path, models, prompt_ids=[asked.group_id]), one)
    # One prompt, the same text and the same greedy answer as in the whole evaluation.
    assert [(r.group_id, r.prompt, r.response) for r in one.samples_seen] == [
        (asked.group_id, asked.prompt, asked.response)
    ]
    assert one.steps[0]["eval/total_responses"] == 1
    with pytest.raises(EvaluationError, match="'0:999999' names 0 prompts"):
        evaluate(eval_config(demo_assets, tmp_path, models, prompt_ids=["0:999999"]), one)


def test_a_demo_runs_last_checkpoint_is_at_least_0_2_ahead_of_its_base_model(demo_assets, tmp_path):
    """What a user does after training: a greedy, seeded evaluation of the demo model and
    the last checkpoint of a 10-step demo run on the run's validation split, every row
    reported with its score."""
    from trainer.training.loop import Trainer

    steps = 10
    train = demo_config(
        demo_assets,
        tmp_path,
        f"trainer.total_steps={steps}",
        f"checkpoint.save_every={steps}",
        "trainer.val_before_train=false",
        "trainer.test_freq=0",
        "reward.executor=inprocess",  # the arith built-in: trusted code, no sandbox needed
        preset="grpo-tiny-arith",
    )
    Trainer(train, RecordingReporter()).fit()
    [last] = sorted((tmp_path / "ckpt").glob("step_*"))
    models = [
        {"label": "base", "path": str(demo_assets / "model")},
        {"label": f"step {steps}", "path": str(last)},
    ]
    tree = train.model_dump(mode="json")
    tree["evaluation"] = {"models": models, "greedy": True, "batch_size": 64}
    reporter = RecordingReporter()
    base, trained = evaluate(RunConfig.model_validate(tree), reporter)

    gain = trained.metrics["eval/score/mean"] - base.metrics["eval/score/mean"]
    assert gain >= 0.2, (base.metrics["eval/score/mean"], trained.metrics["eval/score/mean"])
    prompts = int(reporter.steps[0]["eval/total_responses"]) // 2
    for step in (1, 2):
        rows = [r for r in reporter.samples_seen if r.step == step]
        assert len(rows) == prompts and len({r.group_id for r in rows}) == prompts
