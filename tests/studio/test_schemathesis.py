"""schemathesis against the served OpenAPI schema, in process through WSGI.

Every operation of /api/schema/ gets a bounded, derandomized set of generated requests
(valid and invalid: wrong types, missing fields, NUL bytes, huge numbers), sent as the
project's *member* with a personal token. Two checks: no response is a server error,
and every documented response matches its schema.

Path and query parameters that name objects are drawn half from the seeded objects of
the permission matrix (so handlers run past the 404), half as generated. Each operation
is its own test, in its own rolled-back savepoint, so a DELETE never starves the next
operation of its objects. Nothing is excluded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from studio.wsgi import application
from tests.studio.test_permission_matrix import Seed, fresh_throttles, seed

__all__ = ["fresh_throttles", "seed"]  # fixtures used here, defined with the matrix

EXAMPLES_PER_OPERATION = 15
CSRF_SECRET = "x" * 32  # a well-formed CSRF secret, sent as both cookie and header

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
schema.config.generation.update(
    max_examples=EXAMPLES_PER_OPERATION,
    deterministic=True,
    with_security_parameters=False,  # our token is sent on every request instead
)

# The seeded objects of the running test; the hooks below read them.
CURRENT: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def seeded_targets(seed: Seed) -> Iterator[None]:
    # Like Django's test client: a request's end must not close the connection that
    # holds the test's transaction (WSGIHandler closes it via close_old_connections).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    o = seed.alpha
    CURRENT.update(
        slug=o.slug,
        dataset=o.dataset,
        function=o.function,
        run=o.run,
        cancelled_run=o.cancelled_run,
        dataset_version=o.dataset_version,
        reward_version=o.reward_version,
        sample=o.sample,
        checkpoint=o.checkpoint,
        evaluation=o.evaluation,
        token=seed.member_spare_token,
        auth=f"Bearer {seed.tokens['member']}",
    )
    yield
    CURRENT.clear()
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def seeded_path(path: str, generated: dict[str, Any]) -> dict[str, Any]:
    known = dict(generated)
    if "slug" in known:
        known["slug"] = CURRENT["slug"]
    if "dataset_id" in known:
        known["dataset_id"] = CURRENT["dataset"]
    if "function_id" in known:
        known["function_id"] = CURRENT["function"]
    if "checkpoint_id" in known:
        known["checkpoint_id"] = CURRENT["checkpoint"]
    if "number" in known:
        known["number"] = 1
    if "id" in known:
        resource = path.split("/")[2]
        seeded = {
            "datasets": CURRENT["dataset"],
            "reward-functions": CURRENT["function"],
            "runs": CURRENT["cancelled_run"] if path.endswith("/resume/") else CURRENT["run"],
            "samples": CURRENT["sample"],
            "evaluations": CURRENT["evaluation"],
            "tokens": CURRENT["token"],
        }
        # Resources without a seeded object keep the generated id (a 404 is an answer too).
        known["id"] = seeded.get(resource, known["id"])
    return known


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    if not isinstance(path_parameters, dict) or not path_parameters:
        return st.just(path_parameters)
    path = context.operation.path
    return st.sampled_from([seeded_path(path, path_parameters), path_parameters])


@schema.hook
def flatmap_query(context: Any, query: dict[str, Any] | None) -> Any:
    if not isinstance(query, dict) or not ({"run", "runs", "ids", "sample"} & set(query)):
        return st.just(query)
    known = dict(query)
    if "ids" in known:
        known["ids"] = str(CURRENT["run"])
    if "run" in known:
        known["run"] = CURRENT["run"]
    if "runs" in known:
        known["runs"] = str(CURRENT["run"])
    if "sample" in known:  # a rollout timeline follows a seeded sample's prompt
        known["sample"] = CURRENT["sample"]
    return st.sampled_from([known, query])


BODY_REFERENCES = {
    "project": "slug",
    "dataset_version": "dataset_version",
    "reward_version": "reward_version",
    "dataset": "dataset",
}


@schema.hook
def flatmap_body(context: Any, body: Any) -> Any:
    if not isinstance(body, dict) or not (set(BODY_REFERENCES) & set(body)):
        return st.just(body)
    known = {
        key: CURRENT[BODY_REFERENCES[key]] if key in BODY_REFERENCES else value
        for key, value in body.items()
    }
    return st.sampled_from([known, body])


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_answers_every_generated_request_without_server_errors_and_as_documented(
    case: Any, db: None
) -> None:
    case.call_and_validate(
        # A token for the API; a CSRF cookie and header pair so /api/auth/login (CSRF
        # protected even for anonymous callers) runs its handler instead of answering 403.
        headers={"Authorization": CURRENT["auth"], "X-CSRFToken": CSRF_SECRET},
        cookies={"csrftoken": CSRF_SECRET},
        checks=[not_a_server_error, response_schema_conformance],
    )
