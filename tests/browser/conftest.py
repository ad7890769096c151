"""Fixtures of the browser tests: one live studio for the whole package, a chromium
browser, a page per test that fails it on console errors and failed requests, and a demo
run trained once for the tests that only need a finished run.

Browser tests never take pytest-django's `db`/`transactional_db`: a transactional test
flushes the database when it ends, which would wipe what the shared stack holds. They act
through the browser and the API, and use `studio_orm` for the rare direct look.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from tests import warm_runtimes
from tests.browser.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO_ROOT,
    TERMINAL,
    WIDE,
    LiveStudio,
    PageProblems,
    Shots,
    TrainedRun,
)
from tests.live import (
    free_port,
    join_ray_head,
    start_beat,
    start_celery_worker,
    start_ray_head,
    start_web_server,
    wait_for,
)

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
DEMO_RUN_OVERRIDES = [
    "trainer.total_steps=4",
    "trainer.val_every=2",
    "trainer.val_before_train=true",
    "checkpoint.save_every=2",
    "checkpoint.save_hf=false",
    "logging.samples_per_step=16",
    "logging.token_data_fraction=0.5",
    "resources.memory_gb=1",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    slots = [i for i, item in enumerate(items) if item.path.is_relative_to(here)]
    for i in slots:
        items[i].add_marker(pytest.mark.browser)
    # The demo run starts training with the package's studio; the modules that read it
    # (`trained_run`) go last, so the others run while it trains instead of after it (the
    # first of them waited 135 s for it in a clean-clone CI run). Whole modules move, so
    # their module-scoped fixtures are made once; the sort is stable: file order stays.
    waiting = {
        items[i].path for i in slots if "trained_run" in getattr(items[i], "fixturenames", ())
    }
    ordered = sorted((items[i] for i in slots), key=lambda item: item.path in waiting)
    for i, item in zip(slots, ordered, strict=True):
        items[i] = item


def _demo_var_dir(root: Path, demo_assets: Path, demo_tools_assets: Path) -> Path:
    """The run config's defaults and presets name `var/demo-model`, `var/demo-model-tools`
    and datasets under `var/demo-data`, which the launch resolves against the studio's var
    dir: a var dir laid out as `rlstudio up` seeds it, linking the tests' cached builds."""
    var = root / "var"
    data = var / "demo-data"
    data.mkdir(parents=True)
    (var / "demo-model").symlink_to(demo_assets / "model")
    (var / "demo-model-tools").symlink_to(demo_tools_assets / "model")
    for dataset in [*(demo_assets / "data").iterdir(), *(demo_tools_assets / "data").iterdir()]:
        (data / dataset.name).symlink_to(dataset)
    return var


