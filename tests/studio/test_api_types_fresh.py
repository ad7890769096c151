"""The frontend's API types are generated from the schema the studio serves; this fails
when someone changes the API without regenerating them (`bash scripts/gen-api.sh`).

It runs the same two steps as that script, into a temporary folder: drf-spectacular's
schema (validated, warnings fatal) and openapi-typescript from frontend/node_modules.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from django.core.management import call_command

from studio.api.runs.form_fixtures import fixture_texts
from studio.paths import REPO_ROOT
from studio.references.pickers import PICKER_SCHEMA, picker_schema_text

FRONTEND = REPO_ROOT / "frontend"
GENERATOR = FRONTEND / "node_modules" / ".bin" / "openapi-typescript"
REGENERATE = (
    "Run `bash scripts/gen-api.sh` and commit frontend/openapi.json, schema.d.ts and "
    "input-kinds.json."
)


def test_the_committed_openapi_json_and_typescript_types_match_the_served_schema(
    tmp_path: Path,
) -> None:
    assert GENERATOR.exists(), f"{GENERATOR} is missing: run `npm ci` in frontend/."
    node = shutil.which("node")
    assert node, "node is not on PATH (the frontend's tools need it)."
    schema = tmp_path / "openapi.json"
    call_command(
        "spectacular", format="openapi-json", validate=True, fail_on_warn=True, file=str(schema)
    )
    committed = json.loads((FRONTEND / "openapi.json").read_text())
    assert json.loads(schema.read_text()) == committed, (
        f"frontend/openapi.json is stale. {REGENERATE}"
    )

    picker_cut = picker_schema_text(committed)
    assert PICKER_SCHEMA.read_text() == picker_cut, f"{PICKER_SCHEMA.name} is stale. {REGENERATE}"

    types = tmp_path / "schema.d.ts"
    subprocess.run(
        [node, str(GENERATOR), str(schema), "-o", str(types)],
        cwd=FRONTEND,
        check=True,
        capture_output=True,
        timeout=120,
    )
    stale = types.read_text() != (FRONTEND / "src" / "api" / "schema.d.ts").read_text()
    assert not stale, f"frontend/src/api/schema.d.ts is stale. {REGENERATE}"


def test_the_run_form_fixtures_are_the_served_config_schema_and_presets() -> None:
    # The form tests render these as "the real schema"; a stale copy would test an old one.
    for path, text in fixture_texts().items():
        assert path.read_text() == text, f"{path.name} is stale. {REGENERATE}"
