"""The static check of reward code: line-addressed problems, nothing run."""

from __future__ import annotations

from studio.rewards.checks import problems_in

URL = "/api/reward-checks/"
GOOD = (
    "import re\n"
    "\n"
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
    "    return float(solution_str.strip() == str(ground_truth))\n"
)


def test_it_answers_ok_with_no_problems_for_code_a_save_accepts(world):
    response = world.client("viewer").post(URL, {"code": GOOD}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json() == {"ok": True, "problems": []}


def test_a_syntax_error_is_a_problem_on_its_line_and_column(world):
    broken = GOOD.replace("str(ground_truth))", "str(ground_truth)")
    body = world.client("member").post(URL, {"code": broken}, format="json").json()
    assert body["ok"] is False
    [problem] = body["problems"]
    assert (problem["line"], problem["column"]) == (4, 17)
    assert problem["message"].startswith("syntax error at line 4, column 17")
    assert problem["severity"] == "error"


def test_a_missing_entry_point_names_the_functions_found(world):
    code = "def score(data_source, solution_str, ground_truth, extra_info):\n    return 1.0\n"
    body = world.client("member").post(URL, {"code": code}, format="json").json()
    [problem] = body["problems"]
    assert problem["line"] == 1
    assert "no function named 'compute_score'" in problem["message"]
    assert "(found: score)" in problem["message"]


def test_an_entry_point_verl_cannot_call_by_keyword_is_marked_on_its_def_line():
    code = "X = 1\n\n\ndef compute_score(solution_str, answer):\n    return 1.0\n"
    problems = problems_in(code)
    assert [p.line for p in problems] == [4, 4]
    assert "no argument named 'data_source', 'ground_truth', 'extra_info'" in problems[0].message
    assert "verl never passes: answer" in problems[1].message


def test_keyword_catch_alls_and_positional_only_arguments_are_told_apart():
    assert problems_in("def compute_score(**kwargs):\n    return 1.0\n") == []
    assert problems_in("def compute_score(data_source, /, **kw):\n    return 1.0\n")[0].line == 1


def test_async_entry_points_are_marked_where_they_are_defined():
    code = "\n\nasync def compute_score(**kw):\n    return 1.0\n"
    [problem] = problems_in(code)
    assert problem.line == 3 and "async def" in problem.message


def test_anonymous_callers_are_refused(world):
    assert world.client(None).post(URL, {"code": GOOD}, format="json").status_code == 401


def test_code_over_the_size_limit_is_a_problem_not_a_crash(world):
    huge = GOOD + "#" * (70 * 1024) + "\n"
    body = world.client("member").post(URL, {"code": huge}, format="json").json()
    assert body["ok"] is False and "64 KiB" in body["problems"][0]["message"]
