"""Produce default_scores-<verl version>.json with verl's own scorers (run once, by hand).

Needs a scratch environment with verl and nothing heavy:
    python -m venv /tmp/verlenv
    /tmp/verlenv/bin/pip install verl==0.9.1 --no-deps
    /tmp/verlenv/bin/python tests/data/verl/generate_default_scores.py

verl's package `__init__` imports torch and Ray; the scorer modules import only the
standard library, so the packages above them are registered as bare namespaces and
`verl.utils.reward_score` itself is imported unchanged. The tests never import verl:
they compare the built-in `verl_default` against the file this writes.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import types
from pathlib import Path

HERE = Path(__file__).parent


def _verl_default_compute_score():
    root = Path(importlib.metadata.distribution("verl").locate_file("verl"))
    for name, path in (("verl", root), ("verl.utils", root / "utils")):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    from verl.utils.reward_score import default_compute_score

    return default_compute_score


LONG = "The reasoning goes on. " * 20  # 460 characters: past every scorer's window

GSM8K = [
    ("Natalia sold 48 + 24 = 72 clips.\n#### 72", "72"),
    ("48 + 24 = 72\n#### 71", "72"),
    ("The answer is 72", "72"),
    ("So in all 1,234 apples.\n#### 1,234", "1234"),
    ("#### $1,234", "1234"),
    ("#### 1,234.5", "1234.5"),
    ("She owes #### -5", "-5"),
    ("#### 72\n#### 73", "72"),
    ("#### 72.0", "72"),
    ("####72", "72"),
    (LONG + "#### 72", "72"),
    ("#### 72\n" + LONG, "72"),
    ("\\boxed{72}", "72"),
    ("#### 72", 72),
    ("", "0"),
]

MATH = [
    ("So the answer is $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
    ("$\\boxed{\\frac12}$", "\\frac{1}{2}"),
    ("\\boxed{0.5}", "\\frac{1}{2}"),
    ("\\boxed{1/2}", "\\frac{1}{2}"),
    ("\\boxed{3}", "4"),
    ("The answer is 3", "3"),
    ("\\boxed{x = 5}", "5"),
    ("\\boxed{5 \\text{ cm}}", "5"),
    ("\\boxed{1,000}", "1000"),
    ("\\boxed{1,000}", "1,000"),
    ("the answer is $\\boxed 7$.", "7"),
    ("\\fbox{7}", "7"),
    ("\\boxed{\\dfrac{3}{4}}", "\\frac34"),
    ("\\boxed{90^\\circ}", "90"),
    ("\\boxed{\\left( 3, 4 \\right)}", "(3,4)"),
    ("\\boxed{50\\%}", "50"),
    ("\\boxed{\\sqrt2}", "\\sqrt{2}"),
    ("\\boxed{3", "3"),
    ("\\boxed{1\\text{ a}\\text{ b}}", "1\\text{ a}\\text{ b}"),
    ("\\boxed{\\sqrt}", "\\sqrt"),
    ("\\boxed{.5}", "0.5"),
    ("\\boxed{2}\\boxed{3}", "3"),
    ("\\boxed{5}", 5),
    ("\\boxed{\\frac{1}{2}}", None),
]

DAPO = [
    ("6 * 7 = 42.\nAnswer: 42", "42"),
    ("Answer: 41", "42"),
    ("I think it's 42", "42"),
    ("so it is \\boxed{42}", "42"),
    ("\\boxed{ 42}", "42"),
    ("Answer: 1,234", "1234"),
    ("Answer: $\\frac{1}{2}$", "\\frac12"),
    ("Answer: 5 dollars", "5"),
    ("Answer: x = 7", "7"),
    ("answer : 7\nchecked", "7"),
    (LONG + "Answer: 7", "7"),
    ("Answer: 7\n" + LONG, "7"),
    ("Answer: \\boxed{7}", "7"),
    ("\\boxed{7}" + " " * 150, "7"),
    ("Answer: 12\nAnswer: 13", "13"),
    ("Answer: \\text{(B)}", "B"),
]
DAPO_OTHER = [
    ("aime2024", "Answer: 033", "33"),
    ("aime2024", "Answer: 33", "33"),
    ("aime25", "\\boxed{204}", "204"),
    ("math", "Answer: 3.5", "3.5"),
    ("math_dapo_reasoning", "Answer: \\sqrt3", "\\sqrt{3}"),
]

PARIS = {"target": ["Paris"]}
SEARCH_R1 = [
    ("<answer>Paris</answer>", PARIS),
    ("<answer>The Paris.</answer>", {"target": ["paris"]}),
    ("<answer>London</answer>", PARIS),
    ("Paris", PARIS),
    ("<answer>London</answer> no, <answer>Paris</answer>", PARIS),
    ("<answer>Paris</answer>" * 11, PARIS),
    ("<answer>Paris</answer>", {"target": "Paris"}),
    ("<answer>  paris  </answer>", PARIS),
    ("<answer>Paris, France</answer>", PARIS),
    ("<answer>new york city</answer>", {"target": ["NYC", "New York City"]}),
    ("<answer>Paris", PARIS),
    ("<answer>\nParis\n</answer>", PARIS),
]
SEARCH_R1_OTHER = [
    ("searchR1_hotpotqa", "<answer>an apple</answer>", {"target": ["Apple"]}),
    ("searchR1_bamboogle", "<answer>1,000</answer>", {"target": ["1000"]}),
    ("searchR1_triviaqa", "<answer>x</answer>", {"target": ["y"]}),
    ("searchR1_popqa", "<answer>Yes</answer>", {"target": ["yes"]}),
    ("searchR1_2wikimultihopqa", "<answer>No</answer>", {"target": ["yes"]}),
    ("searchR1_musique", "<answer>1990</answer>", {"target": ["1990"]}),
]


def cases() -> list[tuple[str, str, object]]:
    out: list[tuple[str, str, object]] = [("openai/gsm8k", s, g) for s, g in GSM8K]
    out += [("lighteval/MATH", s, g) for s, g in MATH]
    out += [("DigitalLearningGmbH/MATH-lighteval", s, g) for s, g in MATH[:4]]
    out += [("HuggingFaceH4/MATH-500", s, g) for s, g in MATH[4:8]]
    out += [("math_dapo", s, g) for s, g in DAPO] + DAPO_OTHER
    out += [("searchR1_nq", s, g) for s, g in SEARCH_R1] + SEARCH_R1_OTHER
    out += [("no_such_source", "#### 1", "1")]
    return out


def main() -> None:
    score = _verl_default_compute_score()
    version = importlib.metadata.version("verl")
    rows = []
    for data_source, solution_str, ground_truth in cases():
        row: dict[str, object] = {
            "data_source": data_source,
            "solution_str": solution_str,
            "ground_truth": ground_truth,
        }
        try:
            row["expected"] = score(data_source, solution_str, ground_truth, None)
        except Exception as exc:  # verl refuses it: ours must too
            row["raises"] = type(exc).__name__
        rows.append(row)
    out = HERE / f"default_scores-{version}.json"
    document = {
        "verl_version": version,
        "function": "verl.utils.reward_score.default_compute_score",
        "generated_by": "tests/data/verl/generate_default_scores.py",
        "cases": rows,
    }
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(rows)} cases -> {out}")


if __name__ == "__main__":
    main()
