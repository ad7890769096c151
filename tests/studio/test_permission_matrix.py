"""The permission matrix: every API operation x every kind of caller gets the expected
status, and no list or detail shows another project's objects.

Callers: the project's owner, member and viewer; an outsider (owner of another project);
an anonymous caller; and a trainer's ingest token for a run in the *other* project, which
must not authenticate as anyone here.

The operations are read from the OpenAPI schema: an /api/ operation without a row in
`MATRIX` fails `test_every_api_operation_has_a_row_in_the_matrix`, so a new endpoint can't
be added without deciding who may call it.

Both projects are seeded once per module (datasets with a parquet version, reward
functions with a version, runs, metric points, samples, labels, audit events, tokens);
each case runs in a savepoint that is rolled back, so destructive rows (DELETE a
project, cancel a run) never affect the next case.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from studio.core import login_limits
from studio.datasets.models import Dataset, DatasetVersion
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from studio.model_registry.locations import offered_folders
from studio.model_registry.models import ModelKind, ModelRole, RegisteredModel
from studio.playground import store as playground
from studio.projects.models import (
    ApiToken,
    AuditEvent,
    Invitation,
    Membership,
    Project,
    Role,
    hash_token,
)
from studio.rewards.lifecycle import Params
from studio.rewards.models import RewardFunction, RewardTestRun, RewardVersion
from studio.runs import lifecycle
from studio.runs.configs import resolve, resources_of
from studio.runs.models import Checkpoint, IngestToken, Run, RunAttempt, RunKind, RunStatus
from studio.sweeps.models import Sweep, SweepTrial
from studio.telemetry.models import LogLine, MetricPoint, RolloutSample, RunAlert, SampleLabel
from tests.studio.conftest import PASSWORD, make_user
from tests.verl_data import counting_answers, verl_parquet

SWEEP_SPACE = [{"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True}]
PRINCIPALS = ("owner", "member", "viewer", "outsider", "anonymous", "ingest")
PRESET = "grpo-tiny-arith"
SEEDED_TURNS = [  # as ingest stores them (records.Turn, only the keys a turn had)
    {"role": "assistant", "content": "", "tool_calls": [{"name": "calc", "arguments": {"x": 1}}]},
    {"role": "tool", "content": "", "name": "calc", "error": "boom"},
    {"role": "assistant", "content": "The answer is 1.", "reward": 1.0},
]
EXACT = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
    "    return float(solution_str.strip() == str(ground_truth).strip())\n"
)


# --- the seeded world ------------------------------------------------------------------


@dataclass
class ProjectObjects:
    """One project and an object of every kind in it (ids, for URLs and leak checks)."""

    slug: str
    dataset: int
    scratch_dataset: int  # no versions used by runs: deletable
    dataset_version: int  # the version's id (runs and reward tests refer to it by id)
    function: int
    scratch_function: int
    reward_version: int
    reward_test_run: int
    run: int  # queued, uses dataset_version and reward_version; has metrics and samples
    cancelled_run: int  # resumable
    sample: int
    checkpoint: int  # in an object store: the studio can't serve it (409)
    model: int  # the demo model, which the runs train
    evaluation: int  # a queued evaluation of the demo model on the dataset version
    sweep: int  # running, over the learning rate, its one trial the queued run
    invitation: int  # to "newcomer", who is no principal: everyone here is someone else
    exchange: str  # a playground exchange (one message to the demo model), already ended
    ids: dict[str, set[Any]] = field(default_factory=dict)  # kind -> ids, for leak checks


@dataclass
class Seed:
    users: dict[str, User]
    tokens: dict[str, str]  # principal -> raw Authorization token
    alpha: ProjectObjects
    other: ProjectObjects
    member_spare_token: int  # a token of the member's own, to revoke

    def client(self, principal: str) -> APIClient:
        client = APIClient()
        if principal in self.tokens:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.tokens[principal]}")
        return client

    def visible(self, principal: str) -> ProjectObjects | None:
        """The project whose objects this principal may see (None: none)."""
        if principal in ("owner", "member", "viewer"):
            return self.alpha
        return self.other if principal == "outsider" else None


def seed_project(project: Project, owner: User, media: Path, parquet: bytes) -> ProjectObjects:
    source = media.parent / f"{project.slug}.parquet"
    source.write_bytes(parquet)
    dataset = Dataset.objects.create(project=project, name="arith", created_by=owner)
    scratch_dataset = Dataset.objects.create(project=project, name="scratch", created_by=owner)
    version = add_version(
        dataset, source, "arith.parquet", ColumnMapping(), message="seed", user=owner
    )
    add_version(scratch_dataset, source, "arith.parquet", ColumnMapping(), message="", user=owner)
    function = RewardFunction.objects.create(project=project, name="exact", created_by=owner)
    scratch_function = RewardFunction.objects.create(
        project=project, name="scratch", created_by=owner
    )
    reward = RewardVersion.objects.create(
        function=function, number=1, code=EXACT, code_hash="0" * 64, author=owner
    )
    RewardVersion.objects.create(
        function=scratch_function, number=1, code=EXACT, code_hash="0" * 64, author=owner
    )
    resolved = resolve(preset=PRESET)
    # Recorded directly: the folder is checked when a request uses it (the test's var dir).
    model = RegisteredModel.objects.create(
        project=project,
        name="demo-model",
        kind=ModelKind.DEMO,
        role=ModelRole.POLICY,
        relative_path="demo-model",
        created_by=owner,
    )
    runs = [
        Run.objects.create(
            project=project,
            name=name,
            preset=PRESET,
            config=resolved.tree,
            model=model,
            validation="held_out",
            dataset_version=version,
            reward_version=reward,
            resources=resources_of(resolved.config),
            created_by=owner,
        )
        for name in ("queued", "cancelled")
    ]
    evaluation = Run.objects.create(
        project=project,
        kind=RunKind.EVALUATION,
        name="evaluation",
        config=resolved.tree,
        model=model,
        validation="dataset_version",
        dataset_version=version,
        validation_version=version,
        resources=resources_of(resolved.config),
        created_by=owner,
    )
    for run in [*runs, evaluation]:
        lifecycle.record_creation(run, "created", owner)
    sweep = Sweep.objects.create(
        project=project,
        name="sweep",
        preset=PRESET,
        base_request={"inputs": {"dataset_version": version.pk}},
        base_config=resolved.tree,
        space=SWEEP_SPACE,
        method="random",
        max_trials=4,
        pruner={"kind": "none"},
        created_by=owner,
    )
    SweepTrial.objects.create(sweep=sweep, number=0, run=runs[0], params={"actor.optim.lr": 1e-4})
    test_run = RewardTestRun.objects.create(
        version=reward,
        source="references",
        dataset_version=version,
        params=Params().to_json(),
        created_by=owner,
    )
    lifecycle.cancel(runs[1].pk, owner, "seed")
    run = runs[0]
    MetricPoint.objects.bulk_create(
        MetricPoint(run=run, attempt=1, seq=step, step=step, key=key, value=step * 0.1)
        for step in range(1, 6)
        for key in ("loss", "reward/mean")
    )
    samples = [
        RolloutSample.objects.create(
            run=run,
            attempt=1,
            seq=i,
            position=0,
            step=1,
            group_id="g0",
            data_source="arith",
            prompt=f"What is {i} + 1?",
            response=f"The answer is {i + 1}.",
            ground_truth=str(i + 1),
            score=1.0,
            # The first is a multi-turn episode, so the schema checks cover its turns.
            turns=SEEDED_TURNS if i == 0 else None,
            num_turns=len(SEEDED_TURNS) if i == 0 else 0,
        )
        for i in range(3)
    ]
    log = LogLine.objects.create(run=run, attempt=1, seq=0, level="WARNING", message="seeded")
    alert = RunAlert.objects.create(
        run=run, attempt=1, seq=5, step=5, kind="reward_errors", severity="warning", message="!"
    )
    checkpoint = Checkpoint.objects.create(run=run, attempt=1, step=5, uri="s3://b/step-5")
    for user in Membership.objects.filter(project=project).exclude(role=Role.VIEWER):
        SampleLabel.objects.create(sample=samples[0], label="flag", author=user.user)
    invitation = Invitation.objects.create(project=project, username="newcomer", invited_by=owner)
    events = [
        AuditEvent.objects.create(
            project=project, actor=owner, action="run.create", object_type="run", object_id=r.pk
        )
        for r in runs
    ]
    exchange = secrets.token_hex(16)
    playground.create_exchange(exchange, project.pk, owner.pk, [secrets.token_hex(16)])
    playground.emit(exchange, "end", {})
    return ProjectObjects(
        slug=project.slug,
        dataset=dataset.pk,
        scratch_dataset=scratch_dataset.pk,
        dataset_version=version.pk,
        function=function.pk,
        scratch_function=scratch_function.pk,
        reward_version=reward.pk,
        reward_test_run=test_run.pk,
        run=run.pk,
        cancelled_run=runs[1].pk,
        sample=samples[0].pk,
        checkpoint=checkpoint.pk,
        model=model.pk,
        evaluation=evaluation.pk,
        sweep=sweep.pk,
        invitation=invitation.pk,
        exchange=exchange,
        ids={
            "project": {project.slug},
            "dataset": {dataset.pk, scratch_dataset.pk},
            "dataset_version": set(
                DatasetVersion.objects.filter(dataset__project=project).values_list("id", flat=True)
            ),
            "reward_function": {function.pk, scratch_function.pk},
            "reward_version": set(
                RewardVersion.objects.filter(function__project=project).values_list("id", flat=True)
            ),
            "reward_test_run": {test_run.pk},
            "run": {r.pk for r in runs},
            "sample": {s.pk for s in samples},
            "alert": {alert.pk},
            "log": {log.pk},
            "checkpoint": {checkpoint.pk},
            "model": {model.pk},
            "evaluation": {evaluation.pk},
            "sweep": {sweep.pk},
            "invitation": {invitation.pk},
            "audit": {e.pk for e in events},
            "member": set(project.memberships.values_list("user__username", flat=True)),
        },
    )


def build_seed(media: Path) -> Seed:
    users = {
        name: make_user(username)
        for name, username in (
            ("owner", "owner"),
            ("member", "member"),
            ("viewer", "viewer"),
            ("outsider", "eve"),
        )
    }
    make_user("newcomer")
    alpha = Project.objects.create(name="Alpha", slug="alpha", created_by=users["owner"])
    for name, role in (("owner", Role.OWNER), ("member", Role.MEMBER), ("viewer", Role.VIEWER)):
        Membership.objects.create(project=alpha, user=users[name], role=role)
    other = Project.objects.create(name="Other", slug="other", created_by=users["outsider"])
    Membership.objects.create(project=other, user=users["outsider"], role=Role.OWNER)
    parquet = verl_parquet(counting_answers(4))
    objects = {
        "alpha": seed_project(alpha, users["owner"], media, parquet),
        "other": seed_project(other, users["outsider"], media, parquet),
    }
    tokens = {name: ApiToken.issue(user, f"{name}-token")[1] for name, user in users.items()}
    spare, _ = ApiToken.issue(users["member"], "spare")
    # The trainer's token of a run in the other project, as the ingest issue will issue it.
    other_run = Run.objects.get(pk=objects["other"].run)
    attempt = RunAttempt.objects.create(run=other_run, number=1, submission_id="rls-other-1")
    raw_ingest = "rli_" + secrets.token_urlsafe(32)
    IngestToken.objects.create(run=other_run, attempt=attempt, token_hash=hash_token(raw_ingest))
    tokens["ingest"] = raw_ingest
    return Seed(users, tokens, objects["alpha"], objects["other"], spare.pk)


@pytest.fixture(scope="module")
def seed(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seed]:
    """Built once per module in an outer transaction that is rolled back at the end;
    each test's `db` fixture nests a savepoint inside it."""
    root = tmp_path_factory.mktemp("matrix")
    (root / "media").mkdir()
    (root / "uploading").mkdir()
    with (
        override_settings(
            MEDIA_ROOT=str(root / "media"),
            FILE_UPLOAD_TEMP_DIR=str(root / "uploading"),
            RAY_ADDRESS="",  # /api/health: Ray not configured, not failing
        ),
        django_db_blocker.unblock(),
        transaction.atomic(),
    ):
        yield build_seed(root / "media")
        transaction.set_rollback(True)


