"""Connecting the controller to Ray.

In order: a Ray session this process already has (tests); `RAY_ADDRESS` (inside a
Ray job it is set to the cluster's GCS address); else a private local Ray head,
started with `ray start --head --block` on explicit free ports, because Ray's default
GCS port 6379 is often Redis's and its default agent ports clash with a studio's own
Ray head. The private head lives in its own process group and is stopped with the
run; Linux also stops it if this process dies (parent-death signal). It has a token of
its own (ray_auth): nobody without it, on the host or the network, can submit work to
it. Its ports are where Ray puts them (the host's address): binding them to loopback
(ray_auth.SINGLE_MACHINE_ENV) would need the setting in this process before Ray is
imported, since a driver resolves 127.0.0.1 to the host's address. A driver joins it at
the GCS address `ray start` writes into the head's temp dir (Ray's `ray_current_cluster`
file), which names the host's address.

The head counts as started once that file exists, not at `ray start`'s ready line: Ray
prints the line first and writes the file after it, and `ray.init(address="auto")` in that
gap finds no file and joins any other Ray cluster it sees running on the machine (Ray's
legacy fallback). In CI a test's driver joined another test's studio head that way and
failed; a run beside a studio's head could have done the same.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import ray
from ray._raylet import (  # type: ignore[attr-defined]
    AuthenticationTokenLoader,
    Config,
)

from trainer.distributed import ray_auth, ray_settings
from trainer.distributed.crash_evidence import STACKS_SIGNAL

log = logging.getLogger(__name__)

# How long `ray start --block` gets to stop its node after SIGTERM: it took 1.5 s on a
# quiet 2-core VM (stop_ray_node). Past this, the node's whole group is killed.
NODE_STOP_GRACE_S = 10.0
PORT_FLAGS = (
    "--node-manager-port",
    "--object-manager-port",
    "--ray-client-server-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
)


# Ray's workers listen on ports 10002-19999 by default, and the kernel hands out ports for
# outgoing connections and binds to port 0 from its ephemeral range (32768-60999 by
# default). A port from the ephemeral range, free when chosen, could be taken before the
# head's server bound it (by an outgoing connection or a bind to port 0, both drawn from
# that range): the client server's port was taken so once, and `ray start --block` then
# stopped the whole head (a heap-check round of #46). Ports between the two ranges go to
# nobody who does not ask for one by number.
EXPLICIT_PORTS_LOW = 20000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# But two processes choosing at once can both find one port free, as both release it for
# their servers to bind: a test stack's head took 30017 for its dashboard and a trainer's
# private head, started 2 s later by the other test worker, for its agent, which then
# failed to bind and took the head down (CI, 2026-11-30). So a process claims each port it
# chooses, machine-wide, with a file made atomically (O_EXCL) in a shared sticky folder;
# others pass over a claim for CLAIM_TTL_S, ample for a server to bind its port.
PORT_CLAIMS = Path(tempfile.gettempdir()) / "rlstudio-port-claims"
CLAIM_TTL_S = 300.0


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free now on every IPv4 address, below the kernel's ephemeral range
    (see above) where it leaves room, else wherever the kernel puts them. Every socket
    stays bound until all are chosen: ports asked for one at a time can repeat once a
    socket is closed, and a Ray head given one port for two of its servers exits at start."""
    low, high = EXPLICIT_PORTS_LOW, min(_ephemeral_low(), 32768)
    claims = _claims_folder()
    with contextlib.ExitStack() as stack:
        chosen: list[int] = []
        tries = 0
        while len(chosen) < count:
            tries += 1
            explicit = high - low >= 1000 and tries <= 50 * count
            sock = stack.enter_context(socket.socket())
            try:
                sock.bind(("", random.randrange(low, high) if explicit else 0))
            except OSError:
                continue  # taken: another port
            port = int(sock.getsockname()[1])
            if explicit and not _claim(claims, port):
                continue  # another process chose it a moment ago
            chosen.append(port)
        return chosen


