"""Telemetry test helpers: a project with a running-ready run, its attempt and ingest
token, record builders in the wire format of docs/telemetry.md, and an ingest client."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from rest_framework.test import APIClient

from studio.projects.models import ApiToken, Membership, Project, Role
from studio.rewards.models import RewardFunction, RewardVersion
from studio.runs import lifecycle
from studio.runs.configs import resolve, resources_of
from studio.runs.models import Run, RunAttempt, RunStatus
from studio.runs.tokens import issue_ingest_token
from tests.studio.conftest import make_user

T0 = 1_732_270_000.0


def metrics(seq: int, step: int, values: dict[str, Any] | None = None) -> dict[str, Any]:
    values = {"critic/score/mean": step * 0.1, "actor/pg_loss": -step} if values is None else values
    return {
        "seq": seq,
        "kind": "metrics",
        "time": T0 + seq,
        "data": {"step": step, "values": values},
    }


def sample(step: int, group: str = "g0", score: float | None = 1.0, **extra: Any) -> dict[str, Any]:
    return {
        "step": step,
        "group_id": group,
        "data_source": "arith",
        "prompt": f"What is {step} + 1?",
        "response": f"The answer is {step + 1}.",
        "ground_truth": str(step + 1),
        "score": score,
        "components": {"format": 1.0},
        "advantage": 0.5,
        "prompt_length": 7,
        "response_length": 5,
        "finish_reason": "stop",
        "error": "",
        "split": "train",
        "token_data": None,
        **extra,
    }


def samples(seq: int, step: int, items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    items = [sample(step), sample(step, score=0.0)] if items is None else items
    return {
        "seq": seq,
        "kind": "samples",
        "time": T0 + seq,
        "data": {"step": step, "samples": items},
    }


def log(seq: int, message: str = "hello", level: str = "info") -> dict[str, Any]:
    return {
        "seq": seq,
        "kind": "log",
        "time": T0 + seq,
        "data": {"level": level, "message": message},
    }


def status(seq: int, value: str, detail: str = "") -> dict[str, Any]:
    return {
        "seq": seq,
        "kind": "status",
        "time": T0 + seq,
        "data": {"status": value, "detail": detail},
    }


def checkpoint(seq: int, step: int) -> dict[str, Any]:
    return {
        "seq": seq,
        "kind": "checkpoint",
        "time": T0 + seq,
        "data": {"step": step, "path": f"var/checkpoints/x/step-{step}"},
    }


@dataclass
class Trainer:
    """What a trainer attempt holds: its run, attempt and raw ingest token."""

    run: Run
    attempt: RunAttempt
    token: str
    client: APIClient = field(default_factory=APIClient)

    def post(
        self, records: list[dict[str, Any]], attempt: int | None = None, run_id: int | None = None
    ) -> Any:
        body = {"attempt": self.attempt.number if attempt is None else attempt, "records": records}
        return self.post_raw(json.dumps(body).encode(), run_id)

    def post_raw(self, body: bytes, run_id: int | None = None) -> Any:
        return self.client.post(
            f"/api/ingest/runs/{self.run.pk if run_id is None else run_id}/records",
            body,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )


@dataclass
class Lab:
    project: Project
    owner: Any
    viewer: Any
    outsider: Any
    reward: RewardVersion

    def new_run(self, name: str = "r", status: RunStatus = RunStatus.STARTING) -> Run:
        resolved = resolve(preset="grpo-tiny-arith")
        run = Run.objects.create(
            project=self.project,
            name=name,
            preset="grpo-tiny-arith",
            config=resolved.tree,
            reward_version=self.reward,
            resources=resources_of(resolved.config),
            created_by=self.owner,
            status=status,
        )
        lifecycle.record_creation(run, "created", self.owner)
        return run

    def start_attempt(
        self, run: Run, number: int = 1, resume_from_step: int | None = None
    ) -> Trainer:
        attempt = RunAttempt.objects.create(
            run=run,
            number=number,
            submission_id=f"rls-{run.pk}-{number}",
            resume_from_step=resume_from_step,
        )
        return Trainer(run, attempt, issue_ingest_token(attempt))

    def user_client(self, who: str) -> APIClient:
        client = APIClient()
        _, raw = ApiToken.issue(getattr(self, who), f"{who}-token")
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client


def make_lab() -> Lab:
    owner, viewer, outsider = (make_user(n) for n in ("owner", "viewer", "eve"))
    project = Project.objects.create(name="Alpha", slug="alpha", created_by=owner)
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
    other = Project.objects.create(name="Other", slug="other", created_by=outsider)
    Membership.objects.create(project=other, user=outsider, role=Role.OWNER)
    function = RewardFunction.objects.create(project=project, name="exact", created_by=owner)
    reward = RewardVersion.objects.create(
        function=function, number=1, code="def compute_score(*a): return 0", author=owner
    )
    return Lab(project, owner, viewer, outsider, reward)


@pytest.fixture
def lab(db: None) -> Lab:
    return make_lab()


@pytest.fixture
def trainer(lab: Lab) -> Trainer:
    return lab.start_attempt(lab.new_run())