@pytest.fixture(autouse=True)
def fresh_throttles(django_db_setup: None) -> Iterator[None]:
    login_limits.forget_all()  # the login limits count in Redis, across tests
    yield
    login_limits.forget_all()


# --- the matrix ------------------------------------------------------------------------

Body = Callable[[ProjectObjects], dict[str, Any]]


def expect(
    owner: int, member: int, viewer: int, outsider: int, anonymous: int = 401
) -> dict[str, int]:
    # An ingest token authenticates as nobody: whatever anonymous gets, it gets.
    return {
        "owner": owner,
        "member": member,
        "viewer": viewer,
        "outsider": outsider,
        "anonymous": anonymous,
        "ingest": anonymous,
    }


def read() -> dict[str, int]:
    """Objects of a project: any role reads; outsiders can't tell it exists."""
    return expect(200, 200, 200, 404)


def listing() -> dict[str, int]:
    """Lists and project-free reads: every signed-in user, scoped to their projects."""
    return expect(200, 200, 200, 200)


def write(ok: int = 200) -> dict[str, int]:
    return expect(ok, ok, 403, 404)


def owner_only(ok: int) -> dict[str, int]:
    return expect(ok, 403, 403, 404)


def signed_in(ok: int) -> dict[str, int]:
    return expect(ok, ok, ok, ok)


