"""Shared fixtures for API tests: one project with an owner, a member and a viewer,
an outsider with a project of their own, and authenticated API clients for each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from studio.projects.models import ApiToken, Membership, Project, Role


@dataclass
class World:
    project: Project
    other_project: Project
    owner: User
    member: User
    viewer: User
    outsider: User

    def client(self, who: str | None) -> APIClient:
        """An API client authenticated by a personal token (None: anonymous)."""
        client = APIClient()
        if who is not None:
            _, raw = ApiToken.issue(getattr(self, who), f"{who}-token")
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client


PASSWORD = "a-long-password-123"  # every test user's


def make_user(name: str) -> User:
    return User.objects.create_user(name, f"{name}@example.org", PASSWORD)


@pytest.fixture
def world(db: None) -> World:
    owner, member, viewer, outsider = (make_user(n) for n in ("owner", "member", "viewer", "eve"))
    project = Project.objects.create(name="Alpha", slug="alpha", created_by=owner)
    for user, role in ((owner, Role.OWNER), (member, Role.MEMBER), (viewer, Role.VIEWER)):
        Membership.objects.create(project=project, user=user, role=role)
    other = Project.objects.create(name="Other", slug="other", created_by=outsider)
    Membership.objects.create(project=other, user=outsider, role=Role.OWNER)
    return World(project, other, owner, member, viewer, outsider)


def write_model_folder(folder: Path, architecture: str = "LlamaForCausalLM") -> Path:
    """A folder the studio takes for a Hugging Face model: its config and tokenizer config
    (the studio reads only those; nothing here loads weights)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(
        json.dumps({"architectures": [architecture], "model_type": "llama"})
    )
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": "{{ x }}"})
    )
    return folder


@pytest.fixture(autouse=True)
def studio_var_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A var dir whose demo models are there, so runs can default to the demo model."""
    var = tmp_path_factory.getbasetemp() / "studio-var"
    if not (var / "demo-model" / "config.json").exists():
        write_model_folder(var / "demo-model")
        write_model_folder(var / "demo-model-tools")
        write_model_folder(var / "demo-reward-model", "LlamaForSequenceClassification")
    monkeypatch.setenv("RLSTUDIO_VAR_DIR", str(var))
    return var


@pytest.fixture
def member(world: World) -> APIClient:
    return world.client("member")


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:
    """Uploads and checkpoints in folders of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    return tmp_path


@pytest.fixture
def version(world: World, media: Path) -> Any:
    """A dataset version of 25 counting rows in the member's project."""
    from tests.studio.test_run_inputs import upload
    from tests.verl_data import counting_answers, verl_rows

    return upload(world, world.project, "counting", verl_rows(counting_answers(25)), media)


@pytest.fixture
def trained(member: APIClient, version: Any, media: Path) -> Any:
    """A training run of the member's with checkpoints at steps 2 and 4."""
    from tests.studio.test_evaluations_api import run_with_checkpoints

    return run_with_checkpoints(member, version, media)
