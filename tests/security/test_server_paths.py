"""No request makes the server read or name a path of its choosing: config validation
refuses verl's tool config path without opening it, and run configs take no paths."""

from __future__ import annotations

from rest_framework.test import APIClient


def member(world) -> APIClient:
    return world.client("member")


def test_validating_a_verl_tool_config_path_reads_nothing(world, tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("tools: []\n" + "#" * 1_000_000)
    for target in ("/proc/self/status", str(big)):
        response = member(world).post(
            "/api/config/validate",
            {"overrides": [f"actor_rollout_ref.rollout.multi_turn.tool_config_path={target}"]},
            format="json",
        )
        assert response.status_code == 200
        [message] = response.json()["errors"]["overrides"]
        assert "a request may not do" in message
        assert "Name:" not in message and "expected a verl tool config" not in message


def test_a_run_config_naming_a_file_or_an_internal_url_is_refused(world):
    for override in (
        "data.val_files=[http://127.0.0.1:8265/api/jobs/]",
        "logging.jsonl_path=/etc/cron.d/x",
        "actor_rollout_ref.model.path=/root",
    ):
        response = member(world).post(
            "/api/runs/",
            {"project": "alpha", "name": "r", "dataset": 1, "overrides": [override]},
            format="json",
        )
        assert response.status_code == 400, override
        assert "a request may not do" in response.json()["error"]["message"]
    # The legitimate request: the built-in environment, chosen by name.
    ok = member(world).post(
        "/api/config/validate",
        {"overrides": ["rollout.multi_turn.enabled=true", "rollout.multi_turn.environment=python"]},
        format="json",
    )
    assert ok.json()["valid"] is True
