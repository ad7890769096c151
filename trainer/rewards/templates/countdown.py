"""Countdown (TinyZero): an equation in ``<answer>...</answer>`` that reaches the target.

ground_truth is ``{"target": int, "numbers": [int, ...]}``. The equation may use
``+ - * /``, parentheses and each given number at most once (``use_all=True``
requires every number exactly once, as TinyZero's checker does). It is parsed and
evaluated with exact fractions; nothing is ever passed to ``eval``.
Scores: correct ``score`` (1.0); an answer that is wrong, malformed or uses other
numbers ``format_score`` (0.1, as TinyZero); no ``<answer>`` tag 0.0.
"""

import ast
import re
from collections import Counter
from fractions import Fraction
from typing import Any

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_MAX_EQUATION_CHARS = 200
_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


def extract_solution(solution_str: str) -> str | None:
    """The last ``<answer>`` of the assistant's part of the text, or None."""
    for marker in ("Assistant:", "<|im_start|>assistant"):
        if marker in solution_str:
            solution_str = solution_str.split(marker, 1)[1]
            break
    matches = _ANSWER.findall(solution_str)
    return matches[-1].strip() if matches else None


def evaluate_equation(equation: str) -> tuple[Fraction, list[int]] | None:
    """(value as a Fraction, numbers used), or None if it is not plain arithmetic."""
    if len(equation) > _MAX_EQUATION_CHARS or "**" in equation:
        return None
    try:
        tree = ast.parse(equation, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    used = []

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Constant) and type(node.value) is int:
            used.append(node.value)
            return Fraction(node.value)
        raise ValueError(f"not allowed in an equation: {type(node).__name__}")

    try:
        return value(tree.body), used
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    format_score: float = 0.1,
    score: float = 1.0,
    use_all: bool = False,
    **kwargs: Any,
) -> float:
    target = Fraction(int(ground_truth["target"]))
    numbers = Counter(int(n) for n in ground_truth["numbers"])
    equation = extract_solution(solution_str)
    if equation is None:
        return 0.0
    evaluated = evaluate_equation(equation)
    if evaluated is None:
        return format_score
    result, used = evaluated
    used_counts = Counter(used)
    if use_all and used_counts != numbers:
        return format_score
    if any(count > numbers[n] for n, count in used_counts.items()):
        return format_score
    return score if result == target else format_score
