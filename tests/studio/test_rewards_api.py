"""Reward functions: templates, immutable versions, diffs and sandboxed test-runs."""

from __future__ import annotations

import hashlib
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from studio.projects.models import AuditEvent
from studio.rewards.models import RewardVersion
from tests.rewards.conftest import needs_full_sandbox
from tests.verl_data import VERL_GSM8K, verl_parquet
from trainer.rewards import builtin_source

needs_sandbox = needs_full_sandbox()

EXACT = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    return float(solution_str.strip() == str(ground_truth))
"""


def create_function(world, who: str = "member", **fields) -> dict:
    body = {"project": "alpha", "name": "gsm8k", **fields}
    response = world.client(who).post("/api/reward-functions/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def push(world, function_id: int, code: str, who: str = "member", **fields):
    return world.client(who).post(
        f"/api/reward-functions/{function_id}/versions/",
        {"code": code, **fields},
        format="json",
    )


def test_templates_list_every_built_in_with_its_code(world):
    templates = world.client("viewer").get("/api/reward-templates/").json()
    by_name = {t["name"]: t for t in templates}
    assert {"gsm8k", "exact_match", "boxed_math", "countdown"} <= set(by_name)
    assert by_name["gsm8k"]["code"] == builtin_source("gsm8k")
    assert by_name["gsm8k"]["description"].startswith("GSM8K")


def test_creating_from_a_template_makes_version_one_and_is_audited(world):
    created = create_function(world, from_template="gsm8k")
    latest = created["latest_version"]
    assert created["version_count"] == 1
    assert latest["number"] == 1
    assert latest["author"] == "member"
    assert latest["code_hash"] == hashlib.sha256(builtin_source("gsm8k").encode()).hexdigest()
    version = world.client("viewer").get(f"/api/reward-functions/{created['id']}/versions/1/")
    assert version.json()["code"] == builtin_source("gsm8k")
    assert AuditEvent.objects.filter(action="reward.create", actor=world.member).exists()
    assert AuditEvent.objects.filter(action="reward.push", actor=world.member).exists()


def test_unknown_templates_and_duplicate_names_are_400(world):
    client = world.client("member")
    unknown = client.post(
        "/api/reward-functions/",
        {"project": "alpha", "name": "x", "from_template": "nope"},
        format="json",
    )
    assert unknown.status_code == 400
    assert unknown.json()["error"]["message"].startswith("from_template:")
    create_function(world)
    again = client.post(
        "/api/reward-functions/", {"project": "alpha", "name": "gsm8k"}, format="json"
    )
    assert again.status_code == 400
    assert "already exists" in again.json()["error"]["message"]


def test_pushing_versions_numbers_and_hashes_them(world):
    function = create_function(world)
    assert function["latest_version"] is None
    first = push(world, function["id"], EXACT, message="exact match")
    assert first.status_code == 201, first.json()
    assert first.json()["number"] == 1
    assert first.json()["code_hash"] == hashlib.sha256(EXACT.encode()).hexdigest()
    second = push(world, function["id"], VERL_GSM8K, message="verl gsm8k")
    assert second.json()["number"] == 2
    listed = world.client("viewer").get(f"/api/reward-functions/{function['id']}/versions/")
    assert [(v["number"], v["message"]) for v in listed.json()] == [
        (2, "verl gsm8k"),
        (1, "exact match"),
    ]
    detail = world.client("viewer").get(f"/api/reward-functions/{function['id']}/").json()
    assert detail["latest_version"]["number"] == 2
    url = f"/api/reward-functions/{function['id']}/versions/1/"
    owner = world.client("owner")
    assert owner.patch(url, {"code": "x"}, format="json").status_code == 405
    assert owner.delete(url).status_code == 405
    assert RewardVersion.objects.get(function_id=function["id"], number=1).code == EXACT


def test_a_syntax_error_is_400_naming_the_line_and_nothing_is_stored(world):
    function = create_function(world)
    code = "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
    code += "    return 1.0\n\n\ndef helper(:\n    pass\n"
    response = push(world, function["id"], code)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"].startswith("code: syntax error at line 5")
    assert "def helper(:" in error["message"]
    assert not RewardVersion.objects.exists()


def test_code_without_the_entry_point_is_400(world):
    function = create_function(world)
    response = push(world, function["id"], "def score(x):\n    return 1\n")
    assert response.status_code == 400
    assert "no function named 'compute_score'" in response.json()["error"]["message"]
    # verl calls it by keyword: the sandbox would refuse this at load, so saving does too
    positional = push(
        world, function["id"], "def score(a, b, c, d):\n    return 1\n", entrypoint="score"
    )
    assert positional.status_code == 400
    assert "no argument named 'data_source'" in positional.json()["error"]["message"]
    renamed = push(
        world,
        function["id"],
        "def score(data_source, solution_str, ground_truth, extra_info):\n    return 1\n",
        entrypoint="score",
    )
    assert renamed.status_code == 201


def test_diff_between_two_versions_is_a_unified_diff(world):
    function = create_function(world)
    push(world, function["id"], EXACT)
    push(world, function["id"], EXACT.replace("strip()", "strip().lower()"))
    client = world.client("viewer")
    body = client.get(f"/api/reward-functions/{function['id']}/diff/?from=1&to=2").json()
    assert (body["from_version"], body["to_version"]) == (1, 2)
    lines = body["diff"].splitlines()
    assert lines[:2] == ["--- gsm8k v1", "+++ gsm8k v2"]
    assert "-    return float(solution_str.strip() == str(ground_truth))" in lines
    assert "+    return float(solution_str.strip().lower() == str(ground_truth))" in lines
    default = client.get(f"/api/reward-functions/{function['id']}/diff/").json()
    assert default["diff"] == body["diff"]  # latest against the one before
    same = client.get(f"/api/reward-functions/{function['id']}/diff/?from=2&to=2").json()
    assert same["diff"] == ""
    missing = client.get(f"/api/reward-functions/{function['id']}/diff/?from=1&to=9")
    assert missing.status_code == 400
    assert "No version 9" in missing.json()["error"]["message"]
    assert client.get(f"/api/reward-functions/{function['id']}/diff/?from=-1").status_code == 400


def test_other_projects_reward_functions_are_404(world):
    function = create_function(world, from_template="exact_match")
    eve = world.client("outsider")
    base = f"/api/reward-functions/{function['id']}"
    for url in (f"{base}/", f"{base}/versions/", f"{base}/versions/1/", f"{base}/diff/"):
        assert eve.get(url).status_code == 404, url
    assert push(world, function["id"], EXACT, who="outsider").status_code == 404
    test = eve.post(f"{base}/versions/1/test/", {"completions": []}, format="json")
    assert test.status_code == 404
    assert eve.get("/api/reward-functions/").json()["results"] == []
    created = eve.post("/api/reward-functions/", {"project": "alpha", "name": "x"}, format="json")
    assert created.status_code == 404


def test_viewers_read_but_cannot_push_or_test(world):
    function = create_function(world, from_template="exact_match")
    assert push(world, function["id"], EXACT, who="viewer").status_code == 403
    response = world.client("viewer").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {"completions": [{"solution_str": "a", "ground_truth": "a"}]},
        format="json",
    )
    assert response.status_code == 403
    assert world.client(None).get("/api/reward-functions/").status_code in (401, 403)
    assert world.client(None).get("/api/reward-templates/").status_code in (401, 403)


def test_only_owners_delete_a_reward_function(world):
    function = create_function(world, from_template="exact_match")
    url = f"/api/reward-functions/{function['id']}/"
    assert world.client("member").delete(url).status_code == 403
    assert world.client("owner").delete(url).status_code == 204
    assert not RewardVersion.objects.exists()


def test_a_test_run_needs_exactly_one_source_and_bounded_rows(world):
    function = create_function(world, from_template="exact_match")
    url = f"/api/reward-functions/{function['id']}/versions/1/test/"
    client = world.client("member")
    assert client.post(url, {}, format="json").status_code == 400
    too_many = [{"solution_str": "a", "ground_truth": "a"}] * 201
    assert client.post(url, {"completions": too_many}, format="json").status_code == 400
    rows = client.post(url, {"dataset_version": 1, "rows": 1000}, format="json")
    assert rows.status_code == 400
    other = client.post(url, {"dataset_version": 999}, format="json")
    assert other.status_code == 400
    assert "No dataset version 999" in other.json()["error"]["message"]


@needs_sandbox
def test_a_verl_gsm8k_module_test_runs_unchanged_on_pasted_completions(world):
    function = create_function(world, code=VERL_GSM8K, message="from verl")
    completions = [
        {
            "solution_str": "so the answer is #### 72",
            "ground_truth": "72",
            "data_source": "openai/gsm8k",
        },
        {"solution_str": "#### 1,234", "ground_truth": "1234"},
        {"solution_str": "I think 72", "ground_truth": "72"},
        {"solution_str": "#### 71", "ground_truth": "72"},
    ]
    response = world.client("member").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {"completions": completions},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [(r["score"], r["error"]) for r in body["rows"]] == [
        (1.0, ""),
        (1.0, ""),
        (0.0, ""),
        (0.0, ""),
    ]
    assert body["rows"][0]["data_source"] == "openai/gsm8k"
    summary = body["summary"]
    assert summary["count"] == 4 and summary["failed"] == 0 and summary["error_rate"] == 0.0
    assert summary["mean"] == 0.5
    assert summary["std"] == 0.5
    assert len(summary["histogram"]) == 10
    assert summary["histogram"][0]["count"] == 2 and summary["histogram"][-1]["count"] == 2
    assert body["isolation"]["network_namespace"] is True
    assert AuditEvent.objects.filter(action="reward.test").exists()


@needs_sandbox
def test_components_and_errors_are_reported_per_row(world):
    code = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    if solution_str == "boom":
        raise ValueError("cannot parse " + solution_str)
    print("scoring", solution_str)
    exact = float(solution_str == ground_truth)
    return {"score": exact + 0.5, "exact": exact, "length": float(len(solution_str))}
"""
    function = create_function(world, code=code)
    response = world.client("member").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {
            "completions": [
                {"solution_str": "ab", "ground_truth": "ab"},
                {"solution_str": "boom", "ground_truth": "x"},
            ]
        },
        format="json",
    )
    rows = response.json()["rows"]
    assert rows[0]["score"] == 1.5
    assert rows[0]["components"] == {"exact": 1.0, "length": 2.0}
    assert "scoring ab" in rows[0]["output"]
    assert "ValueError" in rows[1]["error"] and "cannot parse boom" in rows[1]["error"]
    assert response.json()["summary"]["error_rate"] == 0.5


