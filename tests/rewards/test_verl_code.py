"""The `verl_code` built-in gives the scores verl's own code scorer gives (prime_code, the
path verl takes without a sandbox_fusion url): the expected values were produced once by
verl 0.9.1 (tests/data/verl/code_scores-0.9.1.json and the script that wrote them), so
this test needs no verl. Hostile programs score 0.0 inside the reward sandbox within
their time limits, and the sandbox worker scores the next row as usual."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.rewards.conftest import needs_full_sandbox, request, wait_for_no_sandbox_processes
from trainer.config.schema import RewardConfig
from trainer.rewards import SandboxLimits, make_scorer
from trainer.rewards.builtins import verl_code
from trainer.rewards.errors import RewardCodeError
from trainer.rewards.sandbox.scorers import limits_for
from trainer.rewards.templates import verl_code as template

EXPECTED = Path(__file__).parent.parent / "data" / "verl" / "code_scores-0.9.1.json"
DOCUMENT = json.loads(EXPECTED.read_text())
CASES = DOCUMENT["cases"]
FAST = {"timeout_s": 0.5}  # verl's 5 s per run, cut so that each case takes under a second

# The template scored alone in a fresh interpreter, timed there (stdout: [score, seconds]).
SCORE_ALONE = """
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("verl_code", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
data_source, solution, ground_truth, kwargs = json.loads(sys.stdin.read())
started = time.monotonic()
score = module.compute_score(data_source, solution, ground_truth, None, **kwargs)
print(json.dumps([score, time.monotonic() - started]))
"""


def score_alone(
    data_source: str, solution: str, ground_truth: str, kwargs: dict[str, float]
) -> tuple[float, float]:
    """(score, seconds) of the template run the way the sandbox runs it: alone, in a small
    process. Timed in the test process instead, every run's fork and the teardown of every
    killed run cost in proportion to that process's memory: with 2 GB resident a hanging
    program's scoring took 3.6-4.2 s instead of 1.3-1.4 s on an idle 2-core VM, and in a CI
    run, timed in a test worker 1,300 tests in, 6.8 s against its 5.2 s bound
    (`worst_case_s` leaves forking out; docs/operations.md, "Tests")."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", SCORE_ALONE, template.__file__],
        input=json.dumps([data_source, solution, ground_truth, kwargs]),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    score, seconds = json.loads(done.stdout)
    return float(score), float(seconds)


ONE_CASE = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})
CORRECT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"


def _program(code: str) -> str:
    return f"```python\n{code}\n```"


# Beyond verl's own guard: what a program could do that verl's guard does not stop.
ESCAPES = {
    "fork bomb through posix": "import posix\nwhile True:\n    posix.fork()",
    "raw socket": "import _socket\ns = _socket.socket()\ns.connect(('1.1.1.1', 80))\nprint(3)",
    "forged result on every descriptor": (
        "import os\nfor fd in range(3, 256):\n    try:\n"
        '        os.write(fd, b\'{"v": [{"score": 1.0}]}\\n\')\n'
        "    except OSError:\n        pass\nprint(4)"
    ),
    "4 GiB allocation": "x = bytearray(4 << 30)\nprint(3)",
    "endless output to descriptor 1": "import os\nwhile True:\n    os.write(1, b'x' * 65536)",
    "sleeps in its module while loaded": "import time\ntime.sleep(60)",
}


def test_the_expected_scores_come_from_a_pinned_verl_and_cover_each_kind_of_program():
    assert DOCUMENT["verl_version"] == "0.9.1"
    names = {c["name"] for c in CASES}
    for kind in (
        "stdin: correct",
        "stdin: wrong output",
        "stdin: infinite loop",
        "stdin: raises",
        "no code block, prose",
        "call-based: correct",
        "call-based: infinite loop",
        "hostile: socket",
        "hostile: fork bomb",
        "hostile: huge output",
    ):
        assert kind in names
    assert {c["data_source"] for c in CASES} == set(template.DATA_SOURCES)
    assert {c["expected"] for c in CASES} >= {0.0, 0.5, 1.0}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_it_scores_like_verl(case):
    assert verl_code is template.compute_score  # the built-in is the file scored alone
    got, took = score_alone(case["data_source"], case["solution_str"], case["ground_truth"], FAST)
    assert got == case["expected"]
    assert took < template.worst_case_s(FAST)


def test_each_run_has_its_own_time_limit_and_the_whole_scoring_a_bound():
    ten = json.dumps({"inputs": ["1 2\n"] * 10, "outputs": ["3\n"] * 10})
    kwargs = {"timeout_s": 0.3, "max_concurrent": 4}
    score, took = score_alone("taco", _program("while True:\n    pass"), ten, kwargs)
    assert score == 0.0
    # The whole run and 9 lone runs, four at a time: three waves of 0.3 s after the first.
    assert 1.0 < took < template.worst_case_s(kwargs)


def test_a_row_of_another_data_source_or_bad_limits_is_an_error():
    with pytest.raises(ValueError, match="openai/gsm8k"):
        verl_code("openai/gsm8k", CORRECT, ONE_CASE, None)
    with pytest.raises(ValueError, match="timeout_s must be a positive number"):
        verl_code("apps", CORRECT, ONE_CASE, None, timeout_s=0)
    with pytest.raises(RewardCodeError, match="memory_limit_mb"):
        make_scorer(RewardConfig(function="verl_code", kwargs={"memory_limit_mb": "lots"}))


def test_its_sandbox_limits_grow_to_fit_its_worst_case_and_no_other_builtins_do():
    base = SandboxLimits(timeout_s=5.0, memory_mb=512)
    assert limits_for("verl_default", base, {}) is base
    grown = limits_for("verl_code", base, {"timeout_s": 2, "memory_limit_mb": 256})
    assert grown is not None
    # A whole run of 2 + 1 s, then ten lone runs four at a time: three waves more.
    assert grown.timeout_s >= template.worst_case_s({"timeout_s": 2}) == (2 + 1) * (1 + 3)
    assert grown.memory_mb == 256 * template.DEFAULT_MAX_CONCURRENT + 512
    assert grown.max_processes == base.max_processes
    # verl's max_concurrent (64 by default) is capped: more would queue on the sandbox's
    # process limit.
    assert template._limits({"max_concurrent": 64})["max_concurrent"] == template.MAX_CONCURRENT


@needs_full_sandbox()
def test_hostile_programs_score_zero_in_the_sandbox_in_time_and_the_worker_scores_on():
    hostile = [c for c in CASES if c["name"].startswith("hostile:")]
    rows = [request(c["solution_str"], c["ground_truth"], c["data_source"]) for c in hostile]
    rows += [request(_program(code), ONE_CASE, "codeforces") for code in ESCAPES.values()]
    rows.append(request(CORRECT, ONE_CASE, "codecontests"))
    scorer = make_scorer(RewardConfig(function="verl_code", kwargs=FAST), workers=1)
    try:
        started = time.monotonic()
        results = scorer.score_batch(rows)
        took = time.monotonic() - started
    finally:
        scorer.close()
    names = [c["name"] for c in hostile] + list(ESCAPES) + ["correct, after them"]
    scores = {name: (r.score, r.error) for name, r in zip(names, results, strict=True)}
    assert scores == {**{name: (0.0, "") for name in names[:-1]}, names[-1]: (1.0, "")}
    # Each hostile row ends by its own limits: well inside one row's worst case each.
    assert took < len(rows) * template.worst_case_s(FAST) / 2
    assert wait_for_no_sandbox_processes() == []