@pytest.fixture(scope="package")
def browser_db(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """The test database. pytest-django creates it only when a collected test asks for a
    db fixture; browser tests never do (see above), so when they run alone, set it up."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    if connection.settings_dict["NAME"].startswith("test_"):
        yield
        return
    with django_db_blocker.unblock():
        created = setup_databases(verbosity=0, interactive=False, aliases={"default": True})
    try:
        yield
    finally:
        with django_db_blocker.unblock():
            _disconnect_everyone(connection.settings_dict["NAME"])
            teardown_databases(created, verbosity=0)


def _disconnect_everyone(database: str) -> None:
    """Postgres refuses to drop a database someone is connected to: this process's other
    connections (Playwright's greenlet has a context of its own, so the ORM may have opened
    one there) and any server that died without closing its own."""
    from django.db import connection, connections

    connections.close_all()
    with connection._nodb_cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        )


@pytest.fixture(scope="package")
def studio(
    browser_db: None,
    django_db_blocker: Any,
    demo_assets: Path,
    demo_tools_assets: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LiveStudio]:
    if not (REPO_ROOT / "frontend" / "dist" / "index.html").exists():
        pytest.fail(
            "the frontend is not built: run `make frontend` (or `npm run build` in frontend/)"
        )
    if not CHROMIUM.exists():
        pytest.fail(f"Debian's chromium is missing at {CHROMIUM}: `make browser` installs it")
    redis.Redis.from_url(REDIS_URL).flushdb()  # no stale task messages from earlier tests
    log_dir = tmp_path_factory.mktemp("browser-stack")
    port = free_port()
    env = {
        "REDIS_URL": REDIS_URL,
        "RLSTUDIO_URL": f"http://127.0.0.1:{port}",
        "RLSTUDIO_RAY_JOB_PREFIX": f"b{secrets.token_hex(3)}",
        "RLSTUDIO_RECONCILE_INTERVAL_S": "1",
        # Every browser test signs a user in from 127.0.0.1; the login limit has its own
        # tests (tests/security/test_login_throttle.py).
        "RLSTUDIO_LOGIN_RATE": "600/min",
        "RLSTUDIO_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",  # the notification sink's host
        "RLSTUDIO_LAUNCH_GRACE_S": "4",
        "RLSTUDIO_CHECKPOINT_ROOT": str(tmp_path_factory.mktemp("checkpoints")),
        "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")),
        "RLSTUDIO_DATA_CACHE": str(tmp_path_factory.mktemp("data-cache")),
        "RLSTUDIO_DEMO_MODEL_DIR": str(demo_assets / "model"),
        # The trainer starts elsewhere than the var dir, as under `rlstudio up` with
        # RLSTUDIO_VAR_DIR set: the demo paths must still reach the var dir.
        "RLSTUDIO_VAR_DIR": str(
            _demo_var_dir(tmp_path_factory.mktemp("studio"), demo_assets, demo_tools_assets)
        ),
        "RLSTUDIO_TRAINER_WORKDIR": str(tmp_path_factory.mktemp("trainer")),
        # A quota for the runs page's storage meter to show, far above what any test writes.
        "RLSTUDIO_PROJECT_STORAGE_QUOTA_GB": "20",
    }
    processes = []
    warm = warm_runtimes.private_folder()  # the jobs' warm runtimes, stopped with the stack
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(warm_runtimes.DIR_ENV, str(warm))
        try:
            # Four logical CPUs on a 2-core machine: the shared demo run, a run a test
            # starts and a reward test-run may overlap; they only share the cores.
            ray = start_ray_head(log_dir, num_cpus=4)
            processes.append(ray)
            env["RAY_ADDRESS"] = ray.info["address"]
            join_ray_head(patch, ray)  # this process is a Ray client too
            processes.append(start_web_server(log_dir, port=port, **env))
            processes.append(start_beat(log_dir, **env))
            processes.append(start_celery_worker(log_dir, concurrency=2, **env))
            live = LiveStudio(f"http://127.0.0.1:{port}", processes, env)
            # Every component healthy (Ray's Jobs API answers late on a loaded machine),
            # so no test sees a 503 from a stack that is still starting.
            wait_for(
                lambda: requests.get(f"{live.url}/api/health", timeout=5).status_code == 200,
                120,
                "studio health (database, redis, celery, ray)",
            )
            with django_db_blocker.unblock():
                _start_demo_run(live)
                yield live
        finally:
            for process in reversed(processes):
                process.stop()
            warm_runtimes.remove_folder(warm)
            with django_db_blocker.unblock():
                from django.core.management import call_command

                call_command("flush", interactive=False, verbosity=0)


def _start_demo_run(live: LiveStudio) -> None:
    """Queue the shared demo run at once, so it trains while the first tests run."""
    owner = live.new_user("trained")
    response = live.api(owner).post(
        f"{live.url}/api/runs/",
        json={
            "project": owner.project_slug,
            "name": "demo run",
            "preset": "grpo-tiny-arith",
            "dataset_version": live.demo_dataset(owner),
            "overrides": DEMO_RUN_OVERRIDES,
            "tags": ["demo"],
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    live.demo_run_id = int(response.json()["id"])
    live.demo_owner = owner


@pytest.fixture(scope="package")
def trained_run(studio: LiveStudio) -> TrainedRun:
    """The demo GRPO run (4 steps, validation, checkpoints, samples with token data),
    trained to success on the live Ray head."""
    assert studio.demo_run_id is not None and studio.demo_owner is not None
    run = studio.wait_for_run(studio.demo_owner, studio.demo_run_id, TERMINAL, timeout_s=600)
    assert run["status"] == "succeeded", run
    return TrainedRun(studio.demo_run_id, studio.demo_owner, studio.demo_owner.project_slug, run)


@pytest.fixture
def studio_orm(django_db_blocker: Any) -> Iterator[None]:
    """Direct ORM access to the shared stack's database (committed at once)."""
    with django_db_blocker.unblock():
        yield


@pytest.fixture(scope="package")
def browser(studio: LiveStudio) -> Iterator[Any]:
    """Chromium, started after the stack: Playwright's sync API runs an event loop in this
    thread, and Django refuses ORM calls under a running loop unless told it is safe. Here
    it is (one thread, no awaits), and the servers, spawned before, never see the flag."""
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, studio: LiveStudio, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context and page (1440x900). `page.shot(name)` saves a numbered
    screenshot (`narrow=True`: 390 px wide). The test fails if the page logged a console
    error, threw, or saw a request fail or answer 5xx."""
    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems = PageProblems()
    problems.watch(page, studio.url)
    page.shot = Shots(page, request.node.name)
    try:
        yield page
    finally:
        context.close()
    if problems.items:
        pytest.fail("the browser reported problems:\n" + "\n".join(problems.items), pytrace=False)
