"""Write verl's example command lines as data: tests/data/verl/example_commands.json.

Run by hand against a clone of verl (bare or not), never by the tests:

    python tests/data/verl/extract_example_commands.py /work/.mirror/volcengine+verl/repo

It reads every `examples/**/*.sh` at the clone's HEAD (verl's `recipe/` is a git
submodule the mirror does not hold, so only `examples/` is read), keeps the scripts
that launch `verl.trainer.main_ppo` (`python3 -m` or `python -m`; split_placement's
`main_ppo_split.py` is the same trainer with its actor and critic on separate GPUs),
and writes each launch's arguments exactly as typed once the shell has expanded them:
continuation lines joined, `VAR=value` / `export VAR=value` / `VAR=( ... )` assignments
and `${VAR:-default}`, `${VAR}`, `$VAR`, `$((arithmetic))` expanded, `$HOME` written `~`
and `$(pwd)` / `$PWD` written `.` (verl's scripts run from its repository's root).
`if [ "$a" = b ]` / `[[ $a == b ]]` branches are followed when both sides are known
(the first branch otherwise); a `$(command)` other than `$(pwd)` stays as typed (it is
only ever part of a name or a log file). The words after the launch stop at a pipe or
redirection; `$@` (the caller's extra overrides) is dropped. A line's `unset` lists the
variables it reads (itself or through the assignments it uses) that the script never
sets, or sets only later: the shell makes them empty, and arithmetic on one is kept as
typed (bash stops there under `set -u`).

The YAML files a script names with `--config-path/--config-name` (and the tool and
interaction configs its overrides name) are copied under tests/data/verl/examples/
at their path in verl, so the tests need no clone.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "example_commands.json"
COPIES = HERE  # copies keep their path in verl: tests/data/verl/examples/...

_LAUNCH = re.compile(r"(verl\.trainer\.main_ppo|main_ppo_split\.py)(\s|$)")
_ASSIGN = re.compile(r"^\s*(?:export\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
# A comment after a continuation (`key=value \\  # why`) or on a line of its own inside
# a continued command ends the command in bash; the scripts mean the words after it
# to be part of it (they are indented as such), so the comment is dropped instead.
_COMMENT_IN_COMMAND = re.compile(r"[ \t]*\\[ \t]+#[^\n]*\n")
_COMMENT_LINE_IN_COMMAND = re.compile(r"^([ \t]*[^#\s][^\n]*)\\\n(?:[ \t]*#[^\n]*\n)+", re.M)
# A comment's own trailing backslash continues nothing (bash ends a comment at its line).
_COMMENT_BACKSLASH = re.compile(r"^([ \t]*#[^\n]*?)\\$", re.M)
_STOP = {"|", "|&", "2>&1", ">", ">>", "&", "&&", ";", "||"}
_DROP = {"$@", "${@}", "${@:1}", "${@:2}", "$*"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _arith(expr: str, env: dict[str, str], unset: set[str]) -> str:
    text = re.sub(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m[1], m[0]), expr)
    if not re.fullmatch(r"[0-9+\-*/%() ]+", text):  # a name the script sets later
        unset.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        return f"$(({expr.replace(' ', '')}))"
    return str(eval(text.replace("/", "//")))  # integers and operators only (checked above)


def _closing(text: str, start: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one opened before `start`."""
    depth = 1
    i = start
    while i < len(text):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def expand(
    text: str, env: dict[str, str], arrays: dict[str, list[str]], unset: set[str] | None = None
) -> str:
    """`text` with the shell's expansions done as this module's docstring says; the names
    of variables the script never sets (the shell's empty string) are added to `unset`."""
    unset = set() if unset is None else unset
    for word in _DROP:
        text = text.replace(f'"{word}"', " ").replace(word, " ")
    out = []
    i = 0
    while i < len(text):
        if text.startswith("$((", i):
            end = _closing(text, i + 3, "(", ")")
            if end > 0 and text[end : end + 1] == ")":
                out.append(_arith(expand(text[i + 3 : end - 1], env, arrays, unset), env, unset))
                i = end + 1
                continue
        if text.startswith("$(", i):
            end = _closing(text, i + 2, "(", ")")
            command = expand(text[i + 2 : end - 1], env, arrays, unset).strip()
            if command == "pwd":
                out.append(".")
            elif command.startswith("basename "):
                out.append(command.split()[-1].rstrip("/").rsplit("/", 1)[-1])
            else:  # a date or a name: kept as typed, one word
                out.append(f"$({command.replace(' ', '')})")
            i = end
            continue
        if text.startswith("${", i):
            end = _closing(text, i + 2, "{", "}")
            body = text[i + 2 : end - 1]
            if body.endswith("[@]") and body[:-3] in arrays:  # an array's words, as words
                quoted = bool(out) and out[-1] == '"' and text[end : end + 1] == '"'
                if quoted:
                    out.pop()
                out.append(" ".join(shlex.quote(w) for w in arrays[body[:-3]]))
                i = end + 1 if quoted else end
                continue
            replace = re.fullmatch(r"([A-Za-z_]\w*)//([^/]*)/(.*)", body, re.DOTALL)
            if replace:  # ${VAR//pattern/replacement}, a plain pattern
                out.append(env.get(replace[1], "").replace(replace[2], replace[3]))
                i = end
                continue
            found = re.match(r"([A-Za-z_][A-Za-z0-9_]*|[0-9])(:?[-+])?(.*)", body, re.DOTALL)
            name, op, word = found.groups() if found else (body, None, "")
            value = "~" if name == "HOME" else "." if name == "PWD" else env.get(name)
            if op in (":+", "+"):
                out.append(expand(word, env, arrays, unset) if value else "")
            elif value is not None and not (op == ":-" and value == ""):
                out.append(value)
            elif op:
                out.append(expand(word, env, arrays, unset))
            else:
                unset.add(name)
            i = end
            continue
        match = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)", text[i:])
        if match:
            name = match[1]
            value = "~" if name == "HOME" else "." if name == "PWD" else env.get(name)
            if value is None:
                unset.add(name)
            out.append(value or "")
            i += len(match[0])
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _value(
    raw: str, env: dict[str, str], arrays: dict[str, list[str]], unset: set[str] | None = None
) -> str:
    expanded = expand(raw.strip(), env, arrays, unset)
    try:
        return " ".join(shlex.split(expanded, comments=True))
    except ValueError:
        return expanded


