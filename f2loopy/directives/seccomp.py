"""A seccomp filter for the sandbox child: an allow-list of system calls.

Installed in the child after everything is imported and the script compiled,
just before the script runs.  The filter lets through only the system calls
that CPython, numpy, OpenBLAS and isl need to compute in memory and to write
the answer to the pipe the child already holds (:data:`ALLOWED`), some of
them only with safe arguments:

* ``mmap``/``mprotect``/``pkey_mprotect`` without ``PROT_EXEC`` (no new native
  code);
* ``clone`` only for a thread (``CLONE_THREAD``); ``clone3`` answers
  ``ENOSYS`` so that the C library falls back to ``clone``;
* ``kill``/``tkill``/``tgkill`` only to this process;
* ``prlimit64`` only to read this process's limits;
* ``fcntl`` only to read or set a descriptor's flags (``F_GETFD``,
  ``F_SETFD``, ``F_GETFL``: no ``F_SETOWN``/``F_SETSIG``, no new descriptors).

Everything else (opening or ``stat``-ing files, sockets, processes, signals to
other processes including ``rt_sigqueueinfo``, SysV shared memory, message
queues and semaphores, ``ptrace``, namespaces, ``io_uring``, ``bpf``, keyrings
...) fails with ``EPERM``: the process lives, Python raises
``PermissionError``, and the sandbox reports the script line.  A system call
of another architecture or ABI (x32, i386) kills the process.

On x86-64 the filter is hand-assembled classic BPF (nothing to install).  On
other Linux architectures (aarch64, ppc64le, s390x ...) the same allow-list,
by system call name and with the same argument checks, is compiled by the
system's libseccomp (``libseccomp.so.2``, loaded through ctypes before the
child locks down), which knows each architecture's numbers.
:func:`supported` says whether this machine has either; where it has
neither, f2loopy refuses to run transformation scripts unless the user
passes ``--trust-scripts``
(:func:`f2loopy.directives.runner.run_transformations`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import struct

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000

_OFF_NR, _OFF_ARCH = 0, 4


def _off_arg(i: int, high: bool = False) -> int:
    return 16 + 8 * i + (4 if high else 0)     # args[i], little endian


_PROT_EXEC = 0x4
_CLONE_THREAD = 0x10000

#: x86-64 system calls allowed whatever their arguments.  Everything here
#: works on memory, on the descriptors the child already holds (0-2 are
#: /dev/null, 3 is the answer pipe; RLIMIT_NOFILE stops new ones), on this
#: process's own signals and timers, or reads the clock.
ALLOWED = {
    # descriptors the child holds
    "read": 0, "write": 1, "readv": 19, "writev": 20, "close": 3, "lseek": 8, "fstat": 5,
    # memory (mmap/mprotect/pkey_mprotect are checked below)
    "munmap": 11, "mremap": 25, "madvise": 28, "brk": 12, "mbind": 237,
    "get_mempolicy": 239, "membarrier": 324,
    # threads (numerical libraries start some) and their synchronisation
    "futex": 202, "futex_waitv": 449, "set_robust_list": 273, "rseq": 334,
    "set_tid_address": 218, "sched_yield": 24, "sched_getaffinity": 204,
    "gettid": 186, "getpid": 39, "getppid": 110, "exit": 60, "exit_group": 231,
    # this process's signals and timers (the soft CPU and wall-clock limits)
    "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "rt_sigpending": 127,
    "sigaltstack": 131, "setitimer": 38, "getitimer": 36, "alarm": 37,
    "restart_syscall": 219,
    # clocks, randomness, accounting
    "clock_gettime": 228, "clock_getres": 229, "gettimeofday": 96, "time": 201,
    "clock_nanosleep": 230, "nanosleep": 35, "getrandom": 318, "getrusage": 98,
    "times": 100, "getrlimit": 97,
}
_MMAP, _MPROTECT, _PKEY_MPROTECT = 9, 10, 329
_CLONE, _CLONE3 = 56, 435
_KILL, _TKILL, _TGKILL = 62, 200, 234
_PRLIMIT64 = 302
_FCNTL = 72
#: fcntl commands allowed: F_GETFD, F_SETFD, F_GETFL (never F_SETOWN/F_SETSIG
#: with O_ASYNC, which would signal another process; never new descriptors)
_FCNTL_CMDS = (1, 2, 3)


class _Program:
    """A tiny BPF assembler with forward labels."""

    def __init__(self):
        self.code: list = []        # (opcode, jt_label_or_int, jf_label_or_int, k)
        self.labels: dict = {}

    def stmt(self, op, k):
        self.code.append((op, 0, 0, k))

    def jump(self, op, k, jt, jf):
        self.code.append((op, jt, jf, k))

    def label(self, name):
        self.labels[name] = len(self.code)

    def ret(self, k):
        self.stmt(_RET_K, k)

    def assemble(self) -> bytes:
        out = []
        for pc, (op, jt, jf, k) in enumerate(self.code):
            def rel(target):
                if isinstance(target, int):
                    return target
                off = self.labels[target] - (pc + 1)
                if not 0 <= off <= 255:
                    raise ValueError("seccomp program: jump out of range")
                return off
            out.append(struct.pack("=HBBI", op, rel(jt), rel(jf), k & 0xFFFFFFFF))
        return b"".join(out)


def build_filter(own_pid: int) -> bytes:
    """The filter program (struct sock_filter array) for this process."""
    p = _Program()
    p.stmt(_LD_W_ABS, _OFF_ARCH)
    p.jump(_JEQ_K, _AUDIT_ARCH_X86_64, 0, "kill")
    p.stmt(_LD_W_ABS, _OFF_NR)
    p.jump(_JGE_K, _X32_BIT, "kill", 0)
    for nr in sorted(ALLOWED.values()):
        p.jump(_JEQ_K, nr, "allow", 0)
    for nr in (_MMAP, _MPROTECT, _PKEY_MPROTECT):
        p.jump(_JEQ_K, nr, "check_prot", 0)
    p.jump(_JEQ_K, _CLONE, "check_clone", 0)
    p.jump(_JEQ_K, _CLONE3, "enosys", 0)
    for nr in (_KILL, _TKILL, _TGKILL):
        p.jump(_JEQ_K, nr, "check_pid", 0)
    p.jump(_JEQ_K, _PRLIMIT64, "check_prlimit", 0)
    p.jump(_JEQ_K, _FCNTL, "check_fcntl", 0)
    p.ret(_RET_ERRNO | errno.EPERM)

    p.label("check_fcntl")
    p.stmt(_LD_W_ABS, _off_arg(1))
    for cmd in _FCNTL_CMDS:
        p.jump(_JEQ_K, cmd, "allow", 0)
    p.jump(_JEQ_K, 0, "deny", "deny")

    p.label("check_prot")
    p.stmt(_LD_W_ABS, _off_arg(2))
    p.jump(_JSET_K, _PROT_EXEC, "deny", "allow")
    p.label("check_clone")
    p.stmt(_LD_W_ABS, _off_arg(0))
    p.jump(_JSET_K, _CLONE_THREAD, "allow", "deny")
    p.label("check_pid")
    p.stmt(_LD_W_ABS, _off_arg(0))
    p.jump(_JEQ_K, own_pid, "allow", "deny")
    p.label("check_prlimit")                 # prlimit64(0, resource, NULL, old)
    p.stmt(_LD_W_ABS, _off_arg(0))
    p.jump(_JEQ_K, 0, 0, "deny")
    p.stmt(_LD_W_ABS, _off_arg(2))
    p.jump(_JEQ_K, 0, 0, "deny")
    p.stmt(_LD_W_ABS, _off_arg(2, high=True))
    p.jump(_JEQ_K, 0, "allow", "deny")
    p.label("deny")
    p.ret(_RET_ERRNO | errno.EPERM)
    p.label("enosys")
    p.ret(_RET_ERRNO | errno.ENOSYS)
    p.label("allow")
    p.ret(_RET_ALLOW)
    p.label("kill")
    p.ret(_RET_KILL_PROCESS)
    return p.assemble()


# {{{ libseccomp (other architectures)

#: tests set this to build the x86-64 filter with libseccomp too
FORCE_LIBSECCOMP = False

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_EQ, _SCMP_CMP_MASKED_EQ = 4, 7
_LIB: ctypes.CDLL | bool | None = None     # False: looked for, not found


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def load_library():
    """libseccomp, or None.  Loaded once, in the parent (the locked-down
    child can open no file)."""
    global _LIB
    if _LIB is None:
        _LIB = False
        if platform.system() == "Linux":
            # find_library runs /sbin/ldconfig -p (a process: 6 ms here): only
            # where the usual name does not load
            for name in ("libseccomp.so.2", None):
                name = name or ctypes.util.find_library("seccomp")
                if not name:
                    continue
                try:
                    lib = ctypes.CDLL(name, use_errno=True)
                except OSError:
                    continue
                lib.seccomp_init.restype = ctypes.c_void_p
                lib.seccomp_init.argtypes = [ctypes.c_uint32]
                lib.seccomp_rule_add_array.argtypes = [
                    ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                    ctypes.POINTER(_ArgCmp)]
                lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
                lib.seccomp_load.argtypes = [ctypes.c_void_p]
                lib.seccomp_release.argtypes = [ctypes.c_void_p]
                _LIB = lib
                break
    return _LIB if isinstance(_LIB, ctypes.CDLL) else None


def _rules(own_pid: int) -> list:
    """(action, name, [(arg, op, a, b)]) for every rule of the allow-list."""
    allow = _SCMP_ACT_ALLOW
    rules: list[tuple[int, str, list]] = []
    for name in ALLOWED:
        rules.append((allow, name, []))
    for name in ("mmap", "mprotect", "pkey_mprotect"):
        rules.append((allow, name, [(2, _SCMP_CMP_MASKED_EQ, _PROT_EXEC, 0)]))
    rules.append((allow, "clone", [(0, _SCMP_CMP_MASKED_EQ, _CLONE_THREAD, _CLONE_THREAD)]))
    rules.append((_RET_ERRNO | errno.ENOSYS, "clone3", []))
    for name in ("kill", "tkill", "tgkill"):
        rules.append((allow, name, [(0, _SCMP_CMP_EQ, own_pid, 0)]))
    rules.append((allow, "prlimit64", [(0, _SCMP_CMP_EQ, 0, 0), (2, _SCMP_CMP_EQ, 0, 0)]))
    for cmd in _FCNTL_CMDS:
        rules.append((allow, "fcntl", [(1, _SCMP_CMP_EQ, cmd, 0)]))
    return rules


def _install_libseccomp(own_pid: int) -> bool:
    lib = load_library()
    if lib is None:
        return False
    ctx = lib.seccomp_init(_RET_ERRNO | errno.EPERM)   # unknown architectures: killed
    if not ctx:
        return False
    try:
        for action, name, conds in _rules(own_pid):
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue                # not a system call on this architecture
            arr = (_ArgCmp * max(1, len(conds)))(*[_ArgCmp(*c) for c in conds])
            if lib.seccomp_rule_add_array(ctypes.c_void_p(ctx), action, nr, len(conds),
                                          arr) != 0:
                return False
        return lib.seccomp_load(ctypes.c_void_p(ctx)) == 0
    finally:
        lib.seccomp_release(ctypes.c_void_p(ctx))

# }}}


def _x86_64() -> bool:
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def supported() -> bool:
    """Whether this machine has the filter: Linux on x86-64, or Linux with
    libseccomp."""
    return _x86_64() or load_library() is not None


def install() -> bool:
    """Install the filter on the calling (single-threaded) process.

    Returns False where seccomp is not available (another architecture or
    operating system without libseccomp, or a kernel that refuses); raises
    nothing.
    """
    if not _x86_64() or FORCE_LIBSECCOMP:
        try:
            return _install_libseccomp(os.getpid())
        except (OSError, AttributeError, TypeError, ValueError):
            return False
    prog_bytes = build_filter(os.getpid())
    n = len(prog_bytes) // 8

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog_bytes, len(prog_bytes))
    prog = SockFprog(n, ctypes.cast(buf, ctypes.c_void_p))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return False
    prctl.restype = ctypes.c_int
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if prctl(ctypes.c_int(pr_set_no_new_privs), ctypes.c_ulong(1), ctypes.c_ulong(0),
             ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        return False
    if prctl(ctypes.c_int(pr_set_seccomp), ctypes.c_ulong(seccomp_mode_filter),
             ctypes.cast(ctypes.pointer(prog), ctypes.c_void_p), ctypes.c_ulong(0),
             ctypes.c_ulong(0)) != 0:
        return False
    return True
