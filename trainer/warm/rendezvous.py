"""Where a job meets its node's warm runtime: a private folder, and a key naming the code
and the environment the runtime imported under.

The folder (`RLSTUDIO_WARM_DIR`, default `/tmp/rlstudio-warm-<uid>`) is made mode 700 and
refused when it is not a folder of ours closed to everyone else: on a shared host anyone
may have made that path first, and whoever can reach the socket can ask for a process.

The key is a digest of what makes a forked process the same as a fresh one: the Python
executable and version, the trainer package's source files (path, size, mtime), the
mtimes of the site-packages folders (an install or upgrade changes them), and the
environment variables that Python, torch, transformers and the Hugging Face hub read when
they are imported (`import_env`). Each key has its own socket, so a runtime started by
older code, or under another HF_ENDPOINT, is never asked; it exits when idle.

Stdlib only: the client computes this before anything heavy is imported.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trainer

ENABLE_ENV = "RLSTUDIO_WARM_RUNTIME"  # 0 (false, no, off): every run starts cold
IDLE_ENV = "RLSTUDIO_WARM_IDLE_S"  # a runtime with no child and no request exits after this
DIR_ENV = "RLSTUDIO_WARM_DIR"  # where the sockets are; /tmp/rlstudio-warm-<uid>
PRELOAD_ENV = "RLSTUDIO_WARM_PRELOAD"  # modules imported before forking (comma-separated)
DEFAULT_IDLE_S = 900.0
STALE_CHECK_S = 60.0  # how often an idle runtime checks that its code is current
KEY_CHARS = 24
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its terminating NUL

# Read when a module is imported (Python's start, torch, transformers, huggingface_hub,
# tokenizers, OpenMP and MKL, the loader): a runtime that imported under other values
# would not behave as a fresh process of this job.
IMPORT_ENV_PREFIXES = (
    "PYTHON", "HF_", "HUGGINGFACE", "TRANSFORMERS", "TOKENIZERS", "SAFETENSORS", "TORCH",
    "PYTORCH", "CUDA", "NVIDIA", "TRITON", "MKL", "KMP_", "OMP_", "GOMP_", "OPENBLAS",
    "DNNL", "ONEDNN", "LD_", "XDG_", "LC_",
)  # fmt: skip
IMPORT_ENV_NAMES = frozenset({"HOME", "LANG", "TMPDIR", "TZ", PRELOAD_ENV})
# ...except these, which differ by job or are read later, from the child's environment
# (trainer.warm.child): thread counts when torch first computes (and the child sizes
# OpenBLAS's pool), GPUs when CUDA starts, the standard streams the child rebuilds, and
# the breakpoint hook Ray sets for every job (read when breakpoint() is called).
PER_JOB_ENV = frozenset(
    {
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "GOTO_NUM_THREADS",
        "CUDA_VISIBLE_DEVICES",
        "PYTHONUNBUFFERED",
        "PYTHONBREAKPOINT",
    }
)
# What a runtime needs beyond its import environment.
SERVER_ENV_NAMES = ("PATH", DIR_ENV, IDLE_ENV)


class UnsafeFolder(Exception):
    """The runtime's folder can't be trusted or made; the message says why."""


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get(ENABLE_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def idle_seconds(environ: Mapping[str, str]) -> float:
    value = environ.get(IDLE_ENV, "")
    try:
        return float(value) if value else DEFAULT_IDLE_S
    except ValueError:
        raise ValueError(f"{IDLE_ENV}={value!r}: a number of seconds is wanted") from None


def is_import_env(name: str) -> bool:
    if name in PER_JOB_ENV:
        return False
    return name in IMPORT_ENV_NAMES or name.startswith(IMPORT_ENV_PREFIXES)


def import_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {name: environ[name] for name in sorted(environ) if is_import_env(name)}


def server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A runtime's own environment: no job's run id, URL or secret file, only what its
    imports read and what it needs itself."""
    env = import_env(environ)
    env.update({name: environ[name] for name in SERVER_ENV_NAMES if name in environ})
    return env


def package_dir() -> Path:
    return Path(trainer.__file__).resolve().parent


def _code_lines() -> list[str]:
    root = package_dir()
    lines = [sys.executable, sys.version, str(root)]
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                held = os.stat(path)
                lines.append(f"{os.path.relpath(path, root)}:{held.st_size}:{held.st_mtime_ns}")
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")) and os.path.isdir(entry):
            lines.append(f"{entry}:{os.stat(entry).st_mtime_ns}")
    return lines


def runtime_key(environ: Mapping[str, str]) -> str:
    """The digest a runtime for this code and import environment is named by."""
    digest = hashlib.sha256()
    for line in [*_code_lines(), *(f"{k}={v}" for k, v in import_env(environ).items())]:
        digest.update(line.encode(errors="surrogateescape") + b"\0")
    return digest.hexdigest()[:KEY_CHARS]


@dataclass(frozen=True)
class Rendezvous:
    """One runtime's files in the private folder: `<key>.sock`, `.lock` and `.log`."""

    folder: Path
    key: str

    @property
    def socket_path(self) -> Path:
        return self.folder / f"{self.key}.sock"

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.key}.lock"

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.key}.log"


def default_folder() -> Path:
    return Path(f"/tmp/rlstudio-warm-{os.geteuid()}")


def private_folder(environ: Mapping[str, str]) -> Path:
    """The runtime's folder, made mode 700 when missing; UnsafeFolder unless it is a
    folder (not a symlink) of this user that no group or other user may enter."""
    folder = Path(environ.get(DIR_ENV) or default_folder())
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafeFolder(f"the warm runtime's folder {folder} can't be made: {exc}") from None
    held = os.lstat(folder)
    if not stat.S_ISDIR(held.st_mode):
        raise UnsafeFolder(f"the warm runtime's folder {folder} is not a folder (a symlink?)")
    if held.st_uid != os.geteuid():
        raise UnsafeFolder(
            f"the warm runtime's folder {folder} belongs to uid {held.st_uid}, not to this "
            f"user (uid {os.geteuid()}); remove it or set {DIR_ENV}"
        )
    if held.st_mode & 0o077:
        raise UnsafeFolder(
            f"the warm runtime's folder {folder} has mode {stat.S_IMODE(held.st_mode):o}: "
            f"group or others may enter it (700 is wanted); remove it or set {DIR_ENV}"
        )
    return folder


def rendezvous(environ: Mapping[str, str]) -> Rendezvous:
    """This job's runtime files; UnsafeFolder if the folder is not private or the
    socket's path would be too long for a Unix socket."""
    found = Rendezvous(private_folder(environ), runtime_key(environ))
    if len(os.fsencode(found.socket_path)) > SOCKET_PATH_MAX:
        raise UnsafeFolder(f"{found.socket_path} is too long for a Unix socket; set {DIR_ENV}")
    return found


def take_lock(place: Rendezvous) -> int | None:
    """The key's lock (held for a runtime's whole life, so one runtime per key); None
    while another process holds it: a runtime is running or starting."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(place.lock_path, flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd
