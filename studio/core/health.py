"""Probes for the services the studio depends on: database, broker, Ray.

Each probe is bounded by a short timeout so `/api/health` answers quickly even
when a dependency hangs; a probe never raises, it reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import redis
import requests
from django.conf import settings
from django.db import connection

from trainer.distributed import ray_auth

ProbeStatus = Literal["ok", "error", "disabled"]
PROBE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class ProbeResult:
    status: ProbeStatus
    latency_ms: float
    detail: str


def _timed(check: Callable[[], str]) -> ProbeResult:
    started = time.perf_counter()
    try:
        detail = check()
    except Exception as exc:  # a probe reports every failure instead of raising
        return ProbeResult("error", _elapsed_ms(started), f"{type(exc).__name__}: {exc}")
    return ProbeResult("ok", _elapsed_ms(started), detail)


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def probe_database() -> ProbeResult:
    def check() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            row = cursor.fetchone()
        return str(row[0]).split(",")[0] if row else ""

    return _timed(check)


def probe_broker() -> ProbeResult:
    def check() -> str:
        client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=PROBE_TIMEOUT_S,
            socket_timeout=PROBE_TIMEOUT_S,
        )
        try:
            client.ping()
            return f"redis {client.info('server')['redis_version']}"
        finally:
            client.close()

    return _timed(check)


def probe_ray() -> ProbeResult:
    address = settings.RAY_ADDRESS
    if not address:
        return ProbeResult("disabled", 0.0, "RAY_ADDRESS is not set")

    def check() -> str:
        # The Jobs API lives on the dashboard's HTTP port; /api/version answers
        # once the head (GCS + dashboard) is up.
        base = address if address.startswith("http") else f"http://{address}"
        response = requests.get(
            f"{base.rstrip('/')}/api/version",
            headers=ray_auth.auth_headers(),
            timeout=PROBE_TIMEOUT_S,
        )
        response.raise_for_status()
        return f"ray {response.json().get('ray_version', '?')}"

    return _timed(check)


PROBES: dict[str, Callable[[], ProbeResult]] = {
    "database": probe_database,
    "broker": probe_broker,
    "ray": probe_ray,
}
