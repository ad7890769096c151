"""verl's default reward: picks a scorer by the row's ``data_source``, as verl's
``default_compute_score`` does, and gives the scores verl's own scorers give.

Dispatched (verl's data source names):
- ``openai/gsm8k``: the last ``#### <number>`` of the last 300 characters, thousands
  commas and ``$`` dropped, equals the ground truth string: 1.0, else 0.0.
- ``lighteval/MATH``, ``DigitalLearningGmbH/MATH-lighteval``, ``HuggingFaceH4/MATH-500``:
  the last ``\\boxed{...}`` (or ``\\boxed x``) equals the ground truth after the MATH
  benchmark's string normalisation (hendrycks ``strip_string``): 1.0, else 0.0.
- ``math_dapo``, ``math``, ``math_dapo_reasoning`` and every source starting ``aime``
  (DAPO): the last ``Answer: ...`` line of the last 300 characters, normalised as
  Minerva does, else the last ``\\boxed{...}`` of the last 100 characters compared
  verbatim; returns ``{"score": 1.0 | -1.0, "acc": bool, "pred": str}``.
- ``searchR1_nq``, ``searchR1_triviaqa``, ``searchR1_popqa``, ``searchR1_hotpotqa``,
  ``searchR1_2wikimultihopqa``, ``searchR1_musique``, ``searchR1_bamboogle``: the last
  ``<answer>...</answer>`` exactly matches one of ``ground_truth["target"]`` after SQuAD
  normalisation: 1.0 (0.25 with more than ten answer tags), else 0.0.

Refused with a per-row error: code data sources (``codecontests``, ``apps``,
``codeforces``, ``taco``), whose verl scorer runs the response as a program (the
built-in ``verl_code`` does, and scores them when no reward is chosen), and the
sources whose verl scorers need a symbolic algebra grader (``numina_*``: prime_math;
``hiyouga/geometry3k``: mathruler). Any other data source is an error naming the
supported ones. Extra keyword arguments (verl's ``sandbox_fusion_url``, ...) are ignored.
Standard library only: this module runs alone in the reward sandbox.
"""

import re
import string
from typing import Any

GSM8K = ("openai/gsm8k",)
MATH = ("lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500")
DAPO = ("math_dapo", "math", "math_dapo_reasoning")  # and every "aime*"
SEARCH_R1 = tuple(
    "searchR1_" + name
    for name in ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")
)
CODE = ("codecontests", "apps", "codeforces", "taco")
SYMBOLIC = (
    "numina_aops_forum",
    "numina_synthetic_math",
    "numina_amc_aime",
    "numina_synthetic_amc",
    "numina_cn_k12",
    "numina_olympiads",
    "hiyouga/geometry3k",
)


# GSM8K ---------------------------------------------------------------------------------


def gsm8k_score(solution_str: str, ground_truth: Any) -> float:
    found = re.findall(r"#### (\-?[0-9\.\,]+)", solution_str[-300:])
    if not found:
        return 0.0
    answer = found[-1].replace(",", "").replace("$", "")
    return 1.0 if answer == ground_truth else 0.0  # no coercion: an int truth never matches


# MATH (hendrycks) ----------------------------------------------------------------------


def last_boxed(text: str) -> str | None:
    """The last ``\\boxed ...`` (to the next ``$``), else the last ``\\boxed{...}`` or
    ``\\fbox{...}`` with balanced braces."""
    if "\\boxed " in text:
        return "\\boxed " + text.split("\\boxed ")[-1].split("$")[0]
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
        if start < 0:
            return None
    end = _closing_brace(text, start)
    return None if end is None else text[start : end + 1]


def unbox(boxed: str) -> str | None:
    """The content of ``\\boxed x`` or ``\\boxed{x}``; None for any other form (``\\fbox``)."""
    if "\\boxed " in boxed:
        return boxed[len("\\boxed ") :] if boxed.startswith("\\boxed ") else None
    if boxed.startswith("\\boxed{") and boxed.endswith("}"):
        return boxed[len("\\boxed{") : -1]
    return None


class _Unnormalisable(Exception):
    """The normalisation gave up: the answers are then compared as written."""


def _braced_fracs(text: str) -> str:
    r"""\frac12 -> \frac{1}{2}, \frac1{2} -> \frac{1}{2}; a short tail leaves ``text`` as is."""
    head, *parts = text.split("\\frac")
    out = head
    for part in parts:
        out += "\\frac"
        if not part:
            raise _Unnormalisable
        if part[0] == "{":
            out += part
        elif len(part) < 2:
            return text
        elif part[1] != "{":
            out += "{" + part[0] + "}{" + part[1] + "}" + part[2:]
        else:
            out += "{" + part[0] + "}" + part[1:]
    return out


def _braced_sqrt(text: str) -> str:
    head, *parts = text.split("\\sqrt")
    out = head
    for part in parts:
        if not part:
            raise _Unnormalisable
        out += "\\sqrt" + (part if part[0] == "{" else "{" + part[0] + "}" + part[1:])
    return out


def _slash_to_frac(text: str) -> str:
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return text
    return "\\frac{" + str(a) + "}{" + str(b) + "}" if text == f"{a}/{b}" else text


