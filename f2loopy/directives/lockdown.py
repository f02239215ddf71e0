"""Locking the sandbox child down: descriptors, resource limits, seccomp, the
audit hook, and the soft time limits that report where the script was.

Everything here runs in the forked child only, in this order (see
:func:`lock_down`): close inherited descriptors, set resource limits
(``setrlimit``: CPU time, address space, no file growth, no core files, no new
descriptors, a bounded number of processes), install the seccomp filter, then
the audit hook (``sys.addaudithook``), which from then on refuses every interpreter event the
transformation API does not need: opening files, imports, compiling code,
``os.*`` file and process operations, sockets, ``ctypes``, ``subprocess``,
frame inspection by script code, ...  A refusal is recorded with where the
script was, and raised as :class:`SandboxRefusal` (a ``BaseException``, so
``except Exception`` in a script does not swallow it; a script that catches it
anyway still fails, because the recorded refusal is reported at the end).
"""

from __future__ import annotations

import fcntl
import gc
import itertools
import os
import resource
import signal
import sys
from dataclasses import dataclass, field

from f2loopy.directives import policy, seccomp


class SandboxRefusal(BaseException):
    """Raised (in the child) for something the sandbox refuses."""

    def __init__(self, message: str, note: str | None = None):
        super().__init__(message)
        self.message = message
        self.note = note


class LimitExceeded(BaseException):
    """Raised (in the child) when the soft CPU or wall-clock limit is reached."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    :attr cpu_s: CPU seconds (soft: an error at the script line; one second
        later the kernel kills the process).
    :attr wall_s: wall-clock seconds (soft in the child, as for CPU; the parent
        kills the process a second later).
    :attr memory_mb: address space the child may add to what it inherited.
    """

    cpu_s: float = 60.0
    wall_s: float = 120.0
    memory_mb: int = 2048

    @classmethod
    def from_environment(cls, **overrides) -> "Limits":
        """Defaults, overridden by ``F2LOOPY_SCRIPT_CPU_LIMIT`` (s),
        ``F2LOOPY_SCRIPT_WALL_LIMIT`` (s) and ``F2LOOPY_SCRIPT_MEMORY_LIMIT``
        (MiB), then by *overrides*."""
        values: dict = {}
        for key, env, conv in (("cpu_s", "F2LOOPY_SCRIPT_CPU_LIMIT", float),
                               ("wall_s", "F2LOOPY_SCRIPT_WALL_LIMIT", float),
                               ("memory_mb", "F2LOOPY_SCRIPT_MEMORY_LIMIT", int)):
            text = os.environ.get(env)
            if text:
                try:
                    values[key] = conv(text)
                except ValueError:
                    pass
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass(frozen=True)
class FramePos:
    """Where a frame of script or recipe code was: pseudo file name, 1-based
    line, 0-based columns (UTF-8 offsets, None when unknown)."""

    code_name: str
    line: int
    col: int | None = None
    end_line: int | None = None
    end_col: int | None = None


@dataclass
class Violation:
    message: str
    note: str | None
    frames: list = field(default_factory=list)     # FramePos, outermost first


def frame_pos(code, line, lasti) -> FramePos:
    """The position of instruction *lasti* of *code* (exact columns in 3.11+)."""
    col = end_line = end_col = None
    try:
        if lasti is not None and lasti >= 0 and hasattr(code, "co_positions"):
            pos = next(itertools.islice(code.co_positions(), lasti // 2, None), None)
            if pos is not None:
                pline, end_line, col, end_col = pos
                line = pline or line
    except (ValueError, TypeError):
        pass
    return FramePos(code.co_filename, line or 1, col, end_line, end_col)


class Guard:
    """Records refusals with their location; knows which code is the script's.

    :arg code_names: the pseudo file names of the compiled script blocks and
        recipes (``<f2loopy-script-0>``, ``<f2loopy-recipe:gpu_tiling>``).
    """

    def __init__(self, code_names):
        self.code_names = frozenset(code_names)
        self.allowed_code: list = []       # code objects the child may exec
        self.violations: list[Violation] = []
        self.busy = False

    def script_frames(self, frame) -> list[FramePos]:
        out = []
        while frame is not None:
            code = frame.f_code
            if code.co_filename in self.code_names:
                out.append(frame_pos(code, frame.f_lineno, frame.f_lasti))
            frame = frame.f_back
        out.reverse()
        return out

    def record(self, message: str, note: str | None = None, frame=None):
        busy, self.busy = self.busy, True
        try:
            if frame is None:
                frame = sys._getframe(1)
            self.violations.append(Violation(message, note, self.script_frames(frame)))
        finally:
            self.busy = busy

    def refuse(self, message: str, note: str | None = None):
        """Record and raise a refusal at the script's current position."""
        self.record(message, note, sys._getframe(1))
        raise SandboxRefusal(message, note)


# {{{ audit hook

#: events that trusted code (the API, numpy, islpy) may cause; script code may not
_TRUSTED_ONLY = frozenset({"sys._getframe", "sys._getframemodulename", "object.__getattr__",
                           "builtins.id",
                           "object.__setattr__", "object.__delattr__"})


def _short(value, limit=160) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _detail(event: str, args: tuple) -> str:
    try:
        if event == "open" and args:
            return repr(_short(args[0]))
        if event == "import" and args:
            return _short(args[0])
        if event in ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn",
                     "os.spawn") and args:
            return _short(args[0])
        if event.startswith("socket.") and len(args) > 1:
            return _short(args[1])
        if event.startswith("ctypes.") and args:
            return _short(args[0])
        if event.startswith(("os.", "shutil.")) and args:
            return _short(args[0])
    except Exception:  # noqa: BLE001 - describing must never fail
        pass
    return ""


def _caller(frame):
    """The first frame outside this module, going outwards from *frame*."""
    here = __file__
    while frame is not None and frame.f_code.co_filename == here:
        frame = frame.f_back
    return frame


_F2LOOPY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _imported_by_f2loopy(frame) -> bool:
    """Whether the module being imported is wanted by f2loopy's own code (the
    preload missed it) rather than by the script or a library it called."""
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_F2LOOPY_DIR)


