"""Batch reward functions in the sandbox: verl's batch signature unchanged, a time limit
for the whole call scaled by its rows, the contract and length checks per row, and one
hostile row among good ones: the batch call fails as a whole, every row is then called
alone, the good rows score, only the hostile row errors, and the pool stays healthy (same
zygote, nothing left running, the next honest call scores). Our built-ins run in the
batch form too (trainer.rewards.sandbox.scorers), with each row's own score."""

from __future__ import annotations

import pytest

from tests.rewards.attacks import LOOP_MEMORY_FORK
from tests.rewards.conftest import needs_full_sandbox, request, wait_for_no_sandbox_processes
from trainer.config.schema import RewardConfig
from trainer.rewards import BUILTIN_REWARDS, SandboxLimits, SandboxPool, make_scorer

pytestmark = needs_full_sandbox()

LIMITS = SandboxLimits(timeout_s=1.0, memory_mb=128, output_bytes=4096, max_processes=16)

# verl's batch reward manager calls the configured `compute_score` with these lists.
VERL_BATCH = """
def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    print("batch of", len(solution_strs))
    return [
        {"score": float(s == str(g)), "batch_size": len(solution_strs), "index": e["i"]}
        for s, g, e in zip(solution_strs, ground_truths, extra_infos)
    ]
"""

HOSTILE_BATCH = (
    r"""
import os, signal, time
"""
    + LOOP_MEMORY_FORK
    + r"""

def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    print("batch of", len(solution_strs))
    # Rows it cannot parse are dropped: a wrong-length result, verl's common batch bug.
    return [score(s, g) for s, g in zip(solution_strs, ground_truths) if s != "drop_row"]


def score(solution, truth):
    if solution == "ok":
        return 1.0
    return ATTACKS[solution](truth)


def raise_on_row(truth):
    return 1.0 / int(truth)


def kill_itself(_):
    os.kill(os.getpid(), signal.SIGKILL)


def not_a_number(_):
    return float("nan")


ATTACKS = {f.__name__: f for f in (
    infinite_loop, raise_on_row, memory_bomb, fork_bomb, kill_itself, not_a_number)}
"""
)


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(HOSTILE_BATCH, limits=LIMITS) as sandbox:
        assert sandbox.batch
        yield sandbox


@pytest.fixture
def hostile_row(pool):
    """Score one hostile row between honest rows in one batch call; check the honest
    rows scored, then that the pool still serves with the same zygote and nothing left."""
    zygotes = list(pool.worker_pids)

    def run(name, ground_truth="0"):
        fallbacks = pool.batch_fallbacks
        rows = [request("ok"), request(name, ground_truth), request("ok")]
        first, hostile, last = pool.score_batch(rows)
        assert [(r.score, r.error) for r in (first, last)] == [(1.0, "")] * 2
        hostile.fell_back = pool.batch_fallbacks - fallbacks
        return hostile

    yield run
    (normal,) = pool.score_batch([request("ok")])
    assert (normal.score, normal.error) == (1.0, "")
    assert pool.worker_pids == zygotes, "the zygote had to be restarted"
    assert wait_for_no_sandbox_processes() == []


ALONE = "(scored alone after the batch call of its 3 rows failed)"


def test_a_row_looping_forever_times_out_alone_and_the_others_score(hostile_row):
    result = hostile_row("infinite_loop")
    assert result.error == f"timeout: the call ran longer than 1 s {ALONE}"
    assert (result.score, result.fell_back) == (0.0, 1)


def test_a_row_raising_fails_alone_with_its_exception(hostile_row):
    result = hostile_row("raise_on_row", ground_truth="0")
    line = HOSTILE_BATCH.splitlines().index("    return 1.0 / int(truth)") + 1
    assert result.error.startswith(
        f"exception: ZeroDivisionError: float division by zero (line {line})"
    )
    assert result.error.splitlines()[0].endswith(ALONE)
    assert f'  File "reward.py", line {line}, in ' in result.error  # the user's frame
    assert "return 1.0 / int(truth)" in result.output  # its own traceback


def test_a_wrong_length_result_fails_only_the_row_it_dropped(hostile_row):
    result = hostile_row("drop_row")
    assert result.error == (
        "invalid return: the batch function returned 0 values for 1 rows; return a list "
        f"with one reward per row, in order {ALONE}"
    )


def test_a_row_allocating_too_much_is_killed_for_memory_alone(hostile_row):
    result = hostile_row("memory_bomb")
    # The watchdog kills it for memory, or, when the address-space limit refuses the
    # allocations first (it caught MemoryError and sleeps holding it), at its timeout.
    assert result.error.startswith(("memory: the call used", "timeout:"))
    assert result.error.endswith(ALONE)


def test_a_row_fork_bombing_is_capped_and_cleaned_up_alone(hostile_row):
    result = hostile_row("fork_bomb")
    assert result.error.startswith("timeout")
    assert wait_for_no_sandbox_processes() == []


def test_a_row_killing_its_process_is_a_crash_of_that_row_only(hostile_row):
    result = hostile_row("kill_itself")
    assert result.error.startswith("crashed: killed by signal 9 (SIGKILL)")


def test_an_invalid_value_for_one_row_fails_that_row_without_a_retry(hostile_row):
    result = hostile_row("not_a_number")
    assert result.error == "invalid return: return value is nan; rewards must be finite"
    assert result.fell_back == 0  # the call itself succeeded: nothing to retry


