"""Running a job in a forked, locked-down child process (the parent's side).

The parent pre-imports everything the transformation API can need (once per
process), forks, and reads the child's answer from a pipe as bytes, with a
size cap and a wall-clock deadline; past the deadline the child's process
group is killed.  The answer is JSON, parsed with :func:`json.loads` (no
constants, bounded size); nothing from the child is ever unpickled or
evaluated.

Forking the already initialised parent is what keeps a scripted translation
fast (a fresh interpreter would spend most of a second importing numpy, islpy
and fparser); the child then drops what it may not keep (see
:mod:`~f2loopy.directives.lockdown`).
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import pkgutil
import re
import select
import signal
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from f2loopy.directives.child import Job, child_main
from f2loopy.directives.lockdown import Limits

#: bytes the script's child may send back (the parent decodes kernels at a
#: few MB a second; the paper's script with 8 checkpoints sends 0.35 MB)
MAX_ANSWER = 16 * 1024 * 1024
#: seconds the parent waits past the wall-clock limit before killing
KILL_GRACE_S = 1.0

_PRELOADED = False
#: parts of f2loopy a script cannot reach (the command line, builds, glue, gfortran)
_SKIP = {"cli", "pipeline", "verify", "build", "glue", "bench", "fuzz", "tune", "tuning_record",
         "__main__"}
_SKIP_LAZY = ("pyopencl", "multiprocessing", "concurrent", "subprocess", "matplotlib",
              *sorted(f"f2loopy.{part}" for part in _SKIP - {"__main__"}))
#: ``import`` statements inside functions (lazy imports)
_LAZY_IMPORT_RE = re.compile(
    r"^[ \t]+(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|"
    r"import[ \t]+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*))", re.M)

_WARMUP_FORTRAN = """\
subroutine f2loopy_warmup(n, a, x)
  implicit none
  integer n, i
  real a, x(n), t
  do i = 1, n
    t = abs(x(i)) ** 2
    if (t > a) then
      x(i) = sqrt(t) + max(a, 1.0)
    else
      x(i) = mod(i, 3) * exp(a)
    end if
  end do
end subroutine
"""


def preload() -> None:
    """Import every module the transformation API may need (once).

    After the child locks down, importing is refused; so all of f2loopy (but
    the command line, the pipeline and the gfortran runner) is imported here,
    and a tiny kernel is parsed, transformed, generated and serialized to
    load whatever those paths import lazily.
    """
    global _PRELOADED
    if _PRELOADED:
        return
    import ctypes  # noqa: F401 - the child installs its seccomp filter with it

    from f2loopy.directives import seccomp
    seccomp.load_library()          # elsewhere than x86-64 the filter needs libseccomp

    import f2loopy
    for info in pkgutil.walk_packages(f2loopy.__path__, "f2loopy."):
        if info.name.split(".")[1] in _SKIP:
            continue
        _try_import(info.name)
    for name in sorted(_lazy_imports(Path(f2loopy.__file__).parent)):
        if name not in sys.modules and not name.startswith(_SKIP_LAZY):
            _try_import(name)
    try:
        from f2loopy.codegen import generate_code
        from f2loopy.frontend import parse_fortran
        from f2loopy.ir.serialize import encode_kernel, kernels_from_data, kernels_to_json, loads
        from f2loopy.transform import split_iname, tag_inames
        (knl,) = parse_fortran(_WARMUP_FORTRAN, "warmup.f90")
        knl = tag_inames(split_iname(knl, "i", 4), "i_inner:unr")
        generate_code(knl)
        kernels_from_data(loads(kernels_to_json({"k": [encode_kernel(knl)]}))["k"])
    except Exception:  # noqa: BLE001 - the warm-up only loads modules
        pass
    _PRELOADED = True


def _try_import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken module fails later, where it is used
        pass


def _lazy_imports(package_dir: Path) -> set:
    """Modules that f2loopy's reachable code imports inside functions."""
    names = set()
    for path in package_dir.rglob("*.py"):
        parts = path.relative_to(package_dir).parts
        if parts[0].removesuffix(".py") in _SKIP:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        # every such statement has 'import' on its first line: matching only
        # there is 7 times faster than letting the regex try every line
        pos = text.find("import")
        while pos >= 0:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            m = _LAZY_IMPORT_RE.match(text, text.rfind("\n", 0, pos) + 1, end)
            if m is not None and m.group(1):
                names.add(m.group(1))
            elif m is not None:
                names.update(n.strip() for n in m.group(2).split(","))
            pos = text.find("import", end)
    return names


@dataclass
class SandboxAnswer:
    """What came back: the child's JSON text, or why there is none."""

    text: str | None
    problem: str | None = None
    elapsed_s: float = 0.0
    cpu_s: float = 0.0          # CPU time the child used (user + system)


def _kill(pid: int) -> None:
    """SIGKILL the child's process group and the child (safe while it is unreaped)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _exited(pid: int) -> bool:
    """True once *pid* has ended (left as a zombie, so its pid cannot be reused)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _finish(pid: int, grace_s: float) -> tuple[int, bool, float]:
    """Wait up to *grace_s* for the child to end, kill what is left of its
    process group, reap it.  Returns (wait status, whether it had to be
    killed, the CPU seconds it used)."""
    deadline = time.monotonic() + grace_s
    killed = False
    while not _exited(pid):
        if time.monotonic() >= deadline:
            killed = True
            break
        time.sleep(0.001)
    _kill(pid)
    try:
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
    except ChildProcessError:
        status, cpu = 0, 0.0
    return status, killed, cpu


