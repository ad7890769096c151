"""Platform behaviour of the web app: health probe, SPA routes, production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_health_reports_database_and_broker_with_latency():
    response = Client().get("/api/health")
    body = response.json()
    assert body["components"]["database"]["status"] == "ok"
    assert body["components"]["broker"]["status"] == "ok"
    assert body["components"]["database"]["latency_ms"] >= 0
    assert set(body["components"]) == {"database", "broker", "ray"}


@pytest.mark.django_db
@override_settings(RAY_ADDRESS="http://127.0.0.1:9")
def test_health_is_503_and_names_the_component_that_fails():
    response = Client().get("/api/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["components"]["ray"]["status"] == "error"
    assert "Connection" in body["components"]["ray"]["detail"]


@pytest.mark.django_db
@override_settings(RAY_ADDRESS="")
def test_health_is_ok_when_ray_is_not_configured():
    response = Client().get("/api/health")
    assert response.status_code == 200
    assert response.json()["components"]["ray"]["status"] == "disabled"


@pytest.mark.django_db
@override_settings(REDIS_URL="redis://127.0.0.1:9/0")
def test_health_reports_an_unreachable_broker():
    body = Client().get("/api/health").json()
    assert body["components"]["broker"]["status"] == "error"


@pytest.mark.parametrize("path", ["/", "/runs", "/status", "/datasets/42"])
def test_client_side_routes_serve_the_app(path):
    response = Client().get(path)
    assert response.status_code == 200
    assert b"RL Studio" in response.content


@pytest.mark.parametrize("path", ["/api/nope", "/static/nope.js"])
def test_unknown_api_and_static_paths_are_404_not_the_app(path):
    assert Client().get(path).status_code == 404


def test_openapi_schema_is_served_and_matches_the_frontend_copy():
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    import json

    served = json.loads(response.content)
    committed = json.loads((REPO / "frontend" / "openapi.json").read_text())
    assert served == committed, "frontend/openapi.json is stale: run scripts/gen-api.sh"


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    env |= {
        "RLSTUDIO_ENV": "production",
        "SECRET_KEY": "x" * 40 + "production-only-secret-for-the-check-deploy-test",
        "ALLOWED_HOSTS": "studio.example.org",
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1/x"),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"),
    }
    return env | extra


def test_production_settings_pass_check_deploy_with_no_warnings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=_production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = _production_env()
    del env["SECRET_KEY"]
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