def test_verls_batch_signature_is_called_once_per_chunk():
    limits = SandboxLimits(timeout_s=2.0, chunk_size=4)
    with SandboxPool(VERL_BATCH, workers=2, limits=limits) as pool:
        assert pool.batch
        results = pool.score_batch([request(str(i), i % 2, i=i) for i in range(10)])
    assert [r.score for r in results] == [1.0, 1.0] + [0.0] * 8
    assert all(r.error == "" for r in results)
    assert [r.components["index"] for r in results] == [float(i) for i in range(10)]
    assert {r.components["batch_size"] for r in results} <= {4.0, 2.0}
    assert sum("batch of" in r.output for r in results) == 3  # one call, one output per chunk
    assert pool.batch_fallbacks == 0


SLOW_ROWS = """
import time

def compute_score(data_sources, solution_strs, ground_truths, extra_infos):
    print("batch of", len(solution_strs))
    time.sleep(0.7 * len(solution_strs))
    return [1.0] * len(solution_strs)
"""


def test_a_whole_call_may_take_the_per_row_limit_times_its_rows():
    # 4 rows at 0.7 s: 2.8 s, over the 2 s of one call, under the 8 s of the batch.
    with SandboxPool(SLOW_ROWS, limits=SandboxLimits(timeout_s=2.0)) as pool:
        results = pool.score_batch([request("x")] * 4)
        assert [(r.score, r.error) for r in results] == [(1.0, "")] * 4
        assert pool.batch_fallbacks == 0
    assert sum("batch of 4" in r.output for r in results) == 1


def test_the_whole_calls_limit_is_capped_and_the_rows_then_score_alone():
    # The cap (2.5 s) stops the 2.8 s call; alone, each row takes 0.7 s of its 2 s.
    limits = SandboxLimits(timeout_s=2.0, max_batch_timeout_s=2.5)
    with SandboxPool(SLOW_ROWS, limits=limits) as pool:
        results = pool.score_batch([request("x")] * 4)
        assert [(r.score, r.error) for r in results] == [(1.0, "")] * 4
        assert pool.batch_fallbacks == 1
    assert sum("batch of 1" in r.output for r in results) == 4


def test_the_trainer_scores_a_verl_batch_file_in_the_sandbox(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(VERL_BATCH)
    cfg = RewardConfig(function="custom", custom_path=str(path))
    scorer = make_scorer(cfg, workers=1, limits=LIMITS)
    try:
        assert isinstance(scorer, SandboxPool) and scorer.batch
        results = scorer.score_batch([request("1", 1, i=0), request("2", 3, i=1)])
    finally:
        scorer.close()
    assert [(r.score, r.error) for r in results] == [(1.0, ""), (0.0, "")]


# A row each built-in scores 1.0, and one it scores 0.0, as (data source, response, truth).
BUILTIN_ROWS = {
    "exact_match": [("d", "2", "2"), ("d", "3", "2")],
    "numeric": [("d", "2.0", "2"), ("d", "3", "2")],
    "arith": [("d", "2", "2"), ("d", "3", "2")],
    "gsm8k": [("d", "#### 2", "2"), ("d", "#### 3", "2")],
    "boxed_math": [("d", r"\boxed{2}", "2"), ("d", r"\boxed{3}", "2")],
    "countdown": [
        ("d", "<answer>6*4</answer>", {"target": 24, "numbers": [6, 4]}),
        ("d", "none", {"target": 24, "numbers": [6, 4]}),
    ],
    "format_regex": [("d", "<think>a</think>\n<answer>b</answer>", None), ("d", "b", None)],
    "length_penalty": [("d", "short", None), ("d", "x" * 3000, None)],
    "verl_default": [("openai/gsm8k", "#### 2", "2"), ("openai/gsm8k", "#### 3", "2")],
}


@pytest.mark.parametrize("name", sorted(BUILTIN_ROWS))
def test_a_builtin_scores_in_the_batch_form_exactly_as_each_row_alone(name):
    rows = BUILTIN_ROWS[name] * 3
    scorer = make_scorer(RewardConfig(function=name), workers=1)
    try:
        assert isinstance(scorer, SandboxPool) and scorer.batch  # one fork per chunk
        results = scorer.score_batch([request(s, g, data_source=d) for d, s, g in rows])
        assert scorer.batch_fallbacks == 0
    finally:
        scorer.close()
    alone = [BUILTIN_REWARDS[name](d, s, g, {}) for d, s, g in rows]
    scores = [r.score for r in results]
    assert scores == [a["score"] if isinstance(a, dict) else a for a in alone]
    assert [r.error for r in results] == [""] * len(rows)
    assert len(set(scores)) == 2, scores  # each pair scores two different values


def test_a_builtin_row_that_raises_errors_alone_and_verl_code_keeps_a_fork_per_row():
    scorer = make_scorer(RewardConfig(function="numeric"), workers=1)
    try:
        results = scorer.score_batch([request("2", "2"), request("2", "abc"), request("3", "3")])
        assert scorer.batch_fallbacks == 1
    finally:
        scorer.close()
    assert [r.score for r in results] == [1.0, 0.0, 1.0]
    assert [bool(r.error) for r in results] == [False, True, False]
    assert "is not a number" in results[1].error and "scored alone" in results[1].error
    code = make_scorer(RewardConfig(function="verl_code"), workers=1)
    try:
        assert isinstance(code, SandboxPool) and not code.batch
    finally:
        code.close()
