"""docs/deploy.md names every variable a deployment can set."""

from __future__ import annotations

import re

from tests.deploy.files import ENV_EXAMPLE, REPO_ROOT, read_env_file

DOC = REPO_ROOT / "docs" / "deploy.md"


def test_every_studio_setting_and_example_variable_is_documented() -> None:
    settings = (REPO_ROOT / "studio" / "settings.py").read_text()
    names = set(re.findall(r"(?:environ\.get\(|_required\()\s*\"([A-Z_]+)\"", settings))
    names |= set(read_env_file(ENV_EXAMPLE))
    assert len(names) > 30
    text = DOC.read_text()
    assert {name for name in names if f"`{name}`" not in text} == set()
