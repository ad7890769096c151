"""The code-execution tool: runs a Python program, prints what it printed.

Runs in the sandbox (trainer.env.tools): no network, a scratch directory only,
time, memory and process limits; a program that breaks them fails this call only.
"""

import json
from typing import Any


def run_tool(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any) -> float:
    arguments = json.loads(solution_str)
    code = arguments.get("code")
    if not isinstance(code, str):
        raise ValueError('python needs a "code" string')
    exec(compile(code, "<program>", "exec"), {"__name__": "__main__"})
    return 0.0
