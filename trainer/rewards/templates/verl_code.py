"""verl's scorer of code rows: runs the response's program against the row's test cases
and gives the score verl 0.9.1's ``prime_code`` gives (``default_compute_score`` for the
data sources ``codecontests``, ``apps``, ``codeforces`` and ``taco``, ``continuous=True``).

- The program: the text after the last `````python`` up to the next ````` (the whole
  response when it has no such block).
- The ground truth: test cases as JSON (or a dict), ``{"inputs": [...], "outputs":
  [...]}``. Without ``fn_name`` each input is the program's stdin and each output its
  expected stdout; with ``fn_name`` the program defines that function (or a method of
  ``class Solution``), each input is newline-separated JSON arguments and each output
  the JSON of the return value.
- The score: 1.0 when the program passes every test case in one run; otherwise each of
  the first 10 test cases is run alone and the score is the fraction passed. verl runs
  those lone test cases without ``fn_name``, as stdin programs, so a call-based program
  that fails one test case scores what its stdin runs score (almost always 0.0): so
  does this built-in. A program that fails to compile, raises, exceeds a limit or
  prints a wrong answer fails the test case; malformed test cases score 0.0.
- Outputs are compared as verl compares them: stdout equal after stripping (the whole
  text or each line), or the non-empty lines equal, or each line a number close to the
  expected one (relative 1e-5, absolute 1e-8); a return value equal to the expected one
  (a tuple as a list, a dict's keys as integers where verl makes them so), compared as
  the plain JSON-like value it is (verl lets a value's own ``__eq__`` decide).

Each run is a forked process of its own (``os.fork``: the reward sandbox refuses
``execve``) that closes every inherited descriptor, writes nothing anywhere but its
result pipe, runs in a process group the scorer kills when the run ends, under
``RLIMIT_AS`` (``memory_limit_mb`` over what it has mapped), ``RLIMIT_CPU`` and
``RLIMIT_FSIZE``, with verl's guard (``os.fork``, ``subprocess``, ``os.kill``, file
removal, ... disabled) and Python's sockets refused. The scorer kills a run whose setup
or test case takes more than ``timeout_s`` (verl's 5 s), or which takes more than
``timeout_s + 1`` in all (verl's limit on one run), and fails a test case that prints
more than ``output_limit_bytes``. The scorer compares outputs itself, in its own
process, from what the run printed or returned: nothing the program writes is taken as a
verdict. As in verl (whose runner holds the test cases it checks), a program could still
read the row's expected outputs from its own memory, a copy of the scorer's: a runner
without them would need a fresh interpreter, which the sandbox's ``execve`` ban rules
out. These guards are not a security boundary on their own: the reward sandbox (no
network, no execve, Landlock, process and memory limits, everything killed after each
call) is, so this built-in belongs in the sandbox pool (the default executor), as verl's
``prime_code`` warns.

Keyword arguments (``reward.kwargs``; verl's ``sandbox_fusion.memory_limit_mb`` and
``sandbox_fusion.max_concurrent`` map onto the first two): ``memory_limit_mb`` (1024,
verl's), ``max_concurrent`` runs at once (4, at most 8), ``timeout_s`` (5.0),
``output_limit_bytes`` (8 MiB). verl gives each lone test case 10 s; here every run has
``timeout_s``, so one limit bounds the whole scoring (`worst_case_s`).

Standard library only: this module runs alone in the reward sandbox.
"""

import ast
import contextlib
import io
import json
import math
import os
import resource
import select
import signal
import sys
import time
import unittest.mock
from typing import Any

DATA_SOURCES = ("codecontests", "apps", "codeforces", "taco")

DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MEMORY_LIMIT_MB = 1024
DEFAULT_MAX_CONCURRENT = 4
# More at once would only queue on the sandbox's process limit (32) and its cores.
MAX_CONCURRENT = 8
DEFAULT_OUTPUT_LIMIT_BYTES = 8 << 20
CONTINUOUS_CASES = 10  # verl runs at most the first 10 test cases one by one
RUN_GRACE_S = 1.0  # verl waits timeout + 1 s for a whole run

# What verl puts before every program.
PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\n"
    "from collections import *\nfrom heapq import *\nfrom bisect import *\n"
    "from copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\n"
    "import datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\n"
    "import operator\nimport io\nimport sys\nimport json\nsys.setrecursionlimit(6*10**5)\n"
)


