"""deploy/compose.yaml, checked offline with the compose-spec parser (compose_spec, the
Rust crate's Python bindings from PyPI): it parses after substitution from
deploy/.env.example, and every build context, Dockerfile, variable and volume it names
exists."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from compose_spec import PyCompose
from redis.connection import parse_url

from tests.deploy.files import (
    COMPOSE_FILE,
    DEPLOY,
    ENV_EXAMPLE,
    compose_tree,
    interpolate,
    read_env_file,
    variables_in,
)
from tests.deploy.redis_run import answers_without_password, run_start_command

STUDIO_SERVICES = ("migrate", "web", "worker", "beat")
RAY_SERVICES = ("ray-head", "ray-worker")
REQUIRED_SECRETS = ("RAY_AUTH_TOKEN", "REDIS_PASSWORD")


@pytest.fixture(scope="module")
def example_env() -> dict[str, str]:
    return read_env_file(ENV_EXAMPLE)


@pytest.fixture(scope="module")
def services(example_env: dict[str, str]) -> dict[str, Any]:
    parsed = PyCompose.from_json(json.dumps(compose_tree(example_env)))
    tree: dict[str, Any] = parsed.to_dict()
    return dict(tree["services"])


def test_it_parses_with_the_compose_spec_parser_after_substitution(
    services: dict[str, Any],
) -> None:
    expected = {"postgres", "redis", "migrate", "web", "worker", "beat", "ray-head", "ray-worker"}
    assert set(services) == expected


def test_the_parser_refuses_a_misspelt_service_key(example_env: dict[str, str]) -> None:
    tree = compose_tree(example_env)
    tree["services"]["web"]["helthcheck"] = tree["services"]["web"].pop("healthcheck")
    with pytest.raises(ValueError, match="helthcheck"):
        PyCompose.from_json(json.dumps(tree))


def test_every_variable_it_uses_is_in_the_example_and_every_example_line_is_used(
    example_env: dict[str, str],
) -> None:
    used = variables_in(COMPOSE_FILE.read_text())
    assert used - set(example_env) == set(), "used in compose.yaml, missing in .env.example"
    # The rest reach the studio's containers through `env_file`: each must be a variable
    # the studio's code reads, or the example documents a setting that does nothing.
    source = "\n".join(p.read_text() for p in (DEPLOY.parent / "studio").rglob("*.py"))
    read_by_studio = set(re.findall(r"(?:environ\.get\(|_required\()\s*\"([A-Z_]+)\"", source))
    assert set(example_env) - used - read_by_studio == set()


def test_an_unset_variable_is_an_error_not_an_empty_string() -> None:
    with pytest.raises(KeyError, match="NOT_IN_THE_EXAMPLE"):
        interpolate("image: ${NOT_IN_THE_EXAMPLE}", {})
    assert interpolate("a: ${X:-1} $${Y}", {}) == "a: 1 ${Y}"


def test_every_build_context_and_dockerfile_exists(services: dict[str, Any]) -> None:
    built = {name: s["build"] for name, s in services.items() if "build" in s}
    assert set(STUDIO_SERVICES) | {"ray-head", "ray-worker"} <= set(built)
    for name, build in built.items():
        context = (COMPOSE_FILE.parent / build["context"]).resolve()
        assert context.is_dir(), f"{name}: build context {context} is missing"
        assert (context / build["dockerfile"]).is_file(), f"{name}: {build['dockerfile']}"


def test_every_named_volume_is_declared_and_every_declared_one_is_used(
    example_env: dict[str, str], services: dict[str, Any]
) -> None:
    declared = set(compose_tree(example_env)["volumes"])
    used = set()
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]  # the parser writes the short syntax back
            if not source.startswith((".", "/")):
                used.add(source)
    assert used == declared
    # Trainers on the Ray nodes and the studio see the same checkpoints.
    for name in ("web", "ray-head", "ray-worker"):
        targets = {v.split(":")[1] for v in services[name]["volumes"]}
        assert "/checkpoints" in targets, name


def test_each_env_file_has_its_example(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for entry in service.get("env_file", []):
            path = entry["path"] if isinstance(entry, dict) else entry
            assert (COMPOSE_FILE.parent / f"{path}.example").is_file(), (name, path)


def test_web_is_health_checked_on_api_health_and_the_apps_wait_for_migrations(
    services: dict[str, Any],
) -> None:
    assert "/api/health" in " ".join(services["web"]["healthcheck"]["test"])
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
    devices = services["ray-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["capabilities"] == ["gpu"]


def test_everything_that_talks_to_ray_has_token_auth_on_and_the_token(
    example_env: dict[str, str], services: dict[str, Any]
) -> None:
    for name in STUDIO_SERVICES + RAY_SERVICES:
        environment = services[name]["environment"]
        assert environment["RAY_AUTH_MODE"] == "token", name
        assert environment["RAY_AUTH_TOKEN"] == example_env["RAY_AUTH_TOKEN"], name
    # Not a setting: no variable of the env file turns it off (`environment` outranks
    # `env_file`, and the example sets no RAY_AUTH_MODE).
    assert "RAY_AUTH_MODE" not in variables_in(COMPOSE_FILE.read_text())
    assert "RAY_AUTH_MODE" not in example_env


@pytest.mark.parametrize("name", REQUIRED_SECRETS)
def test_the_ray_token_and_the_redis_password_are_required(
    example_env: dict[str, str], name: str
) -> None:
    # `${NAME:?message}`: compose stops when the variable is unset or empty.
    for env in ({k: v for k, v in example_env.items() if k != name}, {**example_env, name: ""}):
        with pytest.raises(KeyError, match=name):
            compose_tree(env)


class _RayVersion(BaseHTTPRequestHandler):
    token = ""

    def do_GET(self) -> None:
        ok = self.path == "/api/version" and (
            self.headers.get("Authorization") == f"Bearer {self.token}"
        )
        self.send_response(200 if ok else 401)
        self.end_headers()
        self.wfile.write(b'{"ray_version": "2.60.0"}' if ok else b"")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def ray_dashboard_wanting(token: str) -> Iterator[int]:
    handler = type("Handler", (_RayVersion,), {"token": token})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_ray_head_health_check_sends_the_token(
    example_env: dict[str, str], services: dict[str, Any]
) -> None:
    kind, *argv = services["ray-head"]["healthcheck"]["test"]
    assert kind == "CMD" and argv[:2] == ["python", "-c"]
    assert "127.0.0.1:8265/api/version" in argv[2]
    token = example_env["RAY_AUTH_TOKEN"]
    with ray_dashboard_wanting(token) as port:
        code = argv[2].replace("127.0.0.1:8265", f"127.0.0.1:{port}")

        def check(env_token: str) -> int:
            env = {"RAY_AUTH_TOKEN": env_token, "PATH": "/usr/bin:/bin"}
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, timeout=60
            )
            return done.returncode

        assert check(token) == 0
        assert check("another-token") != 0  # 401 fails the check


def test_redis_wants_its_password_and_the_studio_has_it_in_redis_url(
    example_env: dict[str, str], services: dict[str, Any], tmp_path: Path
) -> None:
    password = example_env["REDIS_PASSWORD"]
    redis_service = services["redis"]
    assert redis_service["environment"] == {"REDISCLI_AUTH": password}
    # Never on a command line (the host's process list shows every account's).
    assert password not in json.dumps(redis_service["command"])
    for name in STUDIO_SERVICES:
        url = services[name]["environment"]["REDIS_URL"]
        assert parse_url(url)["password"] == password, name
        assert parse_url(url)["host"] == "redis", name

    with run_start_command(redis_service["command"], password, tmp_path) as running:
        assert not answers_without_password(running.socket)
        health_check = redis_service["healthcheck"]["test"]  # CMD-SHELL, as a string
        assert running.health_check(health_check, password) == 0
        assert running.health_check(health_check, "a-wrong-password") != 0
