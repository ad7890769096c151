"""Math: the last ``\\boxed{...}`` of the response equals the ground truth. Score 1.0 or 0.0.

Both sides are normalised as the MATH benchmark's ``strip_string`` does (fractions,
``\\left``/``\\right``, units in ``\\text{}``, degrees, dollars, percent, spaces,
``x = 5`` -> ``5``), then compared as strings, then as exact numbers (``\\frac{1}{2}``,
``1/2``, ``0.5`` and ``50\\%`` forms). A ground truth that itself holds a
``\\boxed{}`` is unwrapped. No symbolic algebra: ``x+1`` and ``1+x`` differ.
"""

import re
from fractions import Fraction
from typing import Any


def last_boxed_only_string(string: str) -> str | None:
    """The last ``\\boxed{...}`` (or ``\\fbox{...}``, ``\\boxed 5``) with braces balanced."""
    index = string.rfind("\\boxed")
    if index < 0:
        index = string.rfind("\\fbox")
        if index < 0:
            return None
    if string.startswith("\\boxed ", index):
        return "\\boxed " + string[index + len("\\boxed ") :].split("$")[0].strip()
    depth = 0
    for i in range(index, len(string)):
        if string[i] == "{":
            depth += 1
        elif string[i] == "}":
            depth -= 1
            if depth == 0:
                return string[index : i + 1]
    return None


def remove_boxed(boxed: str) -> str:
    if boxed.startswith("\\boxed "):
        return boxed[len("\\boxed ") :]
    for prefix in ("\\boxed{", "\\fbox{"):
        if boxed.startswith(prefix) and boxed.endswith("}"):
            return boxed[len(prefix) : -1]
    return boxed


def _fix_fracs(string: str) -> str:
    parts = string.split("\\frac")
    out = parts[0]
    for part in parts[1:]:
        out += "\\frac"
        if part.startswith("{") or len(part) < 2:
            out += part
            continue
        a, b, rest = part[0], part[1], part[2:]
        out += "{" + a + "}" + ("{" + b + "}" + rest if b != "{" else b + rest)
    return out


def _fix_a_slash_b(string: str) -> str:
    match = re.fullmatch(r"(-?\d+)/(\d+)", string)
    if not match:
        return string
    return "\\frac{" + match.group(1) + "}{" + match.group(2) + "}"


def _fix_sqrt(string: str) -> str:
    return re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", string)


def _unwrap_text(string: str) -> str:
    return re.sub(r"\\(?:text|textbf|mathrm|mathbf|mbox)\{([^{}]*)\}", r"\1", string)


def strip_string(string: object) -> str:
    string = str(string).replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    string = string.replace("tfrac", "frac").replace("dfrac", "frac")
    string = string.replace("\\left", "").replace("\\right", "")
    string = string.replace("^{\\circ}", "").replace("^\\circ", "").replace("°", "")
    string = string.replace("\\$", "").replace("$", "")
    # Units after the number: "5 \text{ cm}" -> "5".
    string = re.sub(r"\\text\{\s[^{}]*\}\s*$", "", string).strip()
    string = _unwrap_text(string)
    string = string.replace("\\%", "").replace("%", "")
    string = string.replace(" .", " 0.").replace("{.", "{0.")
    if string.startswith("."):
        string = "0" + string
    sides = string.split("=")
    if len(sides) == 2 and len(sides[0].strip()) <= 2:
        string = sides[1]
    string = _fix_sqrt(string).replace(" ", "")
    string = _fix_fracs(string)
    string = string.rstrip(".")
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", string):
        string = string.replace(",", "")
    if string == "0.5":
        string = "\\frac{1}{2}"
    return _fix_a_slash_b(string)


def _as_number(string: str) -> Fraction | None:
    """An exact number for ``3``, ``-0.25``, ``\\frac{1}{4}``, ``1/4`` (normalised form)."""
    match = re.fullmatch(r"(-?)\\frac\{(-?\d+)\}\{(\d+)\}", string)
    try:
        if match:
            value = Fraction(int(match.group(2)), int(match.group(3)))
            return -value if match.group(1) else value
        if re.fullmatch(r"-?\d+(\.\d+)?", string):
            return Fraction(string)
    except (ValueError, ZeroDivisionError):
        return None
    return None


def is_equiv(answer: str, expected: str) -> bool:
    a, b = strip_string(answer), strip_string(expected)
    if a == b:
        return True
    x, y = _as_number(a), _as_number(b)
    return x is not None and x == y


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> float:
    boxed = last_boxed_only_string(solution_str)
    if boxed is None:
        return 0.0
    expected = str(ground_truth)
    if "\\boxed" in expected or "\\fbox" in expected:
        expected = remove_boxed(last_boxed_only_string(expected) or expected)
    return 1.0 if is_equiv(remove_boxed(boxed), expected) else 0.0
