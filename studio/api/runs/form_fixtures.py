"""The run form's test fixtures: the real `/api/config/schema` and `/api/config/presets`
answers, which the frontend's form tests render. `scripts/gen-api.sh` writes them with the
API types; `tests/studio/test_api_types_fresh.py` fails when they are stale."""

from __future__ import annotations

import json
from pathlib import Path

from studio.api.runs.runs import resolved_presets
from studio.paths import REPO_ROOT
from trainer.config import RunConfig

FIXTURES = REPO_ROOT / "frontend" / "src" / "features" / "runs" / "fixtures"


def fixture_texts() -> dict[Path, str]:
    return {
        FIXTURES / "config-schema.json": json.dumps(RunConfig.model_json_schema(), indent=1),
        FIXTURES / "presets.json": json.dumps(resolved_presets(), indent=1),
    }


def write_fixtures() -> None:
    for path, text in fixture_texts().items():
        path.write_text(text)
