"""Loading reward code: size, syntax, the function and its signature, the batch form."""

from __future__ import annotations

import pytest

from trainer.rewards.loader import (
    MAX_SOURCE_BYTES,
    RewardCodeError,
    check_source,
    load_reward,
    load_reward_file,
)

GOOD = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):\n"
    "    return float(solution_str == ground_truth)\n"
)


def test_a_valid_function_loads_and_runs():
    loaded = load_reward(GOOD)
    assert loaded.fn is not None and loaded.batch_fn is None
    assert loaded.fn(data_source="d", solution_str="a", ground_truth="a", extra_info={}) == 1.0


def test_code_over_64_kib_is_refused_with_its_size():
    code = GOOD + "#" * MAX_SOURCE_BYTES
    with pytest.raises(RewardCodeError, match=rf"is {len(code)} bytes; the limit is 65536"):
        check_source(code)


def test_syntax_errors_name_the_line_and_column():
    code = "import re\n\ndef compute_score(data_source, solution_str\n    return 1\n"
    with pytest.raises(RewardCodeError, match=r"syntax error at line 3"):
        check_source(code)


def test_a_missing_function_lists_what_was_found():
    with pytest.raises(
        RewardCodeError,
        match=r"no function named 'compute_score'.*found: "
        r"helper, score",
    ):
        check_source("def score(a, b):\n    pass\ndef helper():\n    pass\n")


def test_another_function_name_can_be_chosen():
    info = check_source(GOOD.replace("compute_score", "my_reward"), "my_reward")
    assert info.function_name == "my_reward"


@pytest.mark.parametrize(
    ("signature", "message"),
    [
        ("(solution_str, ground_truth)", "no parameter named 'data_source'"),
        (
            "(data_source, solution_str, ground_truth, extra_info, tokenizer)",
            "parameter(s) tokenizer have no default",
        ),
        (
            "(data_source, solution_str, ground_truth, extra_info, /)",
            "no parameter named 'data_source'",
        ),
    ],
)
def test_signatures_verl_cannot_call_are_refused(signature, message):
    with pytest.raises(RewardCodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_reward(f"def compute_score{signature}:\n    return 1.0\n")


@pytest.mark.parametrize(
    "signature",
    [
        "(data_source, solution_str, ground_truth, extra_info=None)",
        "(data_source, solution_str, ground_truth, extra_info, method='strict', **kwargs)",
        "(**kwargs)",
        "(*, data_source, solution_str, ground_truth, extra_info)",
    ],
)
def test_signatures_verl_can_call_are_accepted(signature):
    assert load_reward(f"def compute_score{signature}:\n    return 1.0\n").fn is not None


def test_async_functions_are_refused():
    with pytest.raises(RewardCodeError, match="async def"):
        check_source(GOOD.replace("def compute_score", "async def compute_score"))


def test_the_batch_form_is_detected_beside_the_single_form():
    code = GOOD + (
        "def compute_score_batch(data_sources, solution_strs, ground_truths, "
        "extra_infos):\n    return [1.0] * len(solution_strs)\n"
    )
    assert check_source(code).batch_name == "compute_score_batch"
    loaded = load_reward(code)
    assert loaded.fn is not None and loaded.batch_fn is not None


def test_a_batch_form_alone_is_enough():
    code = (
        "def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos):\n"
        "    return [1.0] * len(solution_strs)\n"
    )
    loaded = load_reward(code)
    assert loaded.fn is None and loaded.batch_fn is not None


def test_code_that_raises_while_loading_names_the_line():
    with pytest.raises(RewardCodeError, match=r"raised while loading: KeyError: 'x' \(line 2\)"):
        load_reward("import os\n{}['x']\n" + GOOD)


def test_the_imports_are_found_for_the_sandbox_to_preload():
    code = (
        "import re, math\nfrom fractions import Fraction\n" + GOOD + "def f():\n    import json\n"
    )
    assert check_source(code).imports == ("re", "math", "fractions", "fractions.Fraction", "json")


def test_a_file_is_loaded(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(GOOD)
    assert load_reward_file(path).fn is not None
    with pytest.raises(RewardCodeError, match="cannot read reward file"):
        load_reward_file(tmp_path / "missing.py")