def normalise_math(text: str) -> str:
    for old, new in (
        ("\n", ""),
        ("\\!", ""),
        ("\\\\", "\\"),
        ("tfrac", "frac"),
        ("dfrac", "frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("\\$", ""),
    ):
        text = text.replace(old, new)
    if "\\text{ " in text:  # units on the right: "5 \text{ cm}"
        parts = text.split("\\text{ ")
        if len(parts) != 2:
            raise _Unnormalisable
        text = parts[0]
    text = text.replace("\\\\%", "").replace("\\%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # "x = 5" -> " 5"
        text = sides[1]
    if "\\sqrt" in text:
        text = _braced_sqrt(text)
    text = _braced_fracs(text.replace(" ", ""))
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _slash_to_frac(text)


def math_equal(answer: str, truth: Any) -> bool:
    if truth is None:
        return False
    if not isinstance(truth, str):
        return answer == truth
    try:
        return normalise_math(answer) == normalise_math(truth)
    except _Unnormalisable:
        return answer == truth


def math_score(solution_str: str, ground_truth: Any) -> float:
    boxed = last_boxed(solution_str)
    answer = unbox(boxed) if boxed is not None else None
    return 1.0 if answer is not None and math_equal(answer, ground_truth) else 0.0


# DAPO (Minerva answer line, then a strict box) -------------------------------------------

_DAPO_REPLACE = (
    ("an ", ""),
    ("a ", ""),
    (".$", "$"),
    ("\\$", ""),
    ("\\ ", ""),
    (" ", ""),
    ("mbox", "text"),
    (",\\text{and}", ","),
    ("\\text{and}", ","),
    ("\\text{m}", "\\text{}"),
)
_DAPO_DROP = (  # in this order: "\\text{}" last, after the longer forms
    "square",
    "ways",
    "integers",
    "dollars",
    "mph",
    "inches",
    "hours",
    "km",
    "units",
    "\\ldots",
    "sue",
    "points",
    "feet",
    "minutes",
    "digits",
    "cents",
    "degrees",
    "cm",
    "gm",
    "pounds",
    "meters",
    "meals",
    "edges",
    "students",
    "childrentickets",
    "multiples",
    "\\text{s}",
    "\\text{.}",
    "\\text{\ns}",
    "\\text{}^2",
    "\\text{}^3",
    "\\text{\n}",
    "\\text{}",
    "\\mathrm{th}",
    "^\\circ",
    "^{\\circ}",
    "\\;",
    ",\\!",
    "{,}",
    '"',
    "\\dots",
)
INVALID = "[INVALID]"


def normalise_dapo(answer: str) -> str:
    answer = answer.split("=")[-1]
    for old, new in _DAPO_REPLACE:
        answer = answer.replace(old, new)
    for word in _DAPO_DROP:
        answer = answer.replace(word, "")
    answer = re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", answer)
    for command in ("text", "textbf", "overline"):
        answer = re.sub(r"(\\" + command + r"\{)(.*?)(\})", "\\2", answer)
    answer = re.sub(r"(\\boxed\{)(.*)(\})", "\\2", answer)
    answer = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", answer)
    answer = re.sub(r"(sqrt)([^{])", "sqrt{\\2}", answer)
    answer = answer.replace("$", "")
    if answer.replace(",", "").isdigit():
        answer = answer.replace(",", "")
    return answer.strip()


def _strict_box(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    end = _closing_brace(text, start)
    return None if end is None else text[start + len("\\boxed{") : end]


def _closing_brace(text: str, start: int) -> int | None:
    """Where the first ``{`` at or after ``start`` is closed (braces balanced), or None."""
    depth = 0
    for end in range(start, len(text)):
        if text[end] == "{":
            depth += 1
        elif text[end] == "}":
            depth -= 1
            if depth == 0:
                return end
    return None


def dapo_score(solution_str: str, ground_truth: Any) -> dict[str, Any]:
    tail = solution_str[-300:]
    lines = re.findall(r"(?i)Answer\s*:\s*([^\n]+)", tail)
    pred = normalise_dapo(lines[-1] if lines else INVALID)
    correct = pred == normalise_dapo(ground_truth)
    if pred == INVALID:
        boxed = _strict_box(tail[-100:])
        if boxed is not None:
            pred, correct = boxed, boxed == ground_truth
    return {"score": 1.0 if correct else -1.0, "acc": correct, "pred": pred}


# Search-R1 (SQuAD exact match) -----------------------------------------------------------


def normalise_qa(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def search_r1_score(solution_str: str, ground_truth: Any) -> float:
    answers = list(re.finditer(r"<answer>(.*?)</answer>", solution_str, re.DOTALL))
    if not answers:
        return 0.0
    targets = ground_truth["target"]
    if isinstance(targets, str):
        targets = [targets]
    prediction = normalise_qa(answers[-1].group(1).strip())
    if not any(normalise_qa(t) == prediction for t in targets):
        return 0.0
    tags = max(solution_str.count("<answer>"), solution_str.count("</answer>"))
    return 0.25 if tags > 10 else 1.0  # many answer tags: a model fishing for a match


# Dispatch --------------------------------------------------------------------------------


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> float | dict[str, Any]:
    if data_source in GSM8K:
        return gsm8k_score(solution_str, ground_truth)
    if data_source in MATH:
        return math_score(solution_str, ground_truth)
    if data_source in DAPO or data_source.startswith("aime"):
        return dapo_score(solution_str, ground_truth)
    if data_source in SEARCH_R1:
        return search_r1_score(solution_str, ground_truth)
    if data_source in CODE:
        raise ValueError(
            f"data_source {data_source!r}: verl scores it by running the response as code "
            "(prime_code or sandbox fusion): the built-in verl_code does, and scores these "
            "rows when reward.function is unset"
        )
    if data_source in SYMBOLIC:
        raise ValueError(
            f"data_source {data_source!r}: verl's scorer for it needs a symbolic algebra "
            "grader (sympy), which this built-in does not include; write a reward function"
        )
    supported = ", ".join((*GSM8K, *MATH, *DAPO, "aime*", *SEARCH_R1))
    raise ValueError(
        f"no verl scorer for data_source {data_source!r}; the verl default reward knows: "
        f"{supported}"
    )
