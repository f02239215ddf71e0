"""A seccomp filter for the sandbox child: the kernel refuses what Python-level
checks might miss.

Installed in the child after everything is imported and the script compiled,
just before the script runs.  The filter answers ``EPERM`` (the call fails, the
process lives, Python raises ``PermissionError``) for:

* opening files at all (``open``, ``openat``, ``openat2``, ``creat``) and every
  call that creates, deletes, renames or changes files, links or directories;
* sockets (``socket``, ``socketpair``, ``connect``, ``bind``, ...);
* new processes (``fork``, ``vfork``, ``execve``, ``execveat``, and ``clone``
  unless it makes a thread; ``clone3`` answers ``ENOSYS`` so that the C library
  falls back to ``clone``);
* signals to other processes (``kill``/``tkill``/``tgkill`` of another pid);
* executable memory (``mmap``/``mprotect`` with ``PROT_EXEC``: no new native
  code can be loaded), raising resource limits, ``ptrace``, namespaces,
  mounts, ``io_uring``, ``bpf``, kernel modules, keyrings and the like.

Only x86-64 is covered; elsewhere :func:`install` returns False and the other
layers stand alone.  Any other architecture value or an x32 system call
number kills the process.
"""

from __future__ import annotations

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


def _off_arg(i: int) -> int:
    return 16 + 8 * i          # low 32 bits of args[i] (little endian)


_PROT_EXEC = 0x4
_CLONE_THREAD = 0x10000

#: x86-64 system calls refused with EPERM
_DENIED = {
    # files
    "open": 2, "openat": 257, "openat2": 437, "creat": 85, "truncate": 76, "ftruncate": 77,
    "rename": 82, "renameat": 264, "renameat2": 316, "mkdir": 83, "mkdirat": 258, "rmdir": 84,
    "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266, "unlink": 87, "unlinkat": 263,
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93,
    "lchown": 94, "fchownat": 260, "mknod": 133, "mknodat": 259, "utime": 132, "utimes": 235,
    "utimensat": 280, "futimesat": 261, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "copy_file_range": 326, "memfd_create": 319, "acct": 163,
    "quotactl": 179,
    # network
    "socket": 41, "socketpair": 53, "connect": 42, "accept": 43, "accept4": 288, "bind": 49,
    "listen": 50,
    # processes
    "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "ptrace": 101,
    "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_open": 434,
    "pidfd_send_signal": 424, "pidfd_getfd": 438, "process_madvise": 440, "kcmp": 312,
    # the system
    "setrlimit": 160, "prlimit64": 302, "mount": 165, "umount2": 166, "chroot": 161,
    "pivot_root": 155, "unshare": 272, "setns": 308, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
    "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168, "sethostname": 170,
    "setdomainname": 171, "personality": 135, "uselib": 134, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442,
}
_MMAP, _MPROTECT, _PKEY_MPROTECT = 9, 10, 329
_CLONE, _CLONE3 = 56, 435
_KILL, _TKILL, _TGKILL = 62, 200, 234


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
    for nr in (_MMAP, _MPROTECT, _PKEY_MPROTECT):
        p.jump(_JEQ_K, nr, "check_prot", 0)
    p.jump(_JEQ_K, _CLONE, "check_clone", 0)
    p.jump(_JEQ_K, _CLONE3, "enosys", 0)
    for nr in (_KILL, _TKILL, _TGKILL):
        p.jump(_JEQ_K, nr, "check_pid", 0)
    for nr in sorted(set(_DENIED.values())):
        p.jump(_JEQ_K, nr, "deny", 0)
    p.ret(_RET_ALLOW)

    p.label("check_prot")
    p.stmt(_LD_W_ABS, _off_arg(2))
    p.jump(_JSET_K, _PROT_EXEC, "deny", "allow")
    p.label("check_clone")
    p.stmt(_LD_W_ABS, _off_arg(0))
    p.jump(_JSET_K, _CLONE_THREAD, "allow", "deny")
    p.label("check_pid")
    p.stmt(_LD_W_ABS, _off_arg(0))
    p.jump(_JEQ_K, own_pid, "allow", "deny")
    p.label("deny")
    p.ret(_RET_ERRNO | errno.EPERM)
    p.label("enosys")
    p.ret(_RET_ERRNO | errno.ENOSYS)
    p.label("allow")
    p.ret(_RET_ALLOW)
    p.label("kill")
    p.ret(_RET_KILL_PROCESS)
    return p.assemble()


def supported() -> bool:
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def install() -> bool:
    """Install the filter on the calling (single-threaded) process.

    Returns False where seccomp is not available (another architecture or
    operating system, or a kernel that refuses); raises nothing.
    """
    if not supported():
        return False
    try:
        import ctypes
    except ImportError:
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
