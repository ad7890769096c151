"""seed_demo: the admin, the demo project, its dataset and reward, created once."""

from __future__ import annotations

import argparse

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from studio.datasets.models import DatasetVersion
from studio.paths import demo_asset_dirs
from studio.projects.models import Membership, Project
from studio.rewards.models import RewardVersion
from trainer.commands.cli import _parser
from trainer.demo.toy_data import write_toy_dataset


@pytest.mark.django_db
def test_seed_creates_the_demo_project_once(tmp_path, monkeypatch, settings):
    monkeypatch.setenv("RLSTUDIO_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("RLSTUDIO_ADMIN_PASSWORD", "a-long-demo-password")
    settings.MEDIA_ROOT = str(tmp_path / "media")
    write_toy_dataset("arith", tmp_path / "demo-data", n_train=40, n_test=10, seed=0)

    for _ in range(2):
        call_command("seed_demo", "--skip-demo-model")

    admin = User.objects.get(username="admin")
    project = Project.objects.get(slug="demo")
    assert Membership.objects.get(project=project, user=admin).role == "owner"
    version = DatasetVersion.objects.get(dataset__project=project)
    assert version.row_count > 0
    reward = RewardVersion.objects.get(function__project=project)
    assert "def compute_score" in reward.code
    assert (tmp_path / "demo" / "grpo-tiny-arith.yaml").exists()


def test_the_demo_build_writes_every_asset_under_the_var_dir(tmp_path):
    """Each output folder of `make-demo-model` is named, under the var dir, on the command
    seed_demo and `rlstudio make-demo-model` run: left to its default, a folder lands under
    the checkout's var/, where a run launched with RLSTUDIO_VAR_DIR elsewhere never looks
    (runs.var_paths)."""
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    make_demo = commands._name_parser_map["make-demo-model"]
    outputs = {o for a in make_demo._actions for o in a.option_strings if o.endswith("-dir")}
    dirs = demo_asset_dirs(tmp_path)
    assert set(dirs) == outputs
    assert all(folder.parent == tmp_path for folder in dirs.values())
    assert dirs["--tools-model-dir"] == tmp_path / "demo-model-tools"  # grpo-tools-arith's