def extract_program(solution_str: str) -> str:
    return solution_str.split("```python")[-1].split("```")[0]


def wrap_stdin_program(program: str) -> str:
    """verl's rewrite of a stdin program: an ``if __name__ == '__main__':`` last block is
    unwrapped, then every line but the leading imports becomes the body of ``code()``."""
    try:
        tree = ast.parse(program)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            # verl unparses the statement lists themselves.
            body: Any = tree.body[:-1]
            program = ast.unparse(body) + "\n" + ast.unparse(last.body)  # type: ignore[arg-type]
    except Exception:
        pass
    lines = []
    for line in program.split("\n"):
        if line.startswith(("from ", "import ")):
            lines.append(line + "\n")
        else:
            lines.append("\t" + line + "\n")
    out, started = "", False
    for line in lines:
        if line.startswith("\t") and not started:
            out += "stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n" + line
            started = True
        elif started and line.startswith(("from ", "import ")):
            out += "\t" + line
        else:
            out += line
    return out


# Comparing ------------------------------------------------------------------------------


def _close(a: float, b: float) -> bool:
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)  # numpy.allclose's tolerances


def _is_int_text(value: str) -> bool:
    return value.isdigit()


def stdout_matches(printed: str, expected: str) -> bool:
    """verl's chain of stdout comparisons (prime_code's run_test), in effect."""
    lines = printed.splitlines()
    truth = expected.strip()
    if "\n".join(lines).strip() == truth:
        return True
    if "\n".join(line.strip() for line in lines).strip() == truth:
        return True
    expected_lines = [x.strip() for x in expected.split("\n") if x]
    kept = [line for line in lines if line]
    if kept == expected_lines:
        return True
    if len(kept) != len(expected_lines):
        return False
    pairs = list(zip(kept, expected_lines, strict=True))
    if all(_is_int_text(a) and _is_int_text(b) for a, b in pairs):
        return False  # integers compare as text, already done
    try:
        return all(_close(float(a), float(b)) for a, b in pairs)
    except (ValueError, OverflowError):
        return False


def _int_keys(value: dict) -> dict:
    return {int(k): v for k, v in value.items()}


def expected_return(raw: Any) -> Any:
    """The expected return value as verl reads it (raises on malformed JSON)."""
    expected = json.loads(raw)
    if isinstance(expected, dict):
        with contextlib.suppress(Exception):
            expected = [_int_keys(expected)]
    with contextlib.suppress(Exception):
        if isinstance(expected[0], dict):
            expected = [_int_keys(expected[0])]
    return expected


def return_matches(output: Any, expected: Any) -> bool:
    if isinstance(output, tuple):
        output = list(output)
    result = output == expected
    if isinstance(expected, list) and expected:
        result = result or output == expected[0]
    try:
        if isinstance(output[0], tuple):
            result = result or [list(x) for x in output] == expected[0]
    except Exception:
        pass
    return result is True


