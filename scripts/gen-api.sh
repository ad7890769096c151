#!/usr/bin/env bash
# Regenerate the OpenAPI schema the frontend's TypeScript types come from, the run
# requests' generic pickers cut from it (frontend/src/api/input-kinds.json), and the run
# form's fixtures (the served config schema and presets) its tests render.
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py spectacular --format openapi-json --validate --fail-on-warn \
  --file frontend/openapi.json
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py shell -c "from studio.api.runs.form_fixtures import write_fixtures; write_fixtures()"
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py shell -c "from studio.references.pickers import write_picker_schema; write_picker_schema()"
(cd frontend && npm run --silent gen:api)