def ingest_token_of_this_run() -> dict[str, int]:
    """The trainer's endpoints: no user authenticates there (401), and the ingest token of
    another run (the "ingest" caller's run is in the other project) is refused (403)."""
    return {**expect(401, 401, 401, 401), "ingest": 403}


@dataclass(frozen=True)
class Op:
    """One operation's request, built from a project's objects, and who gets what."""

    expected: dict[str, int]
    path: str  # formatted with o=<ProjectObjects> and s=<Seed>
    query: Body | None = None
    body: Body | None = None
    multipart: bool = False
    kind: str | None = None  # a list of this kind of object: checked for leaks
    project_bound: bool = True  # names a project's object: outsiders of it get 404

    def request(self, seed: Seed, principal: str, method: str, o: ProjectObjects) -> Any:
        client = seed.client(principal)
        path = self.path.format(o=o, s=seed)
        if self.query is not None:
            path += "?" + "&".join(f"{k}={v}" for k, v in self.query(o).items())
        body = self.body(o) if self.body else None
        fmt = "multipart" if self.multipart else "json"
        return getattr(client, method.lower())(path, body, format=fmt)


def upload(o: ProjectObjects) -> dict[str, Any]:
    return {
        "file": SimpleUploadedFile("more.parquet", verl_parquet(counting_answers(2))),
        "message": "more",
    }


def new_model(o: ProjectObjects) -> dict[str, Any]:
    """The demo reward model, under a name of its own per request."""
    [folder] = [c.source for c in offered_folders() if c.name == "demo-reward-model"]
    return {"project": o.slug, "folder": folder, "name": f"rm-{secrets.token_hex(4)}"}


def new_run(o: ProjectObjects) -> dict[str, Any]:
    return {
        "project": o.slug,
        "name": "new run",
        "preset": PRESET,
        "dataset_version": o.dataset_version,
        "reward_version": o.reward_version,
        "overrides": ["trainer.total_steps=3"],
    }