# A return value crosses the pipe as JSON that keeps tuples and non-string keys.
def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, float)):
        return type(value)(value) if value is not None else None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, tuple):
        return {"t": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "t" in value:
            return tuple(_decode(v) for v in value["t"])
        return {_decode(k): _decode(v) for k, v in value["d"]}
    return value


# The run (a forked process) ---------------------------------------------------------------


class _BoundedOutput(io.StringIO):
    """The program's stdout: writing past the limit raises, failing the test case."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._room = limit

    def write(self, text: str) -> int:
        self._room -= len(text)
        if self._room < 0:
            raise MemoryError("output limit exceeded")
        return super().write(text)

    def close(self, x: Any) -> int:  # type: ignore[override]
        # verl's Capturing replaces close with `lambda x: 1`: close() raises TypeError.
        return 1


def _refuse_network(*args: Any, **kwargs: Any) -> Any:
    raise OSError("network access is disabled in the reward sandbox")


def _guard() -> None:
    """verl's reliability_guard (prime_code), and sockets refused."""
    import builtins
    import shutil
    import socket
    import subprocess

    os.environ["OMP_NUM_THREADS"] = "1"
    for module, names in (
        (builtins, ["exit", "quit", "help"]),
        (shutil, ["rmtree", "move", "chown"]),
        (subprocess, ["Popen"]),
        (
            os,
            [
                "kill",
                "system",
                "putenv",
                "remove",
                "removedirs",
                "rmdir",
                "fchdir",
                "setuid",
                "fork",
                "forkpty",
                "killpg",
                "rename",
                "renames",
                "truncate",
                "replace",
                "unlink",
                "fchmod",
                "fchown",
                "chmod",
                "chown",
                "chroot",
                "lchflags",
                "lchmod",
                "lchown",
                "getcwd",
                "chdir",
            ],
        ),
    ):
        for name in names:
            setattr(module, name, None)
    for name in ("socket", "create_connection", "create_server", "socketpair", "fromfd"):
        setattr(socket, name, _refuse_network)
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter", "subprocess", "ctypes"):
        sys.modules[name] = None  # type: ignore[assignment]


def _call_with_stdin(method: Any, inputs: str) -> None:
    """verl's call_method: the program's stdin, ``open``, and the stdin object its module
    captured, all read ``inputs``; SystemExit ends the program normally."""
    patch = unittest.mock.patch
    lines = iter(inputs.split("\n"))

    @patch("builtins.open", unittest.mock.mock_open(read_data=inputs))
    @patch("sys.stdin", io.StringIO(inputs))
    @patch("sys.stdin.readline", lambda *args: next(lines))
    @patch("sys.stdin.readlines", lambda *args: inputs.split("\n"))
    @patch("sys.stdin.read", lambda *args: inputs)
    def inner(_method: Any) -> Any:
        try:
            return _method()
        except SystemExit:
            pass

    inner(method)


def _mapped_bytes() -> int:
    """This process's address space in bytes: from /proc, or where the sandbox hides it,
    found by lowering the soft RLIMIT_AS until a one-page mapping fails."""
    try:
        with open(f"/proc/{os.getpid()}/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        pass
    import mmap

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    page = resource.getpagesize()
    low, high = 0, (hard if hard != resource.RLIM_INFINITY else 1 << 47) // page
    try:
        while high - low > 16:  # within 64 KiB
            middle = (low + high) // 2
            resource.setrlimit(resource.RLIMIT_AS, (middle * page, hard))
            try:
                mmap.mmap(-1, page).close()
                high = middle
            except (OSError, MemoryError):
                low = middle
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return high * page


def _child(
    write_fd: int,
    program: str,
    fn_name: Any,
    inputs: list,
    memory_bytes: int,
    cpu_s: int,
    output_limit: int,
) -> None:
    """The run: prepare (``{"p": 1}``, or ``{"h": why}`` and exit), set up the program
    (``{"s": 1}``, or ``{"s": 0}``), then run each input, one line each: ``{"o":
    printed}``, ``{"r": returned}`` or ``{"e": 1}``."""
    write = os.write
    dumps = json.dumps

    def send(**message: Any) -> None:
        data = (dumps(message, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            view = view[write(write_fd, view) :]

    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        top = soft if 0 < soft < (1 << 20) else 4096
        low, high = sorted((write_fd, devnull))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, top)
        for which, value in (
            (resource.RLIMIT_AS, _mapped_bytes() + memory_bytes),
            (resource.RLIMIT_CPU, cpu_s),
            (resource.RLIMIT_FSIZE, 1 << 20),
            (resource.RLIMIT_CORE, 0),
        ):
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        # As in verl's multiprocessing child: stdin and stdout are /dev/null's (the
        # program's module keeps them as `stdin` and `stdout`, the former patched below).
        sys.stdin = open(os.devnull)  # noqa: SIM115  (open for the run's life)
        sys.stdout = sys.stderr = quiet = open(os.devnull, "w")  # noqa: SIM115
        _guard()
        send(p=1)  # prepared: what follows may come from the program
    except BaseException as exc:
        try:
            send(h=f"{type(exc).__name__}: {exc}")
        finally:
            os._exit(71)

    try:
        import types

        call_based = fn_name is not None
        source = PRELUDE + (program if call_based else wrap_stdin_program(program))
        module = types.ModuleType("tmp_sol")
        sys.modules["tmp_sol"] = module
        exec(compile(source, "<string>", "exec"), module.__dict__)
        owner: Any = module
        if call_based and "class Solution" in program:
            owner = module.Solution()
        method = getattr(owner, fn_name if call_based else "code")
    except BaseException:
        send(s=0)
        os._exit(0)
    send(s=1)
    for raw in inputs:
        try:
            if call_based:
                args = [json.loads(line) for line in raw.split("\n")]
                try:
                    if isinstance(args[0], dict):
                        args = [_int_keys(args[0])]
                except Exception:
                    pass
                returned = method(*args)
                json.dumps(returned)  # verl fails a value JSON cannot hold
                encoded = _encode(returned)
                send(r=encoded)
            else:
                if not isinstance(raw, str):
                    raise TypeError("verl fails an input that is not a string")
                captured = _BoundedOutput(output_limit)
                sys.stdout = captured
                try:
                    _call_with_stdin(method, raw)
                finally:
                    sys.stdout = quiet
                send(o=captured.getvalue())
        except BaseException:
            sys.stdout = quiet
            try:
                send(e=1)
            except BaseException:
                os._exit(0)
    os._exit(0)


class _Run:
    """One forked run of the program over some test cases, seen from the scorer."""

    def __init__(self, cases: list[int], program: str, tests: dict, limits: dict) -> None:
        self.cases = cases
        self.verdicts: list[bool] = []
        self.prepared = False
        self.setup: bool | None = None
        self.done = False
        self.tests = tests
        self.limits = limits
        self._buffer = b""
        read_fd, write_fd = os.pipe()
        inputs = [tests["inputs"][i] for i in cases]
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.close(read_fd)
                _child(
                    write_fd,
                    program,
                    tests.get("fn_name"),
                    inputs,
                    limits["memory_bytes"],
                    limits["cpu_s"],
                    limits["output_limit"],
                )
            finally:
                os._exit(70)
        os.close(write_fd)
        self.pid, self.fd = pid, read_fd
        now = time.monotonic()
        self.final_deadline = now + limits["timeout_s"] + RUN_GRACE_S
        self.stage_deadline = now + limits["timeout_s"]

    def deadline(self) -> float:
        return min(self.final_deadline, self.stage_deadline)

    def read(self) -> None:
        """Take what the run wrote; a failed test case (or the last) ends the run."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self.finish()
            return
        self._buffer += chunk
        if len(self._buffer) > 6 * self.limits["output_limit"] + 4096:
            self.finish()
            return
        while b"\n" in self._buffer and not self.done:
            line, _, self._buffer = self._buffer.partition(b"\n")
            self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except Exception:
            self.finish()
            return
        self.stage_deadline = time.monotonic() + self.limits["timeout_s"]
        if not self.prepared:  # the harness's own message, before any of the program's
            if message.get("p") != 1:
                self.finish()
                raise RuntimeError(f"verl_code could not prepare a run: {message!r:.300}")
            self.prepared = True
            return
        if self.setup is None:
            self.setup = message.get("s") == 1
            if not self.setup or not self.cases:
                self.finish()
            return
        index = self.cases[len(self.verdicts)]
        passed = _verdict(message, self.tests, index)
        self.verdicts.append(passed)
        if not passed or len(self.verdicts) == len(self.cases):
            self.finish()

    def finish(self) -> None:
        if self.done:
            return
        self.done = True
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)

    def all_passed(self) -> bool:
        return bool(self.setup) and len(self.verdicts) == len(self.cases) and all(self.verdicts)


def _verdict(message: dict, tests: dict, index: int) -> bool:
    try:
        raw = tests["outputs"][index]
        if not isinstance(raw, str):
            return False  # verl truncates each output for its report, asserting a string
        if tests.get("fn_name") is not None:
            if "r" not in message:
                return False
            return return_matches(_decode(message["r"]), expected_return(raw))
        if "o" not in message or not isinstance(message["o"], str):
            return False
        return stdout_matches(message["o"], raw)
    except Exception:
        return False


def _run_all(runs_cases: list[list[int]], program: str, tests: dict, limits: dict) -> list[_Run]:
    """Run each list of test cases in a run of its own, ``max_concurrent`` at a time."""
    waiting = list(runs_cases)
    active: list[_Run] = []
    finished: list[_Run] = []
    while waiting or active:
        while waiting and len(active) < limits["max_concurrent"]:
            active.append(_Run(waiting.pop(0), program, tests, limits))
        poller = select.poll()
        for run in active:
            poller.register(run.fd, select.POLLIN)
        wait_s = max(0.0, min(run.deadline() for run in active) - time.monotonic())
        events = dict(poller.poll(wait_s * 1000))
        now = time.monotonic()
        for run in active:
            if run.fd in events:
                run.read()
            if not run.done and now >= run.deadline():
                run.finish()
        finished += [run for run in active if run.done]
        active = [run for run in active if not run.done]
    return finished


def _positive(kwargs: dict, name: str, default: float, kind: type) -> Any:
    value = kwargs.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"verl_code: {name} must be a positive number, got {value!r}")
    if kind is int and value != int(value):
        raise ValueError(f"verl_code: {name} must be a whole number, got {value!r}")
    return kind(value)


def _limits(kwargs: dict) -> dict:
    timeout_s = _positive(kwargs, "timeout_s", DEFAULT_TIMEOUT_S, float)
    memory_mb = _positive(kwargs, "memory_limit_mb", DEFAULT_MEMORY_LIMIT_MB, int)
    concurrent = _positive(kwargs, "max_concurrent", DEFAULT_MAX_CONCURRENT, int)
    output_limit = _positive(kwargs, "output_limit_bytes", DEFAULT_OUTPUT_LIMIT_BYTES, int)
    return {
        "timeout_s": timeout_s,
        "memory_bytes": memory_mb << 20,
        "max_concurrent": min(concurrent, MAX_CONCURRENT),
        "output_limit": output_limit,
        "cpu_s": math.ceil(timeout_s + RUN_GRACE_S) + 1,
    }


def worst_case_s(kwargs: dict) -> float:
    """The longest scoring one row can take, but for forking: the whole run, then the
    first 10 test cases one by one, ``max_concurrent`` at a time."""
    limits = _limits(kwargs)
    one_run = limits["timeout_s"] + RUN_GRACE_S
    waves = math.ceil(CONTINUOUS_CASES / limits["max_concurrent"])
    return one_run * (1 + waves)


def sandbox_limits(kwargs: dict) -> tuple[float, int]:
    """What one call of this scorer needs from the reward sandbox: (wall-clock seconds,
    MiB of its process tree), with room for forking and comparing."""
    limits = _limits(kwargs)
    memory_mb = (limits["memory_bytes"] >> 20) * limits["max_concurrent"] + 512
    return worst_case_s(kwargs) + 2.0, memory_mb


def _test_cases(ground_truth: Any) -> dict | None:
    tests = ground_truth
    if not isinstance(tests, dict):
        try:
            tests = json.loads(tests)
        except Exception:
            return None
    if not isinstance(tests, dict):
        return None
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        return None
    if len(outputs) < len(inputs):
        return None  # verl fails on the missing output
    return tests


def code_score(solution_str: str, ground_truth: Any, **kwargs: Any) -> float:
    limits = _limits(kwargs)
    tests = _test_cases(ground_truth)
    if tests is None:
        return 0.0
    program = extract_program(solution_str)
    count = len(tests["inputs"])
    (whole,) = _run_all([list(range(count))], program, tests, limits)
    if whole.all_passed():
        return 1.0
    first = min(count, CONTINUOUS_CASES)
    if tests.get("fn_name") is not None:
        # verl runs each lone test case without fn_name: as a stdin program, fed the
        # arguments' JSON lines and compared with the return value's JSON as stdout.
        lone = {"inputs": tests["inputs"], "outputs": tests["outputs"]}
        runs = _run_all([[i] for i in range(first)], program, lone, limits)
        return sum(run.all_passed() for run in runs) / max(first, 1)
    if not whole.setup or count == 0:
        # The program does not set up (a syntax error, or raising or hanging in its
        # imports): no lone run of a test case would either.
        return 0.0
    # The whole run's first test case ran in a fresh process, as its lone run would (one
    # it did not finish failed, by its time limit or the run's).
    passed = [bool(whole.verdicts) and whole.verdicts[0]]
    for run in _run_all([[i] for i in range(1, first)], program, tests, limits):
        passed.append(run.all_passed())
    return sum(passed) / first


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> float:
    if data_source not in DATA_SOURCES:
        raise ValueError(
            f"verl_code scores verl's code data sources ({', '.join(DATA_SOURCES)}), "
            f"not data_source {data_source!r}"
        )
    return code_score(solution_str, ground_truth, **kwargs)
