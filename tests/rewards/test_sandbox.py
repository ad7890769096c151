"""The sandbox pool on well-behaved code: verl-style modules, components, batch form,
output capture, restarts, isolation reporting, and `make_scorer`."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.rewards.conftest import needs_full_sandbox, request
from tests.verl_data import VERL_GSM8K
from trainer.config.schema import RewardConfig
from trainer.rewards import (
    InProcessScorer,
    RewardCodeError,
    SandboxLimits,
    SandboxPool,
    SandboxUnavailableError,
    builtin_source,
    isolation_report,
    make_scorer,
)

pytestmark = needs_full_sandbox()

LIMITS = SandboxLimits(timeout_s=2.0)


def test_a_verl_gsm8k_module_works_unchanged_from_a_code_string():
    with SandboxPool(VERL_GSM8K, limits=LIMITS) as pool:
        results = pool.score_batch(
            [
                request("so the answer is #### 72", "72", data_source="openai/gsm8k"),
                request("#### 1,234", "1234"),
                request("I think 72", "72"),
                request("#### 71", "72"),
            ]
        )
    assert [(r.score, r.error) for r in results] == [(1.0, ""), (1.0, ""), (0.0, ""), (0.0, "")]
    assert all(r.elapsed_ms > 0 for r in results)


def test_dict_returns_report_each_component():
    code = """
def compute_score(data_source, solution_str, ground_truth, extra_info):
    correct = float(solution_str == ground_truth)
    return {"score": correct - 0.01 * len(solution_str), "accuracy": correct, "short": True}
"""
    with SandboxPool(code, limits=LIMITS) as pool:
        (result,) = pool.score_batch([request("12", "12")])
    assert result.error == ""
    assert result.score == pytest.approx(0.98)
    assert result.components == {"accuracy": 1.0, "short": 1.0}


def test_the_batch_form_is_detected_and_called_once_per_chunk():
    code = """
import os

def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos):
    print("batch of", len(solution_strs), "pid", os.getpid())
    return [{"score": float(s == g), "batch_size": len(solution_strs)}
            for s, g in zip(solution_strs, ground_truths)]
"""
    limits = SandboxLimits(timeout_s=2.0, chunk_size=4)
    with SandboxPool(code, workers=2, limits=limits) as pool:
        assert pool.batch
        results = pool.score_batch([request(str(i), str(i % 2)) for i in range(10)])
    assert [r.score for r in results] == [1.0, 1.0] + [0.0] * 8
    assert all(r.error == "" for r in results)
    assert {r.components["batch_size"] for r in results} <= {4.0, 2.0}
    assert sum("batch of" in r.output for r in results) == 3  # one output per chunk


def test_exceptions_name_the_user_line_and_keep_the_traceback_in_the_output():
    code = """
def compute_score(data_source, solution_str, ground_truth, extra_info):
    print("scoring", solution_str)
    return 1.0 / int(solution_str)
"""
    with SandboxPool(code, limits=LIMITS) as pool:
        ok, bad = pool.score_batch([request("4"), request("0")])
    assert (ok.score, ok.error, ok.output) == (0.25, "", "scoring 4\n")
    first, *frames = bad.error.splitlines()
    assert first == "exception: ZeroDivisionError: float division by zero (line 4)"
    # The failed sample keeps the user's frames of the traceback, never a server path.
    assert frames == [
        "Traceback (most recent call last):",
        '  File "reward.py", line 4, in compute_score',
    ]
    assert "return 1.0 / int(solution_str)" in bad.output  # the source line is shown
    assert "ZeroDivisionError: float division by zero" in bad.output.splitlines()
    assert "/" not in bad.output.replace("1.0 / int", "")  # no path of the server's code


def test_a_deep_traceback_keeps_its_last_user_frames_only():
    code = """
def down(n):
    return down(n + 1)


def compute_score(data_source, solution_str, ground_truth, extra_info):
    return down(0)
"""
    with SandboxPool(code, limits=LIMITS) as pool:
        (result,) = pool.score_batch([request("1")])
    first, header, skipped, *frames = result.error.splitlines()
    assert first.startswith("exception: RecursionError") and first.endswith("(line 3)")
    assert header == "Traceback (most recent call last):"
    assert skipped.startswith("  ... ") and skipped.endswith(" earlier frames")
    assert frames == ['  File "reward.py", line 3, in down'] * 8
    assert "/" not in result.error


def test_extra_info_and_structured_ground_truth_arrive_intact():
    code = """
def compute_score(data_source, solution_str, ground_truth, extra_info):
    assert data_source == "countdown"
    assert ground_truth == {"target": 10, "numbers": [2, 5]}
    assert extra_info == {"split": "train", "index": 3}
    return 1.0