def install_audit_hook(guard: Guard) -> None:
    """Refuse every audit event except the few the API needs (irreversible)."""

    def audit(event, args):
        if guard.busy:
            return
        if event == "exec" and args and any(args[0] is c for c in guard.allowed_code):
            return
        guard.busy = True
        try:
            caller = _caller(sys._getframe(1))
            from_script = caller is not None and caller.f_code.co_filename in guard.code_names
            if event in _TRUSTED_ONLY and not from_script:
                return
            detail = _detail(event, args)
            if event == "import" and _imported_by_f2loopy(caller):
                message = (f"the sandbox did not pre-load module '{detail}', which the "
                           "transformation needs (an f2loopy bug: please report it)")
            else:
                message = policy.refuse_event(event, detail)
            guard.violations.append(Violation(message, None, guard.script_frames(caller)))
        finally:
            guard.busy = False
        raise SandboxRefusal(message)

    sys.addaudithook(audit)

# }}}


# {{{ descriptors, limits, soft timers

def _address_space_now() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def isolate_descriptors(result_fd: int) -> int:
    """Point 0-2 at /dev/null, move *result_fd* to 3, close everything else.

    Returns the new result descriptor (3).  Objects inherited from the parent
    are frozen first, so no stale file object is collected later and closes a
    reused descriptor.
    """
    gc.freeze()
    moved = fcntl.fcntl(result_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(result_fd)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd != null:
            os.dup2(null, fd)
    if null > 2:
        os.close(null)
    os.dup2(moved, 3)
    os.close(moved)
    try:
        os.closerange(4, os.sysconf("SC_OPEN_MAX"))
    except (ValueError, OSError):
        os.closerange(4, 65536)
    return 3


def _tasks_now() -> int:
    """Threads and processes on the system (an upper bound of this user's)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return 0


def set_limits(limits: Limits, *, trusted: bool = False) -> None:
    """CPU time, address space and no core files; unless *trusted*, also no
    file growth, no new descriptors and a bounded number of processes."""
    cpu = max(1, int(limits.cpu_s + 0.999))
    want = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
    ]
    if not trusted:
        want += [(resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_NOFILE, 4)]
    tasks = _tasks_now()
    if tasks and not trusted:
        # no fork bomb even without seccomp, yet room for the few threads a
        # numerical library starts (with 0, OpenBLAS hangs on its first call)
        want.append((resource.RLIMIT_NPROC, tasks + 32))
    base = _address_space_now()
    if base:
        want.append((resource.RLIMIT_AS, base + limits.memory_mb * 1024 * 1024))
    for res, value in want:
        soft, hard = value if isinstance(value, tuple) else (value, value)
        try:
            _, cur_hard = resource.getrlimit(res)
            if cur_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, cur_hard), min(hard, cur_hard)
            resource.setrlimit(res, (soft, hard))
        except (ValueError, OSError):
            pass


def start_soft_timers(limits: Limits) -> None:
    """SIGXCPU (soft CPU limit) and SIGALRM (wall clock) raise LimitExceeded
    where the script is, so the error names its line."""
    cpu = max(1, int(limits.cpu_s + 0.999))

    def on_cpu(signum, frame):
        raise LimitExceeded(f"the transformation script used more than {cpu} s of CPU time "
                            "(the sandbox limit)")

    def on_alarm(signum, frame):
        raise LimitExceeded(f"the transformation script ran longer than "
                            f"{limits.wall_s:g} s (the sandbox limit)")

    signal.signal(signal.SIGXCPU, on_cpu)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, limits.wall_s))

# }}}


def scrub_environment() -> None:
    """Forget the environment (it may hold secrets: tokens, passwords): the C
    library's strings are overwritten with zeros, then ``os.environ`` is emptied."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
        i = 0
        while env[i] is not None and i < 100_000:
            addr = ctypes.cast(env, ctypes.POINTER(ctypes.c_void_p))[i]
            ctypes.memset(addr, 0, len(env[i]))
            i += 1
    except (OSError, ValueError, AttributeError):
        pass
    os.environ.clear()


def lock_down(guard: Guard, limits: Limits, *, use_seccomp: bool = True,
              use_audit: bool = True, trusted: bool = False) -> dict:
    """Apply every OS and interpreter layer to this (child) process (with
    *trusted*, ``--trust-scripts``: only the CPU, wall-clock and memory limits).

    Returns which layers are in force (for tests and ``--debug``).
    """
    set_limits(limits, trusted=trusted)
    layers = {"rlimits": True, "seccomp": False, "audit": False}
    if use_seccomp:
        layers["seccomp"] = seccomp.install()
    if use_audit:
        install_audit_hook(guard)
        layers["audit"] = True
    start_soft_timers(limits)
    return layers
