"""Produce code_scores-<verl version>.json with verl's own code scorer (run once, by hand).

verl scores rows of its code data sources (codecontests, apps, codeforces, taco) with
``prime_code`` when no ``sandbox_fusion.url`` is set: the path recorded here. It runs
the programs below unsandboxed (verl's own guard disables fork, kill, file removal, ...),
so run it with a memory cap, in a scratch environment with verl and numpy only:
    python -m venv /tmp/verlenv
    /tmp/verlenv/bin/pip install verl==0.9.1 --no-deps numpy
    (ulimit -v 4000000; /tmp/verlenv/bin/python tests/data/verl/generate_code_scores.py)

It takes about a minute: verl gives a whole run 5 s and each lone test case 10 s, which
the looping program spends. verl's package `__init__` imports torch and Ray; the
scorer modules need only numpy, so the packages above them are registered as bare
namespaces (as generate_default_scores.py does). The tests never import verl: they
compare the built-in `verl_code` against the file this writes.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).parent


def _verl_default_compute_score():
    root = Path(str(importlib.metadata.distribution("verl").locate_file("verl")))
    for name, path in (("verl", root), ("verl.utils", root / "utils")):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    from verl.utils.reward_score import default_compute_score

    return default_compute_score


def block(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\nIt reads the input."


ADD = json.dumps({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})
ONE = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})
ADD_FN = json.dumps({"fn_name": "add", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]})
ADD_PROGRAM = "a, b = map(int, input().split())\nprint(a + b)"
ELEVEN = json.dumps(
    {
        "inputs": [f"{i} {i}\n" for i in range(11)],
        "outputs": [f"{2 * i}\n" for i in range(10)] + ["-1\n"],
    }
)

# (name, data_source, response, ground truth)
CASES = [
    ("stdin: correct", "codecontests", block(ADD_PROGRAM), ADD),
    ("stdin: wrong output", "apps", block("a, b = map(int, input().split())\nprint(a * b)"), ADD),
    ("stdin: one of two right", "taco", block("input()\nprint(3)"), ADD),
    ("stdin: infinite loop", "codeforces", block("while True:\n    pass"), ONE),
    ("stdin: raises", "codecontests", block("raise ValueError('no')"), ADD),
    (
        "stdin: raises on the second",
        "codecontests",
        block("x = input()\nassert x == '1 2'\nprint(3)"),
        ADD,
    ),
    ("no code block, prose", "codecontests", "Add the two numbers and print the sum.", ADD),
    ("no code block, bare code", "codecontests", ADD_PROGRAM, ADD),
    (
        "two code blocks: the last counts",
        "codecontests",
        block("print(0)") + block(ADD_PROGRAM),
        ADD,
    ),
    ("unclosed code block", "codecontests", "```python\n" + ADD_PROGRAM, ADD),
    ("syntax error", "codecontests", block("print(("), ADD),
    (
        "main guard",
        "codecontests",
        block(
            "def main():\n    a, b = map(int, input().split())\n    print(a + b)\n\n"
            "if __name__ == '__main__':\n    main()"
        ),
        ADD,
    ),
    (
        "sys.stdin.read",
        "codecontests",
        block("import sys\na, b = sys.stdin.read().split()\nprint(int(a) + int(b))"),
        ADD,
    ),
    (
        "sys.stdin.readline",
        "codecontests",
        block("import sys\na, b = map(int, sys.stdin.readline().split())\nprint(a + b)"),
        ADD,
    ),
    (
        "module stdin.readline",
        "codecontests",
        block("a, b = map(int, stdin.readline().split())\nprint(a + b)"),
        ADD,
    ),
    (
        "open(0)",
        "codecontests",
        block("a, b = open(0).read().split()\nprint(int(a) + int(b))"),
        ADD,
    ),
    (
        "sys.stdout.write",
        "codecontests",
        block("import sys\na, b = map(int, input().split())\nsys.stdout.write(str(a + b))"),
        ADD,
    ),
    (
        "module stdout.write",
        "codecontests",
        block("a, b = map(int, input().split())\nstdout.write(str(a + b))"),
        ADD,
    ),
    (
        "exit after printing",
        "codecontests",
        block("import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(0)\nprint(0)"),
        ADD,
    ),
    (
        "trailing spaces",
        "codecontests",
        block("a, b = map(int, input().split())\nprint(a + b, '  ')"),
        ADD,
    ),
    (
        "blank lines between",
        "codecontests",
        block("print(1)\nprint()\nprint(2)"),
        json.dumps({"inputs": [""], "outputs": ["1\n2\n"]}),
    ),
    (
        "float close",
        "codecontests",
        block("print(0.1 + 0.2)"),
        json.dumps({"inputs": [""], "outputs": ["0.3"]}),
    ),
    (
        "float not close",
        "codecontests",
        block("print(0.3001)"),
        json.dumps({"inputs": [""], "outputs": ["0.3"]}),
    ),
    (
        "integers compare as text",
        "codecontests",
        block("print('03')"),
        json.dumps({"inputs": [""], "outputs": ["3"]}),
    ),
    (
        "several numbers per line",
        "codecontests",
        block("print('1.0 2.0')"),
        json.dumps({"inputs": [""], "outputs": ["1 2"]}),
    ),
    (
        "outputs as a list of lines",
        "codecontests",
        block("print(1)\nprint(2)"),
        json.dumps({"inputs": [["", ""]], "outputs": [["1", "2"]]}),
    ),
    ("ten first of eleven pass", "codecontests", block(ADD_PROGRAM), ELEVEN),
    ("no test cases", "codecontests", block("print(1)"), json.dumps({"inputs": [], "outputs": []})),
    ("ground truth not JSON", "codecontests", block(ADD_PROGRAM), "3"),
    ("ground truth as a dict", "codecontests", block(ADD_PROGRAM), json.loads(ADD)),
    ("call-based: correct", "apps", block("def add(a, b):\n    return a + b"), ADD_FN),
    ("call-based: wrong", "apps", block("def add(a, b):\n    return a - b"), ADD_FN),
    ("call-based: one of two right", "apps", block("def add(a, b):\n    return 3"), ADD_FN),
    # verl runs each lone test case without fn_name, as a stdin program: this one prints.
    (
        "call-based: lone runs read stdin",
        "apps",
        block("def add(a, b):\n    return 3\nprint(3)"),
        ADD_FN,
    ),
    (
        "call-based: a name verl's prelude imports",
        "apps",
        block("def plus(a, b):\n    return a + b"),
        ADD_FN,
    ),
    (
        "call-based: missing function",
        "apps",
        block("def plus(a, b):\n    return a + b"),
        json.dumps({"fn_name": "total", "inputs": ["1\n2"], "outputs": ["3"]}),
    ),
    ("call-based: raises", "apps", block("def add(a, b):\n    raise KeyError(a)"), ADD_FN),
    (
        "call-based: class Solution",
        "apps",
        block("class Solution:\n    def add(self, a, b):\n        return a + b"),
        ADD_FN,
    ),
    (
        "call-based: tuple for a list",
        "apps",
        block("def pair(a):\n    return (a, a)"),
        json.dumps({"fn_name": "pair", "inputs": ["1"], "outputs": ["[1, 1]"]}),
    ),
    (
        "call-based: wrapped in a list",
        "apps",
        block("def pair(a):\n    return [a, a]"),
        json.dumps({"fn_name": "pair", "inputs": ["1"], "outputs": ["[[1, 1]]"]}),
    ),
    (
        "call-based: tuples inside",
        "apps",
        block("def pairs(a):\n    return [(a, a)]"),
        json.dumps({"fn_name": "pairs", "inputs": ["1"], "outputs": ["[[1, 1]]"]}),
    ),
    (
        "call-based: dict with integer keys",
        "apps",
        block("def count(a):\n    return {a: 1}"),
        json.dumps({"fn_name": "count", "inputs": ["2"], "outputs": ['{"2": 1}']}),
    ),
    (
        "call-based: a set is not JSON",
        "apps",
        block("def uniq(a):\n    return set(a)"),
        json.dumps({"fn_name": "uniq", "inputs": ["[1, 1]"], "outputs": ["[1]"]}),
    ),
    (
        "call-based: list inputs (APPS style)",
        "apps",
        block("def add(a, b):\n    return a + b"),
        json.dumps({"fn_name": "add", "inputs": [[1, 2]], "outputs": [[3]]}),
    ),
    (
        "call-based: infinite loop",
        "apps",
        block("def add(a, b):\n    while True:\n        pass"),
        json.dumps({"fn_name": "add", "inputs": ["1\n2"], "outputs": ["3"]}),
    ),
    (
        "hostile: socket",
        "codecontests",
        block("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)\nprint(3)"),
        ONE,
    ),
    ("hostile: fork bomb", "codecontests", block("import os\nwhile True:\n    os.fork()"), ONE),
    (
        "hostile: subprocess",
        "codecontests",
        block("import subprocess\nsubprocess.run(['true'])\nprint(3)"),
        ONE,
    ),
    (
        "hostile: huge output",
        "codecontests",
        block("for _ in range(10000):\n    print('x' * 10000)"),
        ONE,
    ),
    ("hostile: remove a file", "codecontests", block("import os\nos.remove('x')\nprint(3)"), ONE),
]


def main() -> None:
    score = _verl_default_compute_score()
    cases = []
    for name, data_source, response, truth in CASES:
        started = time.monotonic()
        got = score(data_source, response, truth)
        took = time.monotonic() - started
        print(f"{name}: {got!r} ({took:.1f} s)", file=sys.stderr)
        cases.append(
            {
                "name": name,
                "data_source": data_source,
                "solution_str": response,
                "ground_truth": truth,
                "expected": got,
            }
        )
    document = {
        "verl_version": importlib.metadata.version("verl"),
        "scorer": "verl.utils.reward_score.default_compute_score (prime_code: no sandbox url)",
        "generator": "tests/data/verl/generate_code_scores.py",
        "cases": cases,
    }
    out = HERE / f"code_scores-{document['verl_version']}.json"
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