MATRIX: dict[tuple[str, str], Op] = {
    # auth and the project-free reads
    ("POST", "/api/auth/login"): Op(
        expect(200, 200, 200, 200, anonymous=200),
        "/api/auth/login",
        body=lambda o: {"username": "member", "password": PASSWORD},
        project_bound=False,
    ),
    ("POST", "/api/auth/logout"): Op(signed_in(204), "/api/auth/logout", project_bound=False),
    ("GET", "/api/auth/me"): Op(signed_in(200), "/api/auth/me", project_bound=False),
    ("GET", "/api/health"): Op(
        expect(200, 200, 200, 200, anonymous=200), "/api/health", project_bound=False
    ),
    ("GET", "/api/config/presets"): Op(listing(), "/api/config/presets", project_bound=False),
    ("GET", "/api/config/schema"): Op(listing(), "/api/config/schema", project_bound=False),
    ("POST", "/api/config/validate"): Op(
        listing(), "/api/config/validate", body=lambda o: {"preset": PRESET}, project_bound=False
    ),
    ("GET", "/api/reward-templates/"): Op(listing(), "/api/reward-templates/", project_bound=False),
    ("GET", "/api/queue/"): Op(read(), "/api/queue/", query=lambda o: {"project": o.slug}),
    # projects and members
    ("GET", "/api/projects/"): Op(listing(), "/api/projects/", kind="project", project_bound=False),
    ("POST", "/api/projects/"): Op(
        signed_in(201), "/api/projects/", body=lambda o: {"name": "Fresh"}, project_bound=False
    ),
    ("GET", "/api/projects/{slug}/"): Op(read(), "/api/projects/{o.slug}/"),
    ("PATCH", "/api/projects/{slug}/"): Op(
        owner_only(200), "/api/projects/{o.slug}/", body=lambda o: {"description": "new"}
    ),
    ("PUT", "/api/projects/{slug}/"): Op(
        owner_only(200),
        "/api/projects/{o.slug}/",
        body=lambda o: {"name": "Renamed", "description": "new"},
    ),
    ("DELETE", "/api/projects/{slug}/"): Op(owner_only(204), "/api/projects/{o.slug}/"),
    ("GET", "/api/projects/{slug}/members/"): Op(
        read(), "/api/projects/{o.slug}/members/", kind="member"
    ),
    ("POST", "/api/projects/{slug}/members/"): Op(
        owner_only(200),
        "/api/projects/{o.slug}/members/",
        body=lambda o: {"username": "viewer", "role": "viewer"},  # members only: others are invited
    ),
    # notifications: any role reads and picks its own emails; the webhook is the owners'
    ("GET", "/api/projects/{slug}/storage/"): Op(read(), "/api/projects/{o.slug}/storage/"),
    ("GET", "/api/projects/{slug}/notifications/"): Op(
        read(), "/api/projects/{o.slug}/notifications/"
    ),
    ("PUT", "/api/projects/{slug}/notifications/"): Op(
        read(), "/api/projects/{o.slug}/notifications/", body=lambda o: {"email_events": []}
    ),
    ("GET", "/api/projects/{slug}/invitations/"): Op(
        owner_only(200), "/api/projects/{o.slug}/invitations/", kind="invitation"
    ),
    ("POST", "/api/projects/{slug}/invitations/"): Op(
        owner_only(201),
        "/api/projects/{o.slug}/invitations/",
        body=lambda o: {"username": "friend", "role": "viewer"},
    ),
    ("DELETE", "/api/projects/{slug}/invitations/{invitation_id}/"): Op(
        owner_only(204), "/api/projects/{o.slug}/invitations/{o.invitation}/"
    ),
    # your own invitations: the seeded ones are addressed to "newcomer", so to every
    # caller here they don't exist (tests/security/test_invitations.py accepts one)
    ("GET", "/api/invitations/"): Op(listing(), "/api/invitations/", project_bound=False),
    ("POST", "/api/invitations/{id}/accept/"): Op(
        expect(404, 404, 404, 404), "/api/invitations/{o.invitation}/accept/"
    ),
    ("POST", "/api/invitations/{id}/decline/"): Op(
        expect(404, 404, 404, 404), "/api/invitations/{o.invitation}/decline/"
    ),
    # tokens (personal) and the audit log
    ("GET", "/api/tokens/"): Op(listing(), "/api/tokens/", kind="token", project_bound=False),
    # Every caller here holds a token, and a token never makes tokens (a password session
    # does: tests/security/test_tokens.py).
    ("POST", "/api/tokens/"): Op(
        expect(403, 403, 403, 403),
        "/api/tokens/",
        body=lambda o: {"name": "ci"},
        project_bound=False,
    ),
    ("DELETE", "/api/tokens/{id}/"): Op(
        expect(404, 204, 404, 404), "/api/tokens/{s.member_spare_token}/", project_bound=False
    ),
    ("GET", "/api/audit/"): Op(listing(), "/api/audit/", kind="audit", project_bound=False),
    # datasets and versions
    ("GET", "/api/datasets/"): Op(listing(), "/api/datasets/", kind="dataset", project_bound=False),
    ("POST", "/api/datasets/"): Op(
        write(201), "/api/datasets/", body=lambda o: {"project": o.slug, "name": "fresh"}
    ),
    ("GET", "/api/datasets/{id}/"): Op(read(), "/api/datasets/{o.dataset}/"),
    ("PATCH", "/api/datasets/{id}/"): Op(
        write(), "/api/datasets/{o.dataset}/", body=lambda o: {"description": "new"}
    ),
    ("DELETE", "/api/datasets/{id}/"): Op(owner_only(204), "/api/datasets/{o.scratch_dataset}/"),
    ("GET", "/api/datasets/{dataset_id}/versions/"): Op(
        read(), "/api/datasets/{o.dataset}/versions/", kind="dataset_version"
    ),
    ("GET", "/api/dataset-versions/"): Op(
        listing(), "/api/dataset-versions/", kind="dataset_version", project_bound=False
    ),
    ("POST", "/api/datasets/{dataset_id}/versions/"): Op(
        write(201), "/api/datasets/{o.dataset}/versions/", body=upload, multipart=True
    ),
    ("GET", "/api/datasets/{dataset_id}/versions/{number}/"): Op(
        read(), "/api/datasets/{o.dataset}/versions/1/"
    ),
    ("GET", "/api/datasets/{dataset_id}/versions/{number}/download/"): Op(
        read(), "/api/datasets/{o.dataset}/versions/1/download/"
    ),
    ("GET", "/api/datasets/{dataset_id}/versions/{number}/preview/"): Op(
        read(), "/api/datasets/{o.dataset}/versions/1/preview/"
    ),
    ("GET", "/api/datasets/{id}/diff/"): Op(read(), "/api/datasets/{o.dataset}/diff/?from=1&to=1"),
    # reward functions and versions
    ("GET", "/api/reward-functions/"): Op(
        listing(), "/api/reward-functions/", kind="reward_function", project_bound=False
    ),
    ("POST", "/api/reward-functions/"): Op(
        write(201),
        "/api/reward-functions/",
        body=lambda o: {"project": o.slug, "name": "fresh", "from_template": "exact_match"},
    ),
    ("GET", "/api/reward-functions/{id}/"): Op(read(), "/api/reward-functions/{o.function}/"),
    ("PATCH", "/api/reward-functions/{id}/"): Op(
        write(), "/api/reward-functions/{o.function}/", body=lambda o: {"description": "new"}
    ),
    ("DELETE", "/api/reward-functions/{id}/"): Op(
        owner_only(204), "/api/reward-functions/{o.scratch_function}/"
    ),
    ("GET", "/api/reward-functions/{id}/diff/"): Op(
        read(), "/api/reward-functions/{o.function}/diff/"
    ),
    ("GET", "/api/reward-functions/{function_id}/versions/"): Op(
        read(), "/api/reward-functions/{o.function}/versions/", kind="reward_version"
    ),
    ("POST", "/api/reward-functions/{function_id}/versions/"): Op(
        write(201),
        "/api/reward-functions/{o.function}/versions/",
        body=lambda o: {"code": EXACT + "\n# v2\n", "message": "v2"},
    ),
    ("GET", "/api/reward-functions/{function_id}/versions/{number}/"): Op(
        read(), "/api/reward-functions/{o.function}/versions/1/"
    ),
    ("POST", "/api/reward-functions/{function_id}/versions/{number}/test/"): Op(
        write(),
        "/api/reward-functions/{o.function}/versions/1/test/",
        body=lambda o: {"completions": [{"solution_str": "5", "ground_truth": "5"}]},
    ),
    # reward test-runs (POST only queues: in a test transaction nothing is sent)
    ("GET", "/api/reward-test-runs/"): Op(
        listing(), "/api/reward-test-runs/", kind="reward_test_run", project_bound=False
    ),
    ("POST", "/api/reward-test-runs/"): Op(
        write(202),
        "/api/reward-test-runs/",
        body=lambda o: {
            "reward_version": o.reward_version,
            "source": "references",
            "dataset_version": o.dataset_version,
        },
    ),
    ("GET", "/api/reward-test-runs/{id}/"): Op(
        read(), "/api/reward-test-runs/{o.reward_test_run}/"
    ),
    # the reward editor's check and the A/B of two versions (the seeded test-run is still
    # queued: members get as far as "not succeeded", a 400)
    ("POST", "/api/reward-checks/"): Op(
        signed_in(200), "/api/reward-checks/", body=lambda o: {"code": EXACT}, project_bound=False
    ),
    ("GET", "/api/reward-comparisons/"): Op(
        expect(400, 400, 400, 404),
        "/api/reward-comparisons/",
        query=lambda o: {"a": o.reward_test_run, "b": o.reward_test_run},
    ),
    ("POST", "/api/reward-comparisons/"): Op(
        expect(400, 400, 403, 404),
        "/api/reward-comparisons/",
        body=lambda o: {"base_test_run": o.reward_test_run, "reward_version": o.reward_version},
    ),
    # the upload form's column detection
    ("POST", "/api/dataset-columns/"): Op(
        signed_in(200),
        "/api/dataset-columns/",
        body=lambda o: {"file": SimpleUploadedFile("qa.csv", b"prompt,answer\nx,1\n")},
        multipart=True,
        project_bound=False,
    ),
    # runs
    ("GET", "/api/models/"): Op(listing(), "/api/models/", kind="model", project_bound=False),
    ("GET", "/api/models/{id}/"): Op(read(), "/api/models/{o.model}/"),
    ("POST", "/api/models/"): Op(write(201), "/api/models/", body=new_model),
    ("GET", "/api/models/available/"): Op(
        read(), "/api/models/available/", query=lambda o: {"project": o.slug}
    ),
    ("GET", "/api/runs/"): Op(listing(), "/api/runs/", kind="run", project_bound=False),
    ("POST", "/api/runs/"): Op(write(201), "/api/runs/", body=new_run),
    ("GET", "/api/runs/{id}/"): Op(read(), "/api/runs/{o.run}/"),
    ("PATCH", "/api/runs/{id}/"): Op(write(), "/api/runs/{o.run}/", body=lambda o: {"notes": "x"}),
    ("POST", "/api/runs/{id}/cancel/"): Op(write(), "/api/runs/{o.run}/cancel/"),
    ("POST", "/api/runs/{id}/resume/"): Op(write(), "/api/runs/{o.cancelled_run}/resume/"),
    # Deleting and archiving need a run that has ended (the seeded queued one gets 409).
    ("DELETE", "/api/runs/{id}/"): Op(write(), "/api/runs/{o.cancelled_run}/"),
    ("POST", "/api/runs/{id}/archive/"): Op(write(), "/api/runs/{o.cancelled_run}/archive/"),
    ("POST", "/api/runs/{id}/unarchive/"): Op(write(), "/api/runs/{o.cancelled_run}/unarchive/"),
    ("POST", "/api/runs/{id}/clone/"): Op(
        write(201),
        "/api/runs/{o.run}/clone/",
        body=lambda o: {"overrides": ["trainer.total_steps=4"]},
    ),
    ("POST", "/api/runs/{id}/priority/"): Op(
        write(), "/api/runs/{o.run}/priority/", body=lambda o: {"priority": 5}
    ),
    ("POST", "/api/runs/{id}/export-labelled"): Op(
        write(201), "/api/runs/{o.run}/export-labelled", body=lambda o: {"dataset": o.dataset}
    ),
    # evaluations (runs of kind evaluation; the seeded checkpoint is in an object store, so
    # evaluating a run's checkpoints gets as far as "none reachable", a 400)
    ("GET", "/api/evaluations/"): Op(
        listing(), "/api/evaluations/", kind="evaluation", project_bound=False
    ),
    ("POST", "/api/evaluations/"): Op(
        write(201),
        "/api/evaluations/",
        body=lambda o: {
            "project": o.slug,
            "models": [{"model": o.model}],
            "dataset_version": o.dataset_version,
        },
    ),
    ("GET", "/api/evaluations/{id}/"): Op(read(), "/api/evaluations/{o.evaluation}/"),
    ("POST", "/api/evaluations/{id}/cancel/"): Op(
        write(), "/api/evaluations/{o.evaluation}/cancel/"
    ),
    ("POST", "/api/evaluations/run-checkpoints/"): Op(
        expect(400, 400, 403, 404),
        "/api/evaluations/run-checkpoints/",
        body=lambda o: {"run": o.run},
    ),
    # sweeps (the seeded one runs; resuming it is a 409)
    ("GET", "/api/sweeps/"): Op(listing(), "/api/sweeps/", kind="sweep", project_bound=False),
    ("POST", "/api/sweeps/"): Op(
        write(201),
        "/api/sweeps/",
        body=lambda o: {
            "project": o.slug,
            "name": "new sweep",
            "preset": PRESET,
            "inputs": {"dataset_version": o.dataset_version},
            "space": SWEEP_SPACE,
        },
    ),
    ("GET", "/api/sweeps/{id}/"): Op(read(), "/api/sweeps/{o.sweep}/"),
    # its trial's run is queued: deleting waits for it to end
    ("DELETE", "/api/sweeps/{id}/"): Op(expect(409, 409, 403, 404), "/api/sweeps/{o.sweep}/"),
    ("POST", "/api/sweeps/{id}/pause/"): Op(write(), "/api/sweeps/{o.sweep}/pause/"),
    ("POST", "/api/sweeps/{id}/resume/"): Op(
        expect(409, 409, 403, 404), "/api/sweeps/{o.sweep}/resume/"
    ),
    ("POST", "/api/sweeps/{id}/stop/"): Op(write(), "/api/sweeps/{o.sweep}/stop/"),
    ("POST", "/api/sweeps/{id}/trials/"): Op(
        write(), "/api/sweeps/{o.sweep}/trials/", body=lambda o: {"count": 1}
    ),
    ("GET", "/api/sweeps/{id}/report/"): Op(read(), "/api/sweeps/{o.sweep}/report/"),
    ("POST", "/api/evaluations/ask/"): Op(
        expect(400, 400, 403, 404),
        "/api/evaluations/ask/",
        body=lambda o: {"sample": o.sample},
    ),
    ("GET", "/api/evaluations/{id}/report/"): Op(read(), "/api/evaluations/{o.evaluation}/report/"),
    # a run's alerts, log lines and checkpoints
    ("GET", "/api/runs/{id}/alerts/"): Op(read(), "/api/runs/{o.run}/alerts/", kind="alert"),
    ("GET", "/api/runs/{id}/logs/"): Op(
        read(), "/api/runs/{o.run}/logs/", query=lambda o: {"level": "warning"}, kind="log"
    ),
    ("GET", "/api/runs/{id}/checkpoints/"): Op(
        read(), "/api/runs/{o.run}/checkpoints/", kind="checkpoint"
    ),
    ("GET", "/api/runs/{id}/checkpoints/{checkpoint_id}/download"): Op(
        expect(409, 409, 409, 404), "/api/runs/{o.run}/checkpoints/{o.checkpoint}/download"
    ),
    # shareable reports
    ("GET", "/api/runs/{id}/report"): Op(read(), "/api/runs/{o.run}/report"),
    ("GET", "/api/runs/report"): Op(
        read(), "/api/runs/report", query=lambda o: {"ids": f"{o.run},{o.cancelled_run}"}
    ),
    # metrics
    ("GET", "/api/runs/{id}/metrics/keys"): Op(read(), "/api/runs/{o.run}/metrics/keys"),
    ("GET", "/api/runs/{id}/metrics.csv"): Op(read(), "/api/runs/{o.run}/metrics.csv"),
    ("GET", "/api/metrics/query"): Op(
        read(), "/api/metrics/query", query=lambda o: {"runs": o.run, "keys": "loss"}, kind="series"
    ),
    # samples
    ("GET", "/api/samples/"): Op(
        read(), "/api/samples/", query=lambda o: {"run": o.run}, kind="sample"
    ),
    ("GET", "/api/samples/{id}/"): Op(read(), "/api/samples/{o.sample}/"),
    ("GET", "/api/samples/group/"): Op(
        read(),
        "/api/samples/group/",
        query=lambda o: {"run": o.run, "step": 1, "group_id": "g0"},
        kind="group",
    ),
    ("POST", "/api/samples/{id}/labels/"): Op(
        write(201), "/api/samples/{o.sample}/labels/", body=lambda o: {"label": "good"}
    ),
    ("DELETE", "/api/samples/{id}/labels/"): Op(
        write(204), "/api/samples/{o.sample}/labels/", query=lambda o: {"label": "flag"}
    ),
    # rollout review reads of one run
    ("GET", "/api/runs/{id}/rollouts/steps"): Op(read(), "/api/runs/{o.run}/rollouts/steps"),
    ("GET", "/api/runs/{id}/rollouts/prompts"): Op(read(), "/api/runs/{o.run}/rollouts/prompts"),
    ("GET", "/api/runs/{id}/rollouts/timeline"): Op(
        read(), "/api/runs/{o.run}/rollouts/timeline", query=lambda o: {"sample": o.sample}
    ),
    ("GET", "/api/runs/{id}/rollouts/groups"): Op(
        read(), "/api/runs/{o.run}/rollouts/groups", query=lambda o: {"step": 1}
    ),
    ("GET", "/api/runs/{id}/rollouts/histogram"): Op(
        read(), "/api/runs/{o.run}/rollouts/histogram"
    ),
    ("GET", "/api/runs/{id}/rollouts/lengths"): Op(read(), "/api/runs/{o.run}/rollouts/lengths"),
    # live streams (served whole under the test client: WSGI can't hold a stream open)
    ("GET", "/api/runs/{id}/events"): Op(read(), "/api/runs/{o.run}/events"),
    ("GET", "/api/projects/{slug}/events"): Op(read(), "/api/projects/{o.slug}/events"),
    # the chat playground: viewers see the models and read an exchange; members send
    ("GET", "/api/playground/models/"): Op(
        read(), "/api/playground/models/", query=lambda o: {"project": o.slug}
    ),
    ("POST", "/api/playground/warm/"): Op(
        write(),
        "/api/playground/warm/",
        body=lambda o: {"project": o.slug, "target": {"model": o.model}},
    ),
    ("POST", "/api/playground/exchanges/"): Op(
        write(201),
        "/api/playground/exchanges/",
        body=lambda o: {
            "project": o.slug,
            "chats": [
                {"target": {"model": o.model}, "messages": [{"role": "user", "content": "hi"}]}
            ],
        },
    ),
    ("POST", "/api/playground/exchanges/{exchange_id}/stop/"): Op(
        write(204), "/api/playground/exchanges/{o.exchange}/stop/"
    ),
    ("GET", "/api/playground/exchanges/{exchange_id}/events"): Op(
        read(), "/api/playground/exchanges/{o.exchange}/events"
    ),
    # the playground's model servers: only a server's own token (no user's), and a secret
    # that opens no server here
    ("POST", "/api/playground/servers/{server_id}/bootstrap"): Op(
        expect(403, 403, 403, 403, 403),
        "/api/playground/servers/p0-m0/bootstrap",
        body=lambda o: {"secret": "rlb_x"},
        project_bound=False,
    ),
    ("GET", "/api/playground/servers/{server_id}/next"): Op(
        expect(401, 401, 401, 401), "/api/playground/servers/p0-m0/next", project_bound=False
    ),
    ("POST", "/api/playground/servers/{server_id}/report"): Op(
        expect(401, 401, 401, 401),
        "/api/playground/servers/p0-m0/report",
        body=lambda o: {"kind": "ready"},
        project_bound=False,
    ),
    # the trainer's ingest, with its run's token only
    ("POST", "/api/ingest/runs/{run_id}/records"): Op(
        ingest_token_of_this_run(),
        "/api/ingest/runs/{o.run}/records",
        body=lambda o: {"attempt": 1, "records": []},
        project_bound=False,
    ),
    # Only the job's one-time secret opens it: no user, token or ingest token does.
    ("POST", "/api/ingest/runs/{run_id}/bootstrap"): Op(
        expect(403, 403, 403, 403, 403),
        "/api/ingest/runs/{o.run}/bootstrap",
        body=lambda o: {"attempt": 1},
        project_bound=False,
    ),
    ("GET", "/api/ingest/runs/{run_id}/dataset"): Op(
        ingest_token_of_this_run(),
        "/api/ingest/runs/{o.run}/dataset",
        query=lambda o: {"split": "train"},
        project_bound=False,
    ),
}