"""
    with SandboxPool(code, limits=LIMITS) as pool:
        (result,) = pool.score_batch(
            [
                request(
                    "x",
                    {"target": 10, "numbers": (2, 5)},
                    data_source="countdown",
                    split="train",
                    index=3,
                )
            ]
        )
    assert (result.score, result.error) == (1.0, "")


def test_a_request_that_cannot_be_sent_becomes_an_error_not_a_crash():
    with SandboxPool(VERL_GSM8K, limits=LIMITS) as pool:
        bad, good = pool.score_batch([request("#### 1", object()), request("#### 1", "1")])
    assert bad.error.startswith("request cannot be sent to the sandbox")
    assert (good.score, good.error) == (1.0, "")


def test_a_killed_zygote_is_restarted_and_the_pool_keeps_serving():
    with SandboxPool(VERL_GSM8K, workers=2, limits=LIMITS) as pool:
        before = list(pool.worker_pids)
        os.kill(before[0], signal.SIGKILL)
        time.sleep(0.1)
        results = pool.score_batch([request("#### 5", "5") for _ in range(6)])
        assert all(r.score == 1.0 for r in results if not r.error)
        assert sum(bool(r.error) for r in results) <= 1  # at most the chunk in flight
        results = pool.score_batch([request("#### 5", "5") for _ in range(6)])
        assert [(r.score, r.error) for r in results] == [(1.0, "")] * 6
        assert pool.restarts >= 1
        assert pool.worker_pids[0] != before[0]


def test_code_that_fails_to_load_is_reported_as_a_code_error():
    code = (
        "import no_such_module_here\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info):\n"
        "    return 1.0\n"
    )
    with pytest.raises(RewardCodeError, match="ModuleNotFoundError"):
        SandboxPool(code, limits=LIMITS)
    with pytest.raises(RewardCodeError, match="no parameter named 'extra_info'"):
        SandboxPool(
            "def compute_score(data_source, solution_str, ground_truth):\n    return 1.0\n",
            limits=LIMITS,
        )


def test_every_protection_is_active_on_this_host():
    report = isolation_report()
    assert report == dict.fromkeys(report, True)
    assert {
        "unprivileged_uid",
        "network_namespace",
        "pid_namespace",
        "landlock_filesystem",
        "seccomp",
        "rlimits",
    } <= set(report)


def test_full_isolation_mode_starts_here():
    with SandboxPool(VERL_GSM8K, limits=LIMITS, require_full_isolation=True) as pool:
        assert all(pool.isolation.values())


# Running calls as root (uid 0) leaves the unprivileged-uid protection off.
AS_ROOT = SandboxLimits(timeout_s=2.0, uid=0, gid=0)


@pytest.mark.skipif(os.geteuid() != 0, reason="calls run as uid 0 only under root")
def test_a_pool_lacking_a_protection_refuses_to_start_by_default(monkeypatch):
    monkeypatch.delenv("RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL", raising=False)
    with pytest.raises(SandboxUnavailableError) as refused:
        SandboxPool(VERL_GSM8K, limits=AS_ROOT)
    message = str(refused.value)
    assert "unavailable on this host: unprivileged_uid." in message
    assert "RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL=1" in message  # how to allow less
    with pytest.raises(SandboxUnavailableError, match="unprivileged_uid"):
        SandboxPool(VERL_GSM8K, limits=AS_ROOT, require_full_isolation=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="calls run as uid 0 only under root")
def test_partial_isolation_runs_only_when_allowed_explicitly_and_is_logged(monkeypatch, caplog):
    monkeypatch.setenv("RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL", "1")
    with SandboxPool(VERL_GSM8K, limits=AS_ROOT) as pool:
        assert pool.isolation["unprivileged_uid"] is False
        assert pool.isolation["landlock_filesystem"] is True
    assert "partial isolation (allowed explicitly); missing: unprivileged_uid" in caplog.text
    monkeypatch.delenv("RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL")
    with SandboxPool(VERL_GSM8K, limits=AS_ROOT, require_full_isolation=False) as pool:
        assert pool.isolation["unprivileged_uid"] is False


def test_the_trainer_sandboxes_rewards_unless_told_otherwise():
    assert RewardConfig().executor == "sandbox"
    scorer = make_scorer(RewardConfig(function="arith"), workers=1)
    try:
        assert isinstance(scorer, SandboxPool)
        assert all(scorer.isolation.values())
    finally:
        scorer.close()


def test_the_inprocess_executor_is_an_explicit_opt_in_with_a_warning(caplog):
    scorer = make_scorer(RewardConfig(function="arith", executor="inprocess"))
    assert isinstance(scorer, InProcessScorer)
    assert "reward.executor='inprocess'" in caplog.text and "unsandboxed" in caplog.text


@pytest.mark.parametrize("executor", ["inprocess", "sandbox"])
def test_make_scorer_runs_the_arith_builtin(executor):
    scorer = make_scorer(RewardConfig(function="arith", executor=executor))
    try:
        results = scorer.score_batch([request("12", "12"), request("13 apples", "12")])
    finally:
        scorer.close()
    assert [(r.score, r.error) for r in results] == [(1.0, ""), (0.0, "")]
    assert isinstance(scorer, InProcessScorer if executor == "inprocess" else SandboxPool)


@pytest.mark.parametrize("executor", ["inprocess", "sandbox"])
def test_make_scorer_loads_a_custom_file(tmp_path, executor):
    path = tmp_path / "my_reward.py"
    path.write_text(VERL_GSM8K.replace("def compute_score(", "def my_score("))
    cfg = RewardConfig(
        function="custom", custom_path=str(path), custom_name="my_score", executor=executor
    )
    scorer = make_scorer(cfg, workers=1)
    try:
        (result,) = scorer.score_batch([request("#### 3", "3")])
    finally:
        scorer.close()
    assert (result.score, result.error) == (1.0, "")


def test_make_scorer_names_the_choices_for_an_unknown_builtin():
    with pytest.raises(RewardCodeError, match="not a built-in; choose one of exact_match"):
        make_scorer(RewardConfig(function="gsm9k"))


def test_builtin_templates_run_unchanged_in_the_sandbox():
    with SandboxPool(builtin_source("countdown"), limits=LIMITS) as pool:
        results = pool.score_batch(
            [
                request("<answer>(3 + 5) * 2</answer>", {"target": 16, "numbers": [2, 3, 5]}),
                request("<answer>3 + 3</answer>", {"target": 6, "numbers": [2, 3, 5]}),
                request("no tags", {"target": 6, "numbers": [2, 3, 5]}),
            ]
        )
    assert [r.score for r in results] == [1.0, 0.1, 0.0]