def _claim(folder: Path | None, port: int) -> bool:
    """Claim `port` for this process in `folder` unless another process on this machine
    claimed it in the last CLAIM_TTL_S. Without a claims folder every port is free to
    take, as before claims existed."""
    if folder is None:
        return True
    path = folder / str(port)
    for _ in range(2):  # a stale claim is removed once, then claimed afresh
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644))
            return True
        except FileExistsError:
            try:
                if time.time() - path.lstat().st_mtime < CLAIM_TTL_S:
                    return False
                path.unlink()  # stale (another account's can't be removed: skipped)
            except OSError:
                return False
        except OSError:
            return True
    return False


def _claims_folder() -> Path | None:
    """The claims folder, made sticky and open to every account as /tmp is (the studio, its
    tests and the trainer account all choose ports). None where it can't be made, or where
    it is not a sticky folder of root's or ours (another account's could point anywhere).
    Another account can only claim ports we then pass over: after 50 tries a port the
    kernel chooses, as before claims existed."""
    try:
        PORT_CLAIMS.mkdir(exist_ok=True)
        found = PORT_CLAIMS.lstat()
        if found.st_uid == os.geteuid() and not stat.S_ISLNK(found.st_mode):
            PORT_CLAIMS.chmod(0o1777)
            found = PORT_CLAIMS.lstat()
    except OSError:
        return None
    trusted = found.st_uid in (0, os.geteuid()) and stat.S_ISDIR(found.st_mode)
    return PORT_CLAIMS if trusted and found.st_mode & stat.S_ISVTX else None


def free_port() -> int:
    return free_ports(1)[0]


# Looked up here, in the parent: between fork and exec a child of a threaded process (torch,
# Ray and gloo all start threads) may only call what needs no lock another thread could
# have held at the fork, and loading a library (dlopen) takes the loader's lock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # runs in the child between fork and exec
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass(frozen=True)
class LocalHead:
    address: str  # GCS host:port, as `ray start` wrote it (the host's address)
    temp_dir: Path
    client_env: dict[str, str]  # the token's: set in os.environ to join

    def connect(self, runtime_env: dict[str, Any] | None = None) -> None:
        """Join as a driver (see the module docstring for why by temp dir). The token goes
        into os.environ, where Ray reads it; ray_session puts the environment back.
        `runtime_env`: Ray's, for every worker of this driver (a bench runs them under
        valgrind)."""
        os.environ.update(self.client_env)
        os.environ.update(ray_settings.NO_METRICS_EXPORT_ENV)
        reload_ray_settings()
        ray.init(
            address=self.address,  # never "auto": see the module docstring
            _temp_dir=str(self.temp_dir),
            log_to_driver=True,
            runtime_env=runtime_env,
        )


