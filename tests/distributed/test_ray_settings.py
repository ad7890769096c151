"""Every Ray process of a private head runs with Ray's metrics exporter off
(trainer.distributed.ray_settings says why: its thread crashed our driver at exit).

What the settings do inside Ray is measured by bench/ray_exporter_threads.py (gdb); here,
that the head's workers and this driver get them."""

from __future__ import annotations

import os

import pytest

from trainer.distributed.ray_settings import NO_METRICS_EXPORT_ENV

pytestmark = pytest.mark.slow


def metrics_settings(env: dict[str, str] | os._Environ[str]) -> dict[str, str | None]:
    return {name: env.get(name) for name in NO_METRICS_EXPORT_ENV}


def test_the_driver_and_a_worker_run_without_rays_metrics_exporter(ray_head: str) -> None:
    import ray

    @ray.remote
    def worker_settings() -> dict[str, str | None]:
        return metrics_settings(os.environ)

    assert metrics_settings(os.environ) == NO_METRICS_EXPORT_ENV
    assert ray.get(worker_settings.remote()) == NO_METRICS_EXPORT_ENV


def test_the_suites_head_has_its_workers_dump_core_when_they_crash(ray_head: str) -> None:
    """tests.crash_cores: a crashed worker's core is read into the failing test's report."""
    import resource

    import ray

    @ray.remote
    def core_limit() -> tuple[int, int]:
        return resource.getrlimit(resource.RLIMIT_CORE)

    soft, hard = ray.get(core_limit.remote())
    assert soft == hard and soft != 0
