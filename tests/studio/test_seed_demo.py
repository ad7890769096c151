"""seed_demo: the admin, the demo project, its dataset and reward, created once."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from studio.datasets.models import DatasetVersion
from studio.projects.models import Membership, Project
from studio.rewards.models import RewardVersion
from trainer.data.toy import write_toy_dataset


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
