#!/usr/bin/env bash
# Regenerate the OpenAPI schema the frontend's TypeScript types come from.
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASE_URL=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres} \
  .venv/bin/python manage.py spectacular --format openapi-json --validate --fail-on-warn \
  --file frontend/openapi.json
(cd frontend && npm run --silent gen:api)
