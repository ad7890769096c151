"""The warm zygote: one long-lived process per pool worker that forks a hardened child
per call.

Started by `SandboxPool` as ``python -I`` with a scrubbed environment, it compiles the
user's code (without running it), preloads the modules the code imports when they come
from the interpreter's own install (so children need no read access to it), moves
itself into a new network namespace (no interface is up: no network at all) and a new
mount namespace with a size-capped tmpfs for scratch, then serves requests read from
its stdin. User code never runs here: only in the children (see `child`). Started
without root, it first enters a user namespace of its own, which lets it build the same
namespaces (`hardening.enter_user_namespace`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import linecache
import math
import os
import resource
import stat
import sys
import sysconfig
from typing import Any

from trainer.rewards.sandbox import child, hardening, proctree, supervise, wire
from trainer.rewards.sandbox.values import escape_text, text_problem, validate_wire, wire_error

# Only what the sandbox's own code needs: every preloaded page makes each fork slower. The
# modules the user's code imports (found statically) are preloaded on top.
BASE_PRELOAD = ("json", "traceback", "encodings.ascii", "encodings.latin_1")
# Modules some imports need later, lazily (socket encodes host names with idna).
COMPANIONS = {"socket": ("encodings.idna",), "ssl": ("encodings.idna",)}
NEVER_PRELOAD = frozenset(
    {
        "antigravity",
        "this",
        "__main__",
        "__hello__",
        "__phello__",
        "idlelib",
        "tkinter",
        "turtle",
        "turtledemo",
        "ensurepip",
        "pip",
    }
)
MAX_PRELOADS = 64
# Calls run as UID_BASE + the zygote's pid: a uid (and gid) of its own per worker, far
# above any account's, so process limits (RLIMIT_NPROC counts per uid) never shared.
UID_BASE = 1_000_000_000
# Without root, the zygote enters a user namespace of its own as this id (mapped to the
# account it runs as): not 0, so reward code never sees itself as root there either.
NAMESPACE_ID = 1000
READ_ONLY_DIRS = ("/usr", "/lib", "/lib64", "/lib32")
READ_ONLY_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/dev/urandom", "/dev/random", "/dev/zero")


def _trusted_roots() -> list[str]:
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return sorted(roots)


def is_trusted_module(name: str, roots: list[str]) -> bool:
    """A module importing which runs only installed code: stdlib, site-packages, or ours."""
    top = name.partition(".")[0]
    if top in NEVER_PRELOAD or not all(part.isidentifier() for part in name.split(".")):
        return False
    if name == "trainer.rewards" or name.startswith("trainer.rewards."):
        return True
    if top in sys.builtin_module_names:
        return True
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    origin = spec.origin
    if origin is None and spec.submodule_search_locations:
        origin = next(iter(spec.submodule_search_locations))
    if origin in (None, "built-in", "frozen"):
        return origin is not None
    real = os.path.realpath(origin)
    return any(real.startswith(root + os.sep) for root in roots)


def preload(names: list[str]) -> list[str]:
    roots = _trusted_roots()
    loaded = []
    wanted = [*BASE_PRELOAD, *names[:MAX_PRELOADS]]
    wanted += [c for n in wanted for c in COMPANIONS.get(n.partition(".")[0], ())]
    for name in wanted:
        if name in sys.modules or not is_trusted_module(name, roots):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(name)
            loaded.append(name)
    return loaded


class Zygote:
    def __init__(self, init: dict[str, Any], protocol_fds: tuple[int, int]) -> None:
        self.init = init
        self.limits: dict[str, Any] = init["limits"]
        self.protocol_fds = protocol_fds
        self.scratch_root: str = init["scratch"]
        self.calls = 0
        self.root = os.geteuid() == 0
        self.user_namespace = False  # privileged only inside a user namespace of its own
        self.batch = False
        self.isolation: dict[str, bool] = {}

    def start(self) -> dict[str, Any]:
        if not self.root:
            with contextlib.suppress(OSError):  # not allowed here: the probe reports it
                hardening.enter_user_namespace(NAMESPACE_ID)
                self.user_namespace = True
        code = self.init["code"]
        linecache.cache[child.FILENAME] = (len(code), None, code.splitlines(True), child.FILENAME)
        compiled = compile(code, child.FILENAME, "exec")
        preload(list(self.init["imports"]))
        namespaces = self._enter_namespaces()
        limits = self.limits
        rlimits = {
            resource.RLIMIT_CPU: int(limits["cpu_s"]),
            resource.RLIMIT_FSIZE: int(limits["file_size_mb"]) << 20,
            resource.RLIMIT_NPROC: int(limits["max_processes"]),
            resource.RLIMIT_NOFILE: int(limits["max_open_files"]),
            resource.RLIMIT_CORE: 0,
        }
        abi = hardening.landlock_abi()
        own_id = NAMESPACE_ID if self.user_namespace else None
        self.plan = child.ChildPlan(
            code=compiled,
            function_name=self.init["function_name"],
            kwargs=dict(self.init["kwargs"]),
            uid=own_id or self._child_id(limits["uid"]),
            gid=own_id or self._child_id(limits["gid"]),
            user_namespace=self.user_namespace,
            rlimits=rlimits,
            memory_bytes=int(limits["memory_mb"]) << 20,
            output_bytes=int(limits["output_bytes"]),
            read_rules=self._read_rules(),
            landlock_abi=abi,
            seccomp=hardening.seccomp_program() if hardening.IS_X86_64 else b"",
            devnull_fd=os.open(os.devnull, os.O_RDWR),
            expected=namespaces,
        )
        with contextlib.suppress(OSError):
            hardening.prctl(hardening.PR_SET_CHILD_SUBREAPER, 1)
        gc.collect()
        gc.freeze()  # fewer copy-on-write faults in every child
        reply = self._run([], child.CallForm(batch=False, whole=False), probe=True)
        if "load_error" in reply:
            return {"ok": False, "code_error": reply["load_error"]}
        self.isolation = {k: bool(v) for k, v in reply["isolation"].items()}
        self.plan.expected = dict(self.isolation)
        self.batch = bool(reply.get("batch"))
        missing = [k for k, v in self.isolation.items() if not v]
        if self.init["require_full_isolation"] and missing:
            return {
                "ok": False,
                "error": "sandbox protections unavailable on this host: "
                + ", ".join(missing)
                + ". Full isolation needs Linux x86_64 with Landlock (ABI >= 6), seccomp, and "
                "root or unprivileged user namespaces. To run rewards with less isolation "
                "anyway, allow it explicitly: "
                "RLSTUDIO_REWARD_SANDBOX_ALLOW_PARTIAL=1 (or require_full_isolation=False).",
                "isolation": self.isolation,
            }
        return {"ok": True, "isolation": self.isolation, "batch": self.batch}

    @staticmethod
    def _child_id(configured: int | None) -> int:
        return UID_BASE + os.getpid() if configured is None else int(configured)

    def _enter_namespaces(self) -> dict[str, bool]:
        privileged = self.root or self.user_namespace
        done = {
            "network_namespace": False,
            "private_scratch_tmpfs": False,
            "pid_namespace": privileged,
        }
        if not privileged:
            return done
        try:
            hardening.unshare(hardening.CLONE_NEWNET)
            done["network_namespace"] = True
        except OSError:
            pass
        try:
            hardening.unshare(hardening.CLONE_NEWNS)
            owner = os.geteuid()  # 0, or NAMESPACE_ID in a user namespace
            hardening.mount_private_tmpfs(
                self.scratch_root, int(self.limits["scratch_mb"]) << 20, owner, owner
            )
            done["private_scratch_tmpfs"] = True
        except OSError:
            pass
        return done

    def _read_rules(self) -> list[tuple[int, int]]:
        """O_PATH descriptors of what children may read: system libraries, the trusted
        Python install (never the project's own tree), a few device files."""
        rules: list[tuple[int, int]] = []
        dirs = [*READ_ONLY_DIRS, *_trusted_roots()]
        for path, access in [
            *((d, hardening.READ_DIR_ACCESS) for d in dirs),
            *((f, hardening.READ_FILE_ACCESS) for f in READ_ONLY_FILES),
            (os.devnull, hardening.DEVICE_RW_ACCESS),
        ]:
            with contextlib.suppress(OSError):
                rules.append((os.open(path, os.O_PATH | os.O_CLOEXEC), access))
        return rules

    def score(
        self, requests: list[list[Any]], batch: bool, whole: bool, whole_timeout_s: float
    ) -> list[dict[str, Any]]:
        """Score a chunk. ``whole``: one call of the batch function for all of ``requests``
        within ``whole_timeout_s`` (the pool's `SandboxLimits.batch_timeout_s`); else one
        call per request within the per-call ``timeout_s``."""
        whole = batch and whole and bool(requests)
        timeout_s = float(self.limits["timeout_s"])
        unit_timeout_s = max(timeout_s, whole_timeout_s) if whole else timeout_s
        form = child.CallForm(batch, whole, math.ceil(unit_timeout_s / timeout_s))
        reply = self._run(requests, form, probe=False, unit_timeout_s=unit_timeout_s)
        return list(reply["results"])

    def _run(
        self,
        requests: list[list[Any]],
        form: child.CallForm,
        probe: bool,
        unit_timeout_s: float = 0.0,
    ) -> dict[str, Any]:
        self.calls += 1
        scratch = os.path.join(self.scratch_root, f"chunk-{self.calls}")
        os.mkdir(scratch, 0o700)
        if self.root:
            os.chown(scratch, self.plan.uid, self.plan.gid)
        limits, plan = self.limits, self.plan
        units = 1 if form.whole else len(requests)
        try:
            outcome = supervise.run_chunk(
                lambda out_w, res_w, lifeline_r: child.run_template(
                    plan, requests, form, scratch, out_w, res_w, lifeline_r, probe
                ),
                0 if probe else units,
                unit_timeout_s=unit_timeout_s,
                load_timeout_s=float(limits["load_timeout_s"] if probe else limits["timeout_s"]),
                memory_bytes=plan.memory_bytes,
                output_bytes=int(limits["output_bytes"]),
                use_pid_namespace=self.plan.expected.get("pid_namespace", False),
                protocol_fds=self.protocol_fds,
            )
        finally:
            remove_tree(scratch)
            proctree.reap_strays()
        if probe:
            return self._probe_reply(outcome)
        return {"results": self._results(outcome, requests, form.whole)}

    def _probe_reply(self, outcome: supervise.Outcome) -> dict[str, Any]:
        output = _text(outcome.output, 0).strip()
        for message in outcome.messages:
            if message["k"] == "probe":
                return {"isolation": message.get("isolation"), "batch": message.get("batch")}
            if message["k"] == "load_error":
                error = str(message.get("msg"))
                return {"load_error": error + (f"\n{output[-2000:]}" if output else "")}
        reason = outcome.killed or _status_reason(outcome.template_status, output)
        return {
            "load_error": f"loading the reward code failed: {reason}"
            + (f"\n{output[-2000:]}" if output else "")
        }

    def _results(
        self, outcome: supervise.Outcome, requests: list[list[Any]], whole: bool
    ) -> list[dict[str, Any]]:
        load_error = next(
            (str(m.get("msg")) for m in outcome.messages if m["k"] == "load_error"), ""
        )
        prefix = _text(outcome.output, 0)
        results: list[dict[str, Any]] = []
        for number, unit in enumerate(outcome.units):
            count = len(requests) if whole else 1
            output = _text(unit.output, unit.output_dropped)
            if number == 0 and prefix:
                output = prefix + output
            reason = unit.killed or outcome.killed or load_error or unit.problem
            # Postgres refuses NUL (and the decoding above already replaced bytes that are
            # not UTF-8): a row that printed one fails, with its output kept, escaped.
            problem = text_problem(output, "the output")
            output = escape_text(output)
            if not reason and unit.status is None:
                reason = "not run: " + _status_reason(outcome.template_status, output)
            raw = unit.result
            if not reason and (not isinstance(raw, list) or len(raw) != count):
                reason = _status_reason(unit.status or 0, output)
            elapsed_ms = unit.elapsed_s * 1000 / count
            for k in range(count):
                wire_result = wire_error(reason) if reason else validate_wire(raw[k])
                if problem and not wire_result["error"]:
                    wire_result = wire_error(f"invalid output: {problem}")
                wire_result["elapsed_ms"] = elapsed_ms
                wire_result["output"] = output if k == 0 else ""
                results.append(wire_result)
        return results


def remove_tree(path: str) -> None:
    """Delete a scratch directory (no symlink is followed; every writer is dead by now)."""
    with contextlib.suppress(OSError), os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.chmod(entry.path, stat.S_IRWXU)
                remove_tree(entry.path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _text(data: bytearray, dropped: int) -> str:
    text = data.decode("utf-8", errors="replace")
    if dropped:
        text += f"\n[output truncated: {dropped} more bytes dropped]"
    return text


def _status_reason(status: int, output: str) -> str:
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == child.SETUP_FAILED_EXIT:
        return "sandbox setup failed: " + output.strip()[-300:]
    return proctree.describe_status(status)


def main() -> None:
    # Keep the protocol on private descriptors so a stray print cannot corrupt it.
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    try:
        init = wire.receive(protocol_in)
    except (wire.WireClosed, ValueError):
        return
    zygote = Zygote(init, (protocol_in, protocol_out))
    try:
        ready = zygote.start()
    except Exception as exc:
        ready = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    wire.send(protocol_out, ready)
    if not ready["ok"]:
        return
    while True:
        try:
            message = wire.receive(protocol_in)
        except (wire.WireClosed, ValueError):
            return
        try:
            results = zygote.score(
                message["requests"],
                bool(message["batch"]),
                bool(message["whole"]),
                float(message["whole_timeout_s"]),
            )
        except Exception as exc:  # a bug of ours: fail this chunk, keep serving
            reason = f"sandbox internal error: {type(exc).__name__}: {exc}"
            results = [wire_error(reason) for _ in message["requests"]]
        try:
            wire.send(protocol_out, {"id": message["id"], "results": results})
        except BrokenPipeError:
            return
