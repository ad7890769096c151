"""Reading the deploy/ files the way their tools do, for the offline checks in tests/deploy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = REPO_ROOT / "deploy"
COMPOSE_FILE = DEPLOY / "compose.yaml"
ENV_EXAMPLE = DEPLOY / ".env.example"
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME?message}; $$ escapes.
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=value lines, as `docker compose --env-file` reads them (no quoting used here)."""
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", key):
            raise ValueError(f"{path.name}:{number}: not a KEY=value line: {line!r}")
        values[key] = value
    return values


def variables_in(text: str) -> set[str]:
    return {m[1] for m in _VARIABLE.finditer(text) if m[1]}


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's variable substitution; an unset variable without a default is an error
    (compose would substitute an empty string and warn, which hides a missing setting)."""

    def substitute(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        name, op, arg = match[1], match[2], match[3]
        value = env.get(name)
        if value is not None and (value or not (op or "").startswith(":")):
            return value
        if op in ("-", ":-"):
            return arg or ""
        raise KeyError(f"${{{name}}} is used but not set in {ENV_EXAMPLE.name}")

    return _VARIABLE.sub(substitute, text)


def compose_tree(env: dict[str, str]) -> dict[str, Any]:
    """The compose file after substitution; YAML anchors and `<<` merge keys resolved by
    PyYAML as compose does (the compose-spec parser reads JSON without them)."""
    tree: dict[str, Any] = yaml.safe_load(interpolate(COMPOSE_FILE.read_text(), env))
    return tree