def verl_dataset(world, answers: list[str]) -> int:
    parquet = verl_parquet(answers, data_source="openai/gsm8k", question="Question {i}?")
    client = world.client("member")
    dataset = client.post("/api/datasets/", {"project": "alpha", "name": "g"}, format="json")
    version = client.post(
        f"/api/datasets/{dataset.json()['id']}/versions/",
        {"file": SimpleUploadedFile("g.parquet", parquet)},
        format="multipart",
    )
    assert version.status_code == 201, version.json()
    return int(version.json()["id"])


@needs_sandbox
def test_a_test_run_on_dataset_rows_scores_the_reference_answers(world, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    version_id = verl_dataset(world, ["72", "1,234", "5", "6"])
    function = create_function(world, code=VERL_GSM8K)
    response = world.client("member").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {
            "dataset_version": version_id,
            "rows": 3,
            "offset": 1,
            "solution_template": "The answer is #### {ground_truth}",
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["dataset_version"] == version_id
    assert [r["index"] for r in body["rows"]] == [1, 2, 3]
    assert body["rows"][0]["solution_str"] == "The answer is #### 1,234"
    assert body["rows"][0]["prompt"] == "Question 1?"
    # "1,234" extracts as "1234", which verl's function compares to "1,234" as a string
    assert [r["score"] for r in body["rows"]] == [0.0, 1.0, 1.0]
    assert body["summary"]["mean"] == pytest.approx(2 / 3)


@needs_sandbox
@override_settings(RLSTUDIO_REWARD_TEST_BUDGET_S=4.0)
def test_an_infinite_loop_is_a_per_row_error_within_the_time_budget(world):
    code = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    while True:
        pass
"""
    function = create_function(world, code=code)
    started = time.monotonic()
    response = world.client("member").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {"completions": [{"solution_str": "a", "ground_truth": "a"}] * 20, "timeout_s": 1},
        format="json",
    )
    took = time.monotonic() - started
    assert response.status_code == 200, response.json()
    body = response.json()
    ran = [r for r in body["rows"] if not r["skipped"]]
    assert ran and all(r["error"].startswith("timeout") for r in ran)
    assert body["summary"]["error_rate"] == 1.0
    assert body["summary"]["skipped"] == 20 - len(ran) > 0
    assert body["summary"]["mean"] is None
    assert took < 4.0 + 1.5


@needs_sandbox
@override_settings(RLSTUDIO_REWARD_TEST_BUDGET_S=4.0)
def test_code_that_hangs_while_loading_fails_every_row_not_the_request(world):
    code = """
import time
time.sleep(60)

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0
"""
    function = create_function(world, code=code)
    started = time.monotonic()
    response = world.client("member").post(
        f"/api/reward-functions/{function['id']}/versions/1/test/",
        {"completions": [{"solution_str": "a", "ground_truth": "a"}] * 3, "timeout_s": 1},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert "did not respond" in body["load_error"]
    assert all(r["error"].startswith("load failed") for r in body["rows"])
    assert time.monotonic() - started < 4.0 + 1.5


def test_renaming_to_a_taken_name_is_a_400_naming_the_field(world):
    client = world.client("member")
    for name in ("first", "second"):
        created = client.post(
            "/api/reward-functions/", {"project": "alpha", "name": name}, format="json"
        )
        assert created.status_code == 201, created.content
    second = created.json()["id"]
    response = client.patch(f"/api/reward-functions/{second}/", {"name": "first"}, format="json")
    assert response.status_code == 400
    assert "already exists" in response.json()["error"]["fields"]["name"][0]
    renamed = client.patch(f"/api/reward-functions/{second}/", {"name": "third"}, format="json")
    assert renamed.json()["name"] == "third"
