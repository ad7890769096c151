"""The `speed` section's keys under their old spelling (`model.cpu_linear_kernel`,
`actor.replay_rollout_outputs`): read as the new keys, with a note."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainer.commands.cli import main
from trainer.config import ConfigError, build_config, compose


def test_old_override_keys_are_read_as_the_speed_sections_with_a_note() -> None:
    composed = compose(
        overrides=["model.cpu_linear_kernel=torch", "actor.replay_rollout_outputs=off"]
    )
    cfg = build_config(composed.tree)
    assert (cfg.speed.cpu_linear_kernel, cfg.speed.replay_rollout_outputs) == ("torch", "off")
    assert [(n.old, n.new) for n in composed.renamed] == [
        ("model.cpu_linear_kernel", "speed.cpu_linear_kernel"),
        ("actor.replay_rollout_outputs", "speed.replay_rollout_outputs"),
    ]
    assert composed.renamed[0].describe() == (
        "model.cpu_linear_kernel='torch' is read as speed.cpu_linear_kernel: the key moved "
        "to the `speed` section; spell it speed.cpu_linear_kernel"
    )


def test_old_keys_in_a_yaml_file_and_a_stored_config_move_too(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"model": {"cpu_linear_kernel": "torch"}}))
    stored = {"actor": {"replay_rollout_outputs": "off", "ppo_epochs": 1}}
    composed = compose(path, stored=stored)
    assert composed.tree["speed"] == {"cpu_linear_kernel": "torch", "replay_rollout_outputs": "off"}
    assert "cpu_linear_kernel" not in composed.tree.get("model", {})
    assert composed.tree["actor"] == {"ppo_epochs": 1}
    assert {n.old for n in composed.renamed} == {
        "model.cpu_linear_kernel",
        "actor.replay_rollout_outputs",
    }


def test_both_spellings_in_one_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    both = {"model": {"cpu_linear_kernel": "torch"}, "speed": {"cpu_linear_kernel": "auto"}}
    path.write_text(yaml.safe_dump(both))
    with pytest.raises(ConfigError, match="sets both model.cpu_linear_kernel and speed"):
        compose(path)


def test_the_check_command_prints_the_note_as_a_comment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "model.cpu_linear_kernel=torch"]) == 0
    out = capsys.readouterr().out
    assert "# model.cpu_linear_kernel='torch' is read as speed.cpu_linear_kernel" in out
    assert yaml.safe_load(out)["speed"]["cpu_linear_kernel"] == "torch"