def _condition(line: str, env: dict[str, str]) -> bool | None:
    match = re.search(r"\[\[?\s*(\S+)\s*(==|=|!=)\s*(\S+)\s*\]\]?", line)
    if not match:
        return None
    left, op, right = (_value(match[k], env, {}) for k in (1, 2, 3))
    if "$" in left or "$" in right:
        return None
    return (left == right) == (op != "!=")


def _logical_lines(text: str) -> list[str]:
    """Lines with continuations joined, and multi-line quotes and arrays in one line."""
    lines: list[str] = []
    pending = ""
    text = _COMMENT_IN_COMMAND.sub(" \\\n", text.replace("\r\n", "\n"))
    text = _COMMENT_LINE_IN_COMMAND.sub("\\1\\\n", text)
    text = _COMMENT_BACKSLASH.sub("\\1", text)
    for line in text.replace("\\\n", " ").splitlines():
        if pending:
            if pending.rstrip().endswith("=(") or pending.count("(") > pending.count(")"):
                body = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
                pending += "\n" + body
            else:
                pending += "\n" + line
        else:
            pending = line
        opened_array = re.match(r"^\s*[A-Za-z_]\w*=\(", pending) and pending.count(
            "("
        ) > pending.count(")")
        open_quote = pending.count('"') % 2 == 1 and _ASSIGN.match(pending)
        if not opened_array and not open_quote:
            lines.append(pending)
            pending = ""
    if pending:
        lines.append(pending)
    return lines