def _describe_death(status: int, limits: Limits) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or sig == signal.SIGKILL:
            return (f"the transformation script used more than {limits.cpu_s:g} s of CPU "
                    "time (the sandbox limit) and was stopped")
        if sig == signal.SIGXFSZ:
            return "the transformation script tried to write a file and was stopped"
        if sig == signal.SIGSYS:
            return "the transformation script made a forbidden system call and was stopped"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return (f"the transformation script crashed ({name}; it may have run out of memory: "
                f"the sandbox allows {limits.memory_mb} MiB)")
    return (f"the transformation script's process ended without an answer (exit status "
            f"{os.WEXITSTATUS(status)})")


def run_sandboxed(job: Job, limits: Limits, max_answer: int = MAX_ANSWER) -> SandboxAnswer:
    """Run *job* in a forked child under *limits*; return its answer (at
    most *max_answer* bytes)."""
    return run_in_child(lambda fd: child_main(job, limits, fd), limits,
                        max_answer=max_answer)


def run_in_child(body, limits: Limits, grace_s: float = KILL_GRACE_S,
                 max_answer: int = MAX_ANSWER) -> SandboxAnswer:
    """Fork; in the child, ``body(fd)`` writes its answer to descriptor *fd*
    and ends the process (it must lock itself down first).  The parent reads
    the answer under *limits* (wall clock plus *grace_s*, size) and reaps the
    child."""
    return run_in_children([body], limits, grace_s, max_answer)[0]


def run_in_children(bodies: list, limits: Limits, grace_s: float = KILL_GRACE_S,
                    max_answer: int = MAX_ANSWER) -> list[SandboxAnswer]:
    """:func:`run_in_child` for each of *bodies*, all forked at once (from
    this process, so each is as clean as it is) and running side by side:
    their answers in the order of *bodies*, each under *limits* of its own
    counted from the first fork."""
    preload()
    start = time.monotonic()
    # (pid, read end) of each child not reaped yet; (-1, -1) once it is (a
    # reaped child's pid may belong to another process by then)
    started: list[tuple[int, int]] = []
    try:
        for body in bodies:
            started.append(_fork(body))
        answers = []
        for k, (pid, r) in enumerate(started):
            answers.append(_collect(pid, r, limits, start, grace_s, max_answer))
            started[k] = (-1, -1)
            os.close(r)
        return answers
    except BaseException:
        for pid, _ in started:
            if pid > 0:
                _kill(pid)
        for pid, _ in started:
            if pid > 0:
                _finish(pid, 5.0)
        raise
    finally:
        for _, r in started:
            if r >= 0:
                os.close(r)


def _fork(body) -> tuple[int, int]:
    """Fork a child that runs ``body(w)`` (*w* the write end of a new pipe)
    in a process group of its own; (its pid, the read end)."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a process with threads (OpenCL
        # runtimes start some); the child only runs Python and islpy code and
        # exits with os._exit, so no lock held by another thread is needed.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage cannot follow it)
        try:
            os.close(r)
            os.setpgid(0, 0)
            # the script's garbage is collected, whatever the parent chose
            # (translate does not collect while it translates a file); what
            # the parent left is frozen first, as isolate_descriptors does,
            # so no collection walks (and copies) the inherited heap
            gc.freeze()
            gc.enable()
            body(w)
        finally:
            os._exit(4)
    os.close(w)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    return pid, r


def _collect(pid: int, r: int, limits: Limits, start: float, grace_s: float,
             max_answer: int) -> SandboxAnswer:
    deadline = start + limits.wall_s + grace_s
    chunks, size, problem = [], 0, None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            problem = (f"the transformation script ran longer than {limits.wall_s:g} s (the "
                       "sandbox limit) and was stopped")
            break
        try:
            ready, _, _ = select.select([r], [], [], remaining)
        except InterruptedError:
            continue
        if not ready:
            continue
        try:
            chunk = os.read(r, 1 << 20)
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise
        if not chunk:
            break
        size += len(chunk)
        if size > max_answer:
            problem = "the transformation script's answer is too large"
            break
        chunks.append(chunk)
    if problem is not None:
        _kill(pid)
        _, _, cpu = _finish(pid, 5.0)
        return SandboxAnswer(None, problem, time.monotonic() - start, cpu)
    status, killed, cpu = _finish(pid, KILL_GRACE_S)
    elapsed = time.monotonic() - start
    data = b"".join(chunks)
    if killed:
        return SandboxAnswer(None, "the transformation script's process did not end after "
                             "answering and was stopped", elapsed, cpu)
    if os.WIFSIGNALED(status) or not data:
        return SandboxAnswer(None, _describe_death(status, limits), elapsed, cpu)
    try:
        return SandboxAnswer(data.decode("utf-8"), None, elapsed, cpu)
    except UnicodeDecodeError:
        return SandboxAnswer(None, "the transformation script's answer is not valid text",
                             elapsed, cpu)