def schema_operations() -> set[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        if path.startswith("/api/")
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }


def test_every_api_operation_has_a_row_in_the_matrix() -> None:
    operations = schema_operations()
    missing = sorted(operations - set(MATRIX))
    stale = sorted(set(MATRIX) - operations)
    assert not missing, f"operations without a row in MATRIX: {missing}"
    assert not stale, f"MATRIX rows for operations the schema no longer has: {stale}"


# --- leak checks -----------------------------------------------------------------------


def returned_ids(kind: str, body: Any) -> set[Any]:
    if kind == "series":
        return {series["run"] for series in body["series"]}
    if kind == "group":
        return {sample["id"] for sample in body["samples"]}
    rows = body["results"] if isinstance(body, dict) else body
    if kind == "project":
        return {row["slug"] for row in rows}
    if kind == "member":
        return {row["username"] for row in rows}
    return {row["id"] for row in rows}


def ids_of(seed: Seed, kind: str, project: ProjectObjects) -> set[Any]:
    """Everything of `kind` in a project (series are per run, groups are samples)."""
    key = {"series": "run", "group": "sample"}.get(kind, kind)
    return project.ids[key]


def assert_no_leak(seed: Seed, principal: str, kind: str, body: Any) -> None:
    seen = returned_ids(kind, body)
    if kind == "token":
        own = set(seed.users[principal].api_tokens.values_list("id", flat=True))
        assert seen and seen <= own, f"{principal} sees tokens not their own: {seen - own}"
        return
    mine = seed.visible(principal)
    assert mine is not None
    theirs = seed.other if mine is seed.alpha else seed.alpha
    leaked = seen & ids_of(seed, kind, theirs)
    assert not leaked, f"{principal} sees {kind} {leaked} of project {theirs.slug!r}"
    if kind == "member":
        assert seen == ids_of(seed, kind, mine)
    else:  # the list isn't empty by accident: this principal's own objects are there
        assert seen & ids_of(seed, kind, mine), f"{principal}'s own {kind} objects are missing"


