"""The live stack for runs-on-Ray tests: a real Ray head, web server (ingest), Celery
worker and Celery beat, all bound to the test database and a Redis database of their
own; plus a tiny model and dataset, and an API client for a fresh user and project.

A stack (its Ray head alone is ~0.6 GB) is started once for the whole of tests/runs/live
(its conftest), and once per module by the modules that need other settings (a Ray head
of two nodes, the trainer account, the warm-started demo model). Tests share it, so each
one creates its own user and project (the database is flushed between tests).
"""

from __future__ import annotations

import copy
import os
import pwd
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis
import requests
from django.contrib.auth.models import User

from studio.projects.models import ApiToken, Membership, Project, Role
from tests import warm_runtimes
from tests.hub_server import FakeHub, fake_hub
from tests.live import (
    LiveProcess,
    free_port,
    join_ray_head,
    start_beat,
    start_celery_worker,
    start_ray_head,
    start_ray_worker_node,
    start_web_server,
)
from tests.studio.conftest import world  # noqa: F401 - the API tests' project and users
from trainer.warm.child import process_name

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
TERMINAL = {"succeeded", "failed", "cancelled"}


@pytest.fixture(scope="session")
def tiny_assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo model's shape without its warm start (seconds, not minutes): the runs
    here test launching, not learning."""
    from trainer.demo.model import build_demo_assets

    root = tmp_path_factory.mktemp("tiny")
    build_demo_assets(root / "model", root / "data", seed=0, warmup_steps=0, evaluate=False)
    return root


def tiny_config(assets: Path, steps: int = 2, **sections: dict[str, Any]) -> dict[str, Any]:
    """A run config tree that trains `steps` tiny steps on one CPU."""
    tree: dict[str, Any] = {
        "model": {"path": str(assets / "model")},
        "data": {
            "train_files": [str(assets / "data" / "arith" / "train.parquet")],
            "val_files": [],
            "train_batch_size": 2,
        },
        "rollout": {"n": 2, "max_new_tokens": 4},
        "actor": {"ppo_mini_batch_size": 2, "micro_batch_size": 4},
        "trainer": {"total_steps": steps, "val_before_train": False},
        "checkpoint": {"save_hf": False},
        "logging": {"console": True, "samples_per_step": 2},
        "resources": {"cpus_per_worker": 1, "memory_gb": 0.25},
    }
    for name, values in sections.items():
        tree[name] = {**tree.get(name, {}), **values}
    return tree


@dataclass
class Stack:
    ray: LiveProcess
    web: LiveProcess
    beat: LiveProcess
    worker: LiveProcess
    env: dict[str, str]
    log_dir: Path
    failpoints: Path
    prefix: str
    ray_nodes: tuple[LiveProcess, ...] = ()  # worker nodes joined to the head
    warm_dir: Path | None = None  # where the jobs' warm runtimes serve (trainer.warm)

    @property
    def ray_address(self) -> str:
        return self.ray.info["address"]

    def restart_worker(self) -> None:
        self.worker.stop()
        self.worker = start_celery_worker(self.log_dir, **self.env)

    def ray_jobs(self) -> dict[str, Any]:
        """Our Ray jobs by submission id, straight from Ray."""
        from ray.job_submission import JobSubmissionClient

        client = JobSubmissionClient(self.ray_address)
        return {
            job.submission_id: job
            for job in client.list_jobs()
            if job.submission_id and job.submission_id.startswith(self.prefix)
        }


@pytest.fixture(scope="session")
def hub(tiny_assets: Path) -> Iterator[FakeHub]:
    """A local server answering as the Hugging Face hub does, with the tiny model as
    `tiny/model` (the stack's HF_ENDPOINT)."""
    with fake_hub({"tiny/model": tiny_assets / "model"}) as server:
        yield server


@pytest.fixture(scope="module")
def two_node_stack(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory, tiny_assets: Path
) -> Iterator[Stack]:
    """The stack with a Ray cluster of two nodes started separately (a head and a worker
    node, 2 CPUs each, their own explicit ports); the studio knows only RAY_ADDRESS."""
    yield from live_stack(tmp_path_factory, tiny_assets, "", name="two-node", worker_nodes=1)


def live_stack(
    tmp_path_factory: pytest.TempPathFactory,
    model_root: Path,
    hub_url: str,
    *,
    name: str = "stack",
    environ: dict[str, str] | None = None,
    **options: Any,
) -> Iterator[Stack]:
    """A module's stack (`_stack`'s `options`), with no stale task messages from earlier
    runs in Redis, and `environ` set in this process while it lives: the Ray head hands
    this process's environment to every job."""
    log_dir = tmp_path_factory.mktemp(f"{name}-logs")
    failpoints = tmp_path_factory.mktemp("failpoints")
    redis.Redis.from_url(REDIS_URL).flushdb()
    with pytest.MonkeyPatch.context() as patch:
        for key, value in (environ or {}).items():
            patch.setenv(key, value)
        yield from _stack(
            log_dir, failpoints, tmp_path_factory, model_root, hub_url, patch, **options
        )


def _stack(
    log_dir: Path,
    failpoints: Path,
    tmp_path_factory: pytest.TempPathFactory,
    model_root: Path,
    hub_url: str,
    patch: pytest.MonkeyPatch,
    worker_nodes: int = 0,
    extra_env: dict[str, str] | None = None,
    ray_user: str | None = None,
) -> Iterator[Stack]:
    # The jobs' warm runtimes (trainer.warm) serve from the stack's own folder, and stop
    # with it: a runtime is detached from the job that started it.
    warm = warm_runtimes.private_folder()
    if ray_user is not None:
        account = pwd.getpwnam(ray_user)
        os.chown(warm, account.pw_uid, account.pw_gid)
    patch.setenv(warm_runtimes.DIR_ENV, str(warm))
    ray = start_ray_head(log_dir, num_cpus=2, user=ray_user, single_machine=not worker_nodes)
    join_ray_head(patch, ray)  # this process is a Ray client too
    nodes = tuple(start_ray_worker_node(log_dir, ray, num_cpus=2) for _ in range(worker_nodes))
    port = free_port()
    prefix = f"t{secrets.token_hex(3)}"
    env = {
        "REDIS_URL": REDIS_URL,
        "RAY_ADDRESS": ray.info["address"],
        "RLSTUDIO_URL": f"http://127.0.0.1:{port}",
        "RLSTUDIO_RAY_JOB_PREFIX": prefix,
        "RLSTUDIO_RECONCILE_INTERVAL_S": "1",
        # The tiny model (`<root>/model`) is a folder the studio offers as a model.
        "RLSTUDIO_MODEL_ROOTS": str(model_root),
        "HF_ENDPOINT": hub_url or "http://127.0.0.1:1",  # never the real hub
        "RLSTUDIO_LAUNCH_GRACE_S": "4",
        "RLSTUDIO_CHECKPOINT_ROOT": str(tmp_path_factory.mktemp("checkpoints")),
        # Trainers write their spools (var/spool/run-<id>-attempt-<n>) under their working
        # directory: a folder of this stack's own, never the checkout's, where a run of an
        # earlier test database (or of another xdist worker) with the same id left its own.
        "RLSTUDIO_TRAINER_WORKDIR": str(tmp_path_factory.mktemp("trainer")),
        "RLSTUDIO_FAILPOINTS_DIR": str(failpoints),
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
        "RLSTUDIO_DATA_CACHE": str(tmp_path_factory.mktemp("data-cache")),
        "RLSTUDIO_ASYNC_IMPORT_BYTES": "1024",  # uploads are imported by the worker
        # These tests start many runs of one project and user at once; the caps have tests
        # of their own (tests/runs/test_queue.py, tests/security/test_queue_share.py).
        "RLSTUDIO_PROJECT_MAX_RUNNING_JOBS": "0",
        "RLSTUDIO_USER_MAX_RUNNING_JOBS": "0",
        # Notifications go to a webhook sink on loopback (tests.notification_sinks).
        "RLSTUDIO_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        **(extra_env or {}),
    }
    web = start_web_server(log_dir, port=port, **env)
    beat = start_beat(log_dir, **env)
    worker = start_celery_worker(log_dir, **env)
    live = Stack(ray, web, beat, worker, env, log_dir, failpoints, prefix, nodes, warm)
    try:
        yield live
    finally:
        for process in (live.worker, beat, web, *nodes, ray):
            process.stop()
        warm_runtimes.remove_folder(warm)


@dataclass
class Api:
    url: str
    session: requests.Session
    project: Project
    user: User
    uploaded: dict[Path, int] = field(default_factory=dict)  # file -> dataset version id

    def get(self, path: str) -> Any:
        response = self.session.get(f"{self.url}{path}", timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any], expect: int = 200) -> Any:
        response = self.session.post(f"{self.url}{path}", json=body, timeout=30)
        assert response.status_code == expect, response.text
        return response.json()

    def create_run(self, name: str, config: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """POST a run. The config's paths (tiny_config's) become the references a request
        sends instead: the model folder as a project model, the training file uploaded as
        a dataset (unless `fields` names one), no validation when its files are []."""
        config = copy.deepcopy(config)
        model = config.pop("model", {}).pop("path", None)
        data = config.setdefault("data", {})
        [train] = data.pop("train_files", [None])
        val = data.pop("val_files", None)
        inputs: dict[str, Any] = {}
        if model is not None:
            inputs["model"] = self.model_id(Path(model).name)
        if "dataset" not in fields and "dataset_version" not in fields and train is not None:
            inputs["dataset_version"] = self.dataset_of(Path(train))
        if val == [] and "validation" not in fields:
            inputs["validation"] = "none"
        body = {"project": self.project.slug, "name": name, "config": config, **inputs, **fields}
        run: dict[str, Any] = self.post("/api/runs/", body, expect=201)
        return run

    def model_id(self, folder_name: str) -> int:
        """The project's model for a folder the server offers, added on first use."""
        slug = self.project.slug
        known = self.get(f"/api/models/?project={slug}")["results"]
        for model in known:
            if model["name"] == folder_name:
                return int(model["id"])
        offered = self.get(f"/api/models/available/?project={slug}")
        [folder] = [f["folder"] for f in offered if f["name"] == folder_name]
        added = self.post("/api/models/", {"project": slug, "folder": folder}, 201)
        return int(added["id"])

    def dataset_of(self, path: Path) -> int:
        """A dataset version holding `path`, uploaded once per file."""
        if path not in self.uploaded:
            self.uploaded[path] = self.upload_dataset(f"{path.parent.name}-{path.stem}", path)
        return self.uploaded[path]

    def upload_dataset(self, name: str, path: Path) -> int:
        """A dataset with one version holding `path`, uploaded through the API; the
        version's id. The stack counts every upload as large: a worker imports it."""
        dataset = self.post("/api/datasets/", {"project": self.project.slug, "name": name}, 201)
        with path.open("rb") as handle:
            response = self.session.post(
                f"{self.url}/api/datasets/{dataset['id']}/versions/",
                files={"file": (path.name, handle)},
                timeout=60,
            )
        assert response.status_code == 202, response.text
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shown = self.get(f"/api/datasets/{dataset['id']}/")
            status = shown["imports"][0]["status"]
            # One read lists versions before imports: a version committed in between shows
            # as an import succeeded with no version yet, so wait for both.
            if status == "failed" or (status == "succeeded" and shown["latest_version"]):
                break
            time.sleep(0.2)
        assert shown["imports"][0]["status"] == "succeeded", shown["imports"]
        return int(shown["latest_version"]["id"])

    def run(self, run_id: int) -> dict[str, Any]:
        run: dict[str, Any] = self.get(f"/api/runs/{run_id}/")
        return run

    def wait_status(
        self, run_id: int, statuses: set[str], timeout_s: float, stack: Stack | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        run = self.run(run_id)
        while run["status"] not in statuses and time.monotonic() < deadline:
            time.sleep(0.1)
            run = self.run(run_id)
        if run["status"] not in statuses:
            logs = ""
            if stack is not None:
                logs = "\n".join(
                    f"--- {p.name}\n{p.log()[-4000:]}" for p in (stack.worker, stack.beat)
                )
            raise AssertionError(
                f"run {run_id} is {run['status']} after {timeout_s:g} s, wanted {statuses}: "
                f"{run.get('status_reason')}\n{run.get('last_error', '')}\n{logs}"
            )
        return run


@pytest.fixture
def api(stack: Stack, transactional_db: None) -> Api:
    return project_api(stack)


def project_api(stack: Stack) -> Api:
    """An API client for a fresh owner of a fresh project (committed: the live processes
    must see them)."""
    owner = User.objects.create_user(f"owner-{secrets.token_hex(3)}", password="x" * 20)
    slug = f"runs-{secrets.token_hex(3)}"
    project = Project.objects.create(name="Runs", slug=slug, created_by=owner)
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    _, raw = ApiToken.issue(owner, "runs-test")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {raw}"
    return Api(stack.web.info["url"], session, project, owner)


def trainer_processes(run_id: int) -> list[psutil.Process]:
    """Live trainer processes launched for `run_id`: a cold `python -m trainer run` and a
    warm runtime's client (`python -m trainer.warm run`) by their environment, a warm
    runtime's child by its name (its environment and command line are the runtime's)."""
    warm_name = process_name({"RLSTUDIO_RUN_ID": str(run_id)})
    found = []
    for process in psutil.process_iter(["cmdline", "name"]):
        try:
            if process.info["name"] == warm_name:
                found.append(process)
                continue
            cmdline = " ".join(process.info["cmdline"] or [])
            if "trainer" not in cmdline or " run " not in f"{cmdline} ":
                continue
            if process.environ().get("RLSTUDIO_RUN_ID") == str(run_id):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def eventually(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not true after {timeout_s:g} s")
