#!/usr/bin/env bash
# Regenerate the OpenAPI schema the frontend's TypeScript types come from, and the run
# form's fixtures (the served config schema and presets) its tests render.
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py spectacular --format openapi-json --validate --fail-on-warn \
  --file frontend/openapi.json
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py shell -c "from studio.api.runs.form_fixtures import write_fixtures; write_fixtures()"
(cd frontend && npm run --silent gen:api)