# --- the tests -------------------------------------------------------------------------


def case_id(key: tuple[str, str]) -> str:
    return f"{key[0]} {key[1]}"


@pytest.mark.parametrize("principal", PRINCIPALS)
@pytest.mark.parametrize("operation", sorted(MATRIX), ids=case_id)
def test_each_caller_gets_the_expected_status(
    seed: Seed, db: None, operation: tuple[str, str], principal: str
) -> None:
    method, _ = operation
    op = MATRIX[operation]
    response = op.request(seed, principal, method, seed.alpha)
    expected = op.expected[principal]
    assert response.status_code == expected, (
        f"{principal} {method} {response.request['PATH_INFO']}: got {response.status_code}, "
        f"expected {expected}: {response.content[:300]!r}"
    )
    if expected >= 400 and response["Content-Type"].startswith("application/json"):
        assert set(response.json()["error"]) >= {"code", "message"}
    if op.kind and expected == 200:
        assert_no_leak(seed, principal, op.kind, response.json())


BOUND = sorted(key for key, op in MATRIX.items() if op.project_bound)


@pytest.mark.parametrize("principal", ["owner", "member", "viewer"])
@pytest.mark.parametrize("operation", BOUND, ids=case_id)
def test_another_projects_objects_are_404_to_every_role(
    seed: Seed, db: None, operation: tuple[str, str], principal: str
) -> None:
    """The same requests aimed at the other project's objects: an owner of this project
    is an outsider there, so it doesn't exist (404, never 403 or 2xx)."""
    method, _ = operation
    response = MATRIX[operation].request(seed, principal, method, seed.other)
    assert response.status_code == 404, (
        f"{principal} {method} {response.request['PATH_INFO']}: {response.status_code} "
        f"{response.content[:300]!r}"
    )


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/api/datasets/", "dataset"),
        ("/api/reward-functions/", "reward_function"),
        ("/api/reward-test-runs/", "reward_test_run"),
        ("/api/runs/", "run"),
        ("/api/evaluations/", "evaluation"),
    ],
)
def test_filtering_a_list_by_another_project_returns_nothing(
    seed: Seed, db: None, path: str, kind: str
) -> None:
    body = seed.client("member").get(path, {"project": "other"}).json()
    assert body["results"] == []
    listed = seed.client("outsider").get(path, {"project": "alpha"}).json()
    assert listed["results"] == []