def stop_ray_node(node: subprocess.Popen[bytes]) -> None:
    """Stop a `ray start --block` that leads its own process group: SIGTERM to it alone,
    so that Ray stops its node in order (the raylet first, its workers with it), then
    SIGKILL for whatever of the group is left. Signalling the whole group instead made
    the raylet and the GCS each sit out Ray's one-second grace before its SIGKILL (3.4 s
    in all, against 1.5 s; docs/distributed.md). `ray_settings.NODE_ENV` keeps Ray from
    first draining the node for up to 30 s."""
    with contextlib.suppress(ProcessLookupError):
        node.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        node.wait(timeout=NODE_STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(node.pid, signal.SIGKILL)  # what of its group outlived it (dashboard modules)
    node.wait(timeout=10)


# Ray 2.60's raylet gives its dashboard agent a fixed 15 s to write the files that carry
# the agent's ports, and aborts when they are late (ray-project/ray#65983; measured here:
# RAY_agent_register_timeout_ms does not change it). The agent is a Python process that
# imports aiohttp, grpc and Ray's dashboard modules; on a 2-core machine at load 7 that
# took longer (a heap-check round of #46: a private head's raylet aborted 15.2 s after it
# started, and `ray start` said only "timed out during startup" 15 s later). Nothing has
# run on a node that never came up, so such a start is tried again, on fresh ports.
NODE_START_ATTEMPTS = 3
AGENT_PORTS_ABORT = "WaitForDashboardAgentPorts"  # the aborting frame, in raylet.err


def raylet_missed_its_agents(temp_dir: Path) -> bool:
    """The raylet of the node started with `--temp-dir=temp_dir` aborted waiting for its
    agents' port files (above)."""
    errors = temp_dir / "session_latest" / "logs" / "raylet.err"
    try:
        return AGENT_PORTS_ABORT in errors.read_text(errors="replace")
    except OSError:
        return False


T = TypeVar("T")


class RayletMissedItsAgents(RuntimeError):
    """A node's start failed because its raylet gave up on its dashboard agent (above);
    the node is stopped. `start_ray_node` tries such a start again."""


def start_ray_node(start_once: Callable[[], T], what: str) -> T:
    """`start_once()`, tried again (NODE_START_ATTEMPTS in all) while it raises
    RayletMissedItsAgents: the one retry policy of every Ray node we start here."""
    for attempt in range(1, NODE_START_ATTEMPTS + 1):
        try:
            return start_once()
        except RayletMissedItsAgents:
            if attempt == NODE_START_ATTEMPTS:
                raise
            log.warning(
                "%s: its raylet gave up waiting for its dashboard agent (start %d of %d; "
                "ray-project/ray#65983); starting it again",
                what,
                attempt,
                NODE_START_ATTEMPTS,
            )
    raise AssertionError("unreachable: the last attempt returns or raises")


@contextlib.contextmanager
def local_ray_head(start_timeout_s: float = 120.0) -> Iterator[LocalHead]:
    """A private Ray head on free ports."""
    token_dir = Path(tempfile.mkdtemp(prefix="rtok-"))  # private, unlike Ray's own folders
    client_env = ray_auth.client_env(ray_auth.write_token(token_dir / "token"))
    try:
        head, gcs, temp_dir = start_ray_node(
            lambda: start_private_head(client_env, start_timeout_s), "a local Ray head"
        )
        try:
            log.info("started a local Ray head at %s (temp dir %s)", gcs, temp_dir)
            yield LocalHead(gcs, temp_dir, client_env)
        finally:
            stop_ray_node(head)
    finally:
        shutil.rmtree(token_dir, ignore_errors=True)


def start_private_head(
    client_env: dict[str, str], start_timeout_s: float
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """One `ray start --head --block` on free ports, up: its process, GCS address and temp
    dir. A head that did not come up is stopped, and the error says why."""
    temp_dir = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: unix socket paths
    gcs_port, *server_ports = free_ports(1 + len(PORT_FLAGS))
    argv = [*ray_settings.ray_start_command(sys.executable), "--head", "--block"]
    argv += [f"--port={gcs_port}"]
    argv += ["--include-dashboard=false"]
    argv += [f"--temp-dir={temp_dir}", "--disable-usage-stats"]
    argv += [f"{flag}={port}" for flag, port in zip(PORT_FLAGS, server_ports, strict=True)]
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN"}
    env.pop("RAY_ADDRESS", None)  # `ray start --head` would try to join it
    env.update(client_env)
    log_path = temp_dir / "head.log"
    with open(log_path, "wb") as out:
        head = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
    deadline = time.monotonic() + start_timeout_s
    missed = False
    while (gcs := written_gcs_address(temp_dir)) is None:
        missed = raylet_missed_its_agents(temp_dir)  # `ray start` would wait 15 s more
        if missed or head.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if gcs is not None:
        return head, gcs, temp_dir
    stuck = not missed and head.poll() is None  # past its deadline, still starting
    if stuck:
        ask_for_stacks(head)
    stop_ray_node(head)
    failed = RayletMissedItsAgents if missed or raylet_missed_its_agents(temp_dir) else RuntimeError
    log, stacks = split_stacks(log_path.read_text(errors="replace"))
    said = f"local Ray head did not start ({' '.join(argv)}):\n{log[-2000:]}"
    if stuck:
        late = f"`ray start` was still starting after {start_timeout_s:g} s"
        said += f"\n{late}; {stacks_said(stacks)}"
    raise failed(said)


# A `ray start` of ours (trainer.distributed.ray_start) writes every thread's Python stack
# to its log on STACKS_SIGNAL and goes on: a start that hangs says where. Seen once: a
# head whose GCS, dashboard and client server were up, whose raylet was never started,
# and whose log said nothing for two minutes (a heap-check round of #46, at load 4).
STACKS_WRITE_S = 1.0
STACK_MARKS = ("Thread 0x", "Current thread 0x")  # how faulthandler heads each thread
STACKS_SHOWN_CHARS = 8000


def ask_for_stacks(node: subprocess.Popen[bytes]) -> None:
    """Have a `ray start` that is late write where its threads are, before it is stopped."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone; another account's
        node.send_signal(STACKS_SIGNAL)
    time.sleep(STACKS_WRITE_S)


def split_stacks(log: str) -> tuple[str, str]:
    """A node's log -> (what it logged, the stacks faulthandler appended, or "")."""
    at = min((log.find(mark) for mark in STACK_MARKS if mark in log), default=len(log))
    return log[:at], log[at:]


def stacks_said(stacks: str) -> str:
    """How a failure to start reports the stacks `ask_for_stacks` got (or that none came)."""
    return f"its threads' stacks:\n{stacks[:STACKS_SHOWN_CHARS]}" if stacks else "no stacks came"


def written_gcs_address(temp_dir: Path) -> str | None:
    """The GCS address a head started with `--temp-dir=temp_dir` wrote once its node was
    up; None before (Ray writes the file after its ready line)."""
    address = ray._private.utils.read_ray_address(str(temp_dir))
    return address or None


def reload_ray_settings() -> None:
    """Make this process see the RAY_AUTH_* variables as they are now: Ray reads its
    settings (the auth mode among them) when imported, and the token when first used, and
    its clients (ray.init, the Jobs SDK) go by those copies; a process that joins one head
    after another (the test suite) must drop them. The order is Ray's own: settings
    first, so no gRPC thread reloads a token while the mode is stale."""
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def restore_environ(saved: dict[str, str]) -> None:
    """Make os.environ equal to `saved` again."""
    for key in set(os.environ) - set(saved):
        del os.environ[key]
    os.environ.update(saved)


@contextlib.contextmanager
def ray_session() -> Iterator[None]:
    """Connected to Ray for the run (see the module docstring)."""
    if ray.is_initialized():
        yield
        return
    address = os.environ.get("RAY_ADDRESS", "").strip()
    if address.startswith(("http://", "https://")):
        raise ValueError(
            f"RAY_ADDRESS={address} is a dashboard (Jobs API) address; the trainer connects "
            "to the cluster's GCS address host:port (a Ray job sets it for its entrypoint)"
        )
    with contextlib.ExitStack() as stack:
        # ray.init writes RAY_AUTH_MODE, RAY_CLIENT_MODE and PYTHONBREAKPOINT into
        # os.environ; put them back once disconnected, or every process this one starts
        # later (another Ray head, a studio) inherits Ray's settings of this session.
        stack.callback(restore_environ, dict(os.environ))
        if address:
            os.environ.update(ray_settings.NO_METRICS_EXPORT_ENV)  # this driver's own
            reload_ray_settings()
            ray.init(address=address, log_to_driver=True)
        else:
            stack.enter_context(local_ray_head()).connect()
        stack.callback(ray.shutdown)
        yield