def extract(text: str) -> list[tuple[list[str], list[str]]]:
    """Every launch of verl's trainer in the script `text`: its argument words, and the
    variables they use that the script never sets (the shell makes them empty)."""
    env: dict[str, str] = {}
    arrays: dict[str, list[str]] = {}
    launches: list[tuple[list[str], list[str]]] = []
    used_unset: set[str] = set()  # read by an assignment before (or without) being set
    active: list[bool] = []  # one entry per open `if`: whether its current branch runs
    taken: list[bool] = []  # whether a branch of that `if` has run
    in_function = False
    for line in _logical_lines(text):
        stripped = line.strip()
        if re.match(r"(if|elif|else|fi)\b", stripped):
            stripped = re.sub(r"\s+#.*$", "", stripped)
        if re.match(r"^(function\s+\w+|\w+\(\))\s*(\(\))?\s*\{", stripped):
            in_function = True
            continue
        if in_function:
            in_function = stripped != "}"
            continue
        if stripped.startswith("if "):
            cond = _condition(stripped, env)
            run = cond if cond is not None else True
            active.append(run and all(active))
            taken.append(run)
            continue
        if stripped.startswith("elif ") and active:
            cond = _condition(stripped, env)
            run = not taken[-1] and (cond if cond is not None else False)
            active[-1] = run and all(active[:-1])
            taken[-1] = taken[-1] or run
            continue
        if stripped == "else" and active:
            active[-1] = not taken[-1] and all(active[:-1])
            continue
        if stripped.startswith("fi") and active:
            active.pop()
            taken.pop()
            continue
        if not all(active) or stripped.startswith("#"):
            continue
        if _LAUNCH.search(stripped):
            args, unset = _launch_words(stripped, env, arrays)
            launches.append((args, sorted(set(unset) | used_unset)))
            continue
        match = _ASSIGN.match(line)
        if match:
            name, raw = match[1], match[2]
            if raw.startswith("("):
                body = "\n".join(
                    part.split(" #", 1)[0] for part in raw.strip()[1:].rsplit(")", 1)[0].split("\n")
                )
                arrays[name] = shlex.split(expand(body, env, arrays, used_unset), comments=True)
            else:
                env[name] = _value(raw, env, arrays, used_unset)
    return launches


def _launch_words(
    line: str, env: dict[str, str], arrays: dict[str, list[str]]
) -> tuple[list[str], list[str]]:
    unset: set[str] = set()
    words = shlex.split(expand(line, env, arrays, unset))
    start = next(i for i, w in enumerate(words) if _LAUNCH.search(w + " ")) + 1
    out = []
    for word in words[start:]:
        if word in _STOP or word.startswith((">", "2>", "1>")):
            break
        if word in _DROP or not word:
            continue
        out.append(word)
    return out, sorted(unset)


def _config_files(repo: Path, script: str, args: list[str]) -> list[str]:
    """The files in verl that `args` name: its --config-path/--config-name YAML (and the
    YAML it names in its hydra defaults) and every override's value ending .yaml/.json."""
    options = dict(a.lstrip("-").split("=", 1) for a in args if a.startswith("--config-"))
    names: list[str] = []
    path = options.get("config-path")
    name = options.get("config-name")
    if path and name:
        folder = path.removeprefix("./")
        if folder == "config":  # relative to verl/trainer/main_ppo.py (Hydra's rule)
            folder = "verl/trainer/config"
        names.append(f"{folder}/{name.removesuffix('.yaml')}.yaml")
    for arg in args:
        value = arg.partition("=")[2]
        if value.endswith((".yaml", ".json")):
            names.append(value.removeprefix("./"))
    return names


def main(repo: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD").strip()
    scripts = sorted(
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "examples").splitlines()
        if p.endswith(".sh")
    )
    lines = []
    copied: set[str] = set()
    for script in scripts:
        text = git(repo, "show", f"HEAD:{script}")
        for index, (args, unset) in enumerate(extract(text)):
            lines.append(
                {
                    "script": script,
                    "family": script.split("/")[1],
                    "launch": index,
                    "args": args,
                    "unset": unset,
                }
            )
            for name in _config_files(repo, script, args):
                if name.startswith(("examples/", "verl/trainer/config/")):
                    copied.add(name)
    kept = []
    for name in sorted(copied):
        if name.startswith("verl/trainer/config/"):
            continue  # verl's own trainer configs: kept composed (ppo_*-0.9.1.yaml)
        try:
            content = git(repo, "show", f"HEAD:{name}")
        except subprocess.CalledProcessError:
            continue  # named but not in the repository (a user's own file)
        target = COPIES / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        kept.append(name)
    data = {
        "source": "https://github.com/volcengine/verl",
        "commit": commit,
        "scope": "examples/**/*.sh launching verl.trainer.main_ppo (recipe/ is a submodule)",
        "scripts_read": len(scripts),
        "config_copies": kept,
        "lines": lines,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(lines)} command lines from {len(scripts)} scripts; copied {kept}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/volcengine+verl/repo"))