def test_the_ingest_token_is_refused_with_the_api_error_format(seed: Seed, db: None) -> None:
    response = seed.client("ingest").get("/api/runs/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


def test_the_ingest_token_writes_and_reads_only_its_own_run(seed: Seed, db: None) -> None:
    """The "ingest" caller of the matrix is refused on this project's run (403 above);
    on its own run it is accepted, which keeps that 403 meaningful."""
    trainer = seed.client("ingest")
    own = f"/api/ingest/runs/{seed.other.run}"
    log = {"seq": 0, "kind": "log", "time": 1.0, "data": {"level": "info", "message": "hi"}}
    stored = trainer.post(f"{own}/records", {"attempt": 1, "records": [log]}, format="json")
    assert stored.status_code == 200, stored.content
    assert stored.json() == {"stored": 1, "duplicates": 0, "last_seq": 0}
    dataset = trainer.get(f"{own}/dataset", {"split": "train"})
    assert dataset.status_code == 200
    body = b"".join(dataset.streaming_content) if dataset.streaming else dataset.content
    assert body.startswith(b"PAR1")  # a parquet file
    refused = trainer.post(
        f"/api/ingest/runs/{seed.alpha.run}/records",
        {"attempt": 1, "records": [log]},
        format="json",
    )
    assert refused.status_code == 403
    assert not LogLine.objects.filter(run_id=seed.alpha.run, message="hi").exists()


def test_deleting_a_project_takes_its_runs_and_versions_but_not_while_runs_are_live(
    seed: Seed, db: None
) -> None:
    owner = seed.client("owner")
    Run.objects.filter(pk=seed.alpha.run).update(status=RunStatus.RUNNING)
    refused = owner.delete("/api/projects/alpha/")
    assert refused.status_code == 409
    assert "queued" in refused.json()["error"]["message"]  # names the live run
    assert Project.objects.filter(slug="alpha").exists()

    Run.objects.filter(pk=seed.alpha.run).update(status=RunStatus.CANCELLED)
    assert owner.delete("/api/projects/alpha/").status_code == 204
    assert not Run.objects.filter(project__slug="alpha").exists()
    assert not DatasetVersion.objects.filter(dataset__project__slug="alpha").exists()
    event = AuditEvent.objects.get(action="project.delete")
    assert event.actor == seed.users["owner"] and event.detail["slug"] == "alpha"
    assert Run.objects.filter(project__slug="other").count() == 3  # its runs and evaluation stay
