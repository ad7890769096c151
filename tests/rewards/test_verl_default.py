"""The `verl_default` built-in gives the scores verl's own `default_compute_score` gives:
the expected values were produced once by verl's scorers (tests/data/verl/, with verl's
version and the script that wrote them), so this test needs no verl. Data sources whose
verl scorers run code, or need a symbolic grader, are refused per row, as is any source
verl does not know."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.rewards.conftest import needs_full_sandbox, request
from trainer.config.schema import RewardConfig
from trainer.rewards import SandboxLimits, make_scorer
from trainer.rewards.builtins import verl_default

EXPECTED = Path(__file__).parent.parent / "data" / "verl" / "default_scores-0.9.1.json"
DOCUMENT = json.loads(EXPECTED.read_text())
CASES = DOCUMENT["cases"]
SCORED = [c for c in CASES if "expected" in c]


def _id(case: dict) -> str:
    return f"{case['data_source']}:{case['solution_str'][:30]!r}"


def test_the_expected_scores_come_from_a_pinned_verl_and_cover_each_scorer():
    assert DOCUMENT["verl_version"] == "0.9.1"
    per_scorer = Counter(
        "gsm8k"
        if c["data_source"] == "openai/gsm8k"
        else "math"
        if "MATH" in c["data_source"]
        else "search_r1"
        if c["data_source"].startswith("searchR1_")
        else "dapo"
        for c in SCORED
    )
    assert set(per_scorer) == {"gsm8k", "math", "dapo", "search_r1"}
    assert min(per_scorer.values()) >= 10


@pytest.mark.parametrize("case", SCORED, ids=_id)
def test_it_scores_like_verl(case):
    got = verl_default(case["data_source"], case["solution_str"], case["ground_truth"], None)
    assert got == case["expected"]
    assert type(got) is type(case["expected"])


def test_a_source_verl_does_not_know_is_an_error_naming_the_known_ones():
    (unknown,) = [c for c in CASES if "raises" in c]
    assert unknown["raises"] == "NotImplementedError"
    with pytest.raises(ValueError, match="no verl scorer for data_source 'no_such_source'"):
        verl_default(unknown["data_source"], unknown["solution_str"], unknown["ground_truth"])


@pytest.mark.parametrize(
    ("data_source", "why"),
    [
        ("codecontests", "running the response as code"),
        ("taco", "running the response as code"),
        ("numina_olympiads", "symbolic algebra grader"),
        ("hiyouga/geometry3k", "symbolic algebra grader"),
    ],
)
def test_sources_whose_verl_scorers_run_code_or_sympy_are_refused(data_source, why):
    with pytest.raises(ValueError, match=why):
        verl_default(data_source, "x", "y")


@needs_full_sandbox()
def test_it_runs_in_the_sandbox_with_dapo_extras_and_per_row_errors(no_leftover_processes):
    chosen = [c for c in SCORED if c["data_source"] in ("math_dapo", "openai/gsm8k")][:24]
    requests = [
        request(c["solution_str"], c["ground_truth"], data_source=c["data_source"]) for c in chosen
    ]
    requests.append(request("print(1)", "1", data_source="apps"))
    scorer = make_scorer(
        RewardConfig(function="verl_default"),
        workers=1,
        limits=SandboxLimits(timeout_s=2.0, memory_mb=256),
    )
    try:
        results = scorer.score_batch(requests)
    finally:
        scorer.close()
    for case, result in zip(chosen, results, strict=False):
        expected = case["expected"]
        assert result.error == ""
        if isinstance(expected, dict):
            assert result.score == expected["score"]
            assert result.components == {"acc": float(expected["acc"])}
            assert result.extra == {"pred": expected["pred"]}
        else:
            assert (result.score, result.components, result.extra) == (expected, {}, {})
    assert results[-1].score == 0.0
    assert "verl scores it by running the response as code" in results[-1].error
