"""Linux process-isolation primitives used by the sandbox (x86_64, via ctypes).

Namespaces (unshare, mount), prctl flags, Landlock (syscalls 444-446) and a seccomp
BPF filter. Every function raises `OSError` when the kernel refuses; callers decide
whether that is fatal (`require_full_isolation`) or just reported.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]

IS_X86_64 = platform.machine() == "x86_64"

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_NAMESPACE_FLAGS = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)

MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECCOMP_MODE_FILTER = 2
_SYS_CAPSET = 126
_CAPABILITY_VERSION_3 = 0x20080522


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def enter_user_namespace(inside_id: int) -> None:
    """Become uid and gid ``inside_id`` of a new user namespace that maps it to this
    process's own (unprivileged) ids. The process then holds every capability over the
    namespaces it creates next (network, mount, PID) and none over the host's: what lets
    an unprivileged sandbox build the same walls root builds. The kernel refuses this in
    a multithreaded process, so it runs before anything could start a thread."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER)
    # setgroups must be denied before an unprivileged process may write its gid_map.
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{inside_id} {uid} 1"),
        ("gid_map", f"{inside_id} {gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def drop_capabilities() -> None:
    """Shed every capability for good: the bounding set (nothing can be regained), the
    ambient set, then the permitted, effective and inheritable sets; checked afterwards."""
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    if ctypes.get_errno() != errno.EINVAL:  # EINVAL: past the last capability
        _check(-1, "prctl(PR_CAPBSET_DROP)")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    header = ctypes.create_string_buffer(struct.pack("<Ii", _CAPABILITY_VERSION_3, 0))
    data = ctypes.create_string_buffer(bytes(24))  # two zeroed {effective, permitted, inheritable}
    _check(_libc.syscall(_SYS_CAPSET, header, data), "capset")
    with open("/proc/self/status") as f:
        held = [ln for ln in f if ln.startswith(("CapEff", "CapPrm", "CapInh", "CapAmb"))]
    if any(int(line.split()[1], 16) for line in held):
        raise OSError(errno.EPERM, "capabilities remain after dropping them")


def mount_private_tmpfs(path: str, size_bytes: int, uid: int, gid: int) -> None:
    """In a fresh mount namespace: stop propagation, then mount a size-capped tmpfs."""
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate")
    options = f"size={size_bytes},nr_inodes=4096,mode=0711,uid={uid},gid={gid}".encode()
    _check(
        _libc.mount(
            b"rlstudio-reward", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options
        ),
        "mount tmpfs",
    )


# --- Landlock -------------------------------------------------------------------------------

_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2  # ABI 6

READ_DIR_ACCESS = FS_READ_FILE | FS_READ_DIR
READ_FILE_ACCESS = FS_READ_FILE
DEVICE_RW_ACCESS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE
SCRATCH_ACCESS = (
    FS_WRITE_FILE
    | FS_READ_FILE
    | FS_READ_DIR
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_FIFO
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE
)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is unavailable."""
    if not IS_X86_64:
        return 0
    version = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, int(version))


def _handled_fs(abi: int) -> int:
    mask = (1 << 13) - 1
    if abi >= 2:
        mask |= FS_REFER
    if abi >= 3:
        mask |= FS_TRUNCATE
    if abi >= 5:
        mask |= FS_IOCTL_DEV
    return mask


def landlock_restrict(rules: list[tuple[int, int]], abi: int) -> None:
    """Allow only ``rules`` ((O_PATH fd, access mask) pairs) on the file system, deny all
    TCP bind/connect (ABI >= 4), and scope signals and abstract unix sockets (ABI >= 6)."""
    if abi <= 0:
        raise OSError(errno.ENOSYS, "Landlock is not available on this kernel")
    handled = _handled_fs(abi)
    fields = [handled]
    if abi >= 4:
        fields.append(NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6:
        fields.append(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    attr = ctypes.create_string_buffer(struct.pack(f"<{len(fields)}Q", *fields))
    ruleset = _check(
        _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, attr, len(attr.raw), 0),
        "landlock_create_ruleset",
    )
    try:
        for fd, access in rules:
            rule = ctypes.create_string_buffer(struct.pack("<Qi", access & handled, fd))
            _check(
                _libc.syscall(
                    _SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, rule, 0
                ),
                "landlock_add_rule",
            )
        _check(_libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


# --- seccomp --------------------------------------------------------------------------------

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET, _AND = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
_SYS_SOCKET, _SYS_SOCKETPAIR, _SYS_CLONE, _SYS_CLONE3 = 41, 53, 56, 435
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF

DENIED_SYSCALLS: dict[str, int] = {
    "execve": 59,
    "execveat": 322,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "pidfd_getfd": 438,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "unshare": 272,
    "setns": 308,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "syslog": 103,
    "acct": 163,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "personality": 135,
    "fanotify_init": 300,
    "quotactl": 179,
    "iopl": 172,
    "ioperm": 173,
    "uselib": 134,
}


def seccomp_program() -> bytes:
    """A BPF filter: `socket` of any family gets EACCES (a unix socket could connect to a
    host service by path: Landlock does not cover that, and /run and /tmp are visible);
    only `socketpair(AF_UNIX, SOCK_STREAM)` is allowed (already connected to itself, it
    reaches nothing; asyncio needs it). Namespace-creating clones and the syscalls in
    `DENIED_SYSCALLS` get EPERM, clone3 ENOSYS (glibc then falls back to clone, whose flags
    can be checked), foreign architectures are killed; the rest is allowed."""
    code: list[tuple[int, int | str, int | str, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 0, "kill", _AUDIT_ARCH_X86_64),
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE, "eperm", 0, _X32_SYSCALL_BIT),
        (_JEQ, "eacces", 0, _SYS_SOCKET),
        (_JEQ, "socketpair", 0, _SYS_SOCKETPAIR),
        (_JEQ, "clone", 0, _SYS_CLONE),
        (_JEQ, "enosys", 0, _SYS_CLONE3),
        *[(_JEQ, "eperm", 0, nr) for nr in DENIED_SYSCALLS.values()],
        (_RET, 0, 0, _RET_ALLOW),
    ]
    labels: dict[str, int] = {}

    def label(name: str, *body: tuple[int, int | str, int | str, int]) -> None:
        labels[name] = len(code)
        code.extend(body)

    label(
        "socketpair",
        (_LD_W_ABS, 0, 0, 16),  # args[0], the family (low 32 bits)
        (_JEQ, 0, "eacces", _AF_UNIX),
        (_LD_W_ABS, 0, 0, 24),  # args[1], the type, with SOCK_NONBLOCK/SOCK_CLOEXEC flags
        (_AND, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ, "allow", "eacces", _SOCK_STREAM),
    )
    label("clone", (_LD_W_ABS, 0, 0, 16), (_JSET, "eperm", "allow", _NAMESPACE_FLAGS))
    label("allow", (_RET, 0, 0, _RET_ALLOW))
    label("eperm", (_RET, 0, 0, _RET_ERRNO | errno.EPERM))
    label("eacces", (_RET, 0, 0, _RET_ERRNO | errno.EACCES))
    label("enosys", (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS))
    label("kill", (_RET, 0, 0, _RET_KILL_PROCESS))

    def offset(target: int | str, index: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - index - 1
        assert 0 <= jump < 256, "seccomp jump out of range"
        return jump

    return b"".join(
        struct.pack("<HBBI", op, offset(jt, i), offset(jf, i), k)
        for i, (op, jt, jf, k) in enumerate(code)
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def install_seccomp(program: bytes) -> None:
    """Install ``program`` on this thread (needs no_new_privs or CAP_SYS_ADMIN)."""
    if not IS_X86_64:
        raise OSError(errno.ENOSYS, "the seccomp filter is written for x86_64 only")
    buffer = ctypes.create_string_buffer(program)
    prog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "seccomp"
    )
