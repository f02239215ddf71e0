import atexit
import gc
import itertools
import os
import resource
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))
# a translation cache of the test session's own (the CLI tests inherit it)
os.environ["F2LOOPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="f2loopy-test-cache-")
atexit.register(shutil.rmtree, os.environ["F2LOOPY_CACHE_DIR"], True)
# and a secret of its own that authenticates the cache's entries (outside the cache)
_KEY_DIR = tempfile.mkdtemp(prefix="f2loopy-test-key-")
os.environ["F2LOOPY_CACHE_KEY"] = os.path.join(_KEY_DIR, "cache-key")
atexit.register(shutil.rmtree, _KEY_DIR, True)
# where each unit test's own translation cache goes (made only where one stores)
_UNIT_CACHES = tempfile.mkdtemp(prefix="f2loopy-unit-caches-")
atexit.register(shutil.rmtree, _UNIT_CACHES, True)
_unit_cache_numbers = itertools.count()


# {{{ what a test needs: one fixture per tool; each skips when its tool is missing

def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"needs {name} (scripts/setup.sh installs it)")
    return path


@pytest.fixture(scope="session")
def gfortran() -> str:
    """The Fortran compiler (the reference of differential tests, ``f2loopy
    check``, the Fortran glue's programs)."""
    return _tool("gfortran")


@pytest.fixture(scope="session")
def gcc() -> str:
    """The C compiler (the runtime library, the Fortran glue's C file)."""
    return _tool("gcc")


@pytest.fixture(scope="session")
def preprocessor() -> str:
    """The C preprocessor f2loopy runs on .F90 files and files with # lines
    (``gfortran -E -cpp``, else GCC's ``cpp``)."""
    path = shutil.which("gfortran") or shutil.which("cpp")
    if path is None:
        pytest.skip("needs gfortran or cpp, the preprocessor of .F90 files")
    return path


@pytest.fixture(scope="session")
def make() -> str:
    return _tool("make")


@pytest.fixture(scope="session")
def cmake() -> str:
    return _tool("cmake")


@pytest.fixture(scope="session")
def mpi() -> str:
    """Open MPI's ``mpirun`` (and its compiler wrappers beside it)."""
    return _tool("mpirun")


@pytest.fixture(scope="session")
def opencl_headers() -> None:
    """The OpenCL headers a C program of the runtime compiles against."""
    if not any(os.path.exists(os.path.join(d, "CL", "cl.h"))
               for d in ("/usr/include", "/usr/local/include")):
        pytest.skip("needs the OpenCL headers (scripts/setup.sh installs them)")


@pytest.fixture(scope="session")
def python_process() -> str:
    """The interpreter, for a test that starts a Python process of its own:
    what only a process shows (the command's re-execution with a fixed hash
    seed, its exit without teardown, signals, the process's own environment
    and standard input, a fresh interpreter's imports and path), or forks
    workers (``-j``, the frontend's parallel parse, ``run_isolated``).  A test of
    what the command writes, says and exits with runs it in the test's
    process instead (``cli_util.f2loopy``)."""
    return sys.executable


@pytest.fixture(scope="session")
def sandbox_process() -> None:
    """A forked child process: the sandbox that runs a transformation script
    or a recipe (``!$loopy`` blocks, ``--transform``, ``apply_recipe``) and
    the one that generates the code of a script's kernels.  Each child costs
    a fork of the test process and its own run (some 0.1 s of CPU); a test
    that only reads a translation made elsewhere needs no child of its own
    (``shared_kernels``)."""


@pytest.fixture(scope="session")
def opencl_device():
    """One OpenCL queue for the whole session (PoCL on CPU in CI)."""
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # pragma: no cover - environment problem
        pytest.skip(f"no OpenCL device: {exc}")
    return cl.CommandQueue(ctx)


@pytest.fixture(scope="session")
def cl_queue(opencl_device):
    """The queue of :func:`opencl_device` (the name the tests grew up with)."""
    return opencl_device

# }}}


# {{{ CPU seconds per tier; the collector (what collection made lives to the end)

def _cpu_s() -> float:
    """CPU seconds of this process and its reaped children (user + system)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


#: CPU seconds of the session's start and collection, then of each tier's
#: tests (setup, call and teardown), printed at the end: ``pytest -m unit``
#: costs collection + unit (README: about a minute), which a whole run (CI)
#: shows too
_CPU = {"collection": 0.0}


def pytest_collection_finish(session):
    """What collection imported and built (f2loopy, fparser's hundreds of
    classes, the test modules, their parameters) lives as long as the
    session: frozen, the collector no longer walks it at every full
    collection; and collections come less often (the thresholds the
    ``f2loopy`` command translates with, f2loopy/cli.py).  Garbage made
    from then on is collected as before."""
    _CPU["collection"] = _cpu_s()
    gc.collect()
    gc.freeze()
    gc.set_threshold(20000, 50, 50)


def pytest_sessionfinish(session):
    """Collect the session's garbage once (finalizers run while pytest still
    records what they raise), then freeze what is left: pytest's own five
    collections at the end (to find exceptions raised in finalizers) then
    walk only what those finalizers made."""
    gc.collect()
    gc.freeze()

# }}}


# {{{ test tiers: `pytest -m unit` is the quick loop (README, "Tests")

#: tiers from cheap to dear: a test's tier is the dearest of what it needs
#: and the tier it is marked with (``slow``, ``codegen``)
_TIERS = {
    "unit": "the translator alone: no compiler, no build tool, no OpenCL device, no "
            "Python process of its own",
    "process": "starts Python processes (the f2loopy command, glue, a fresh interpreter) or "
               "forks the script sandbox's children",
    "codegen": "the shape of the generated code",
    "compiler": "runs gfortran, gcc or the preprocessor (no OpenCL device)",
    "differential": "runs generated kernels on an OpenCL device (against gfortran or numpy)",
    "build": "runs make, cmake or MPI",
    "slow": "fuzzing campaigns and whole-application builds",
}
_RANK = {tier: k for k, tier in enumerate(_TIERS)}
#: the tier each tool fixture puts a test in
_NEEDS = {"gfortran": "compiler", "gcc": "compiler", "preprocessor": "compiler",
          "opencl_headers": "compiler", "opencl_device": "differential",
          "make": "build", "cmake": "build", "mpi": "build", "python_process": "process",
          "sandbox_process": "process"}
#: markers that name a need too (requested as a fixture, so that it skips):
#: the old ones, and ``sandbox`` for one case of a parametrized test
#: (``pytest.param(..., marks=pytest.mark.sandbox)``: a case cannot request
#: a fixture of its own)
_MARKED_NEEDS = {"gfortran": "gfortran", "opencl": "opencl_device", "sandbox": "sandbox_process"}


def pytest_configure(config):
    for tier, text in _TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {text}")
    config.addinivalue_line("markers", "sandbox: needs the sandbox_process fixture")


def _needs(item) -> list[str]:
    names = [f for f in _NEEDS if f in getattr(item, "fixturenames", ())]
    names += [f for m, f in _MARKED_NEEDS.items() if item.get_closest_marker(m)]
    return names


def pytest_collection_modifyitems(config, items):
    """Give every test one tier: the dearest of the tools it needs (its
    fixtures) and the tier it is marked with; a test that needs nothing and
    carries no mark is ``unit``.  A mark cheaper than the needs is an error
    (the tier would not tell the truth)."""
    for item in items:
        marked = [t for t in _TIERS if item.get_closest_marker(t)]
        if len(marked) > 1:
            raise pytest.UsageError(f"{item.nodeid}: marked with tiers {marked}; give one")
        needed = max((_NEEDS[f] for f in _needs(item)), key=_RANK.__getitem__, default="unit")
        if marked and _RANK[marked[0]] < _RANK[needed]:
            raise pytest.UsageError(f"{item.nodeid}: marked {marked[0]} but needs "
                                    f"{', '.join(_needs(item))} ({needed}); drop the mark")
        if not marked:
            item.add_marker(getattr(pytest.mark, needed))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = _cpu_s()
    try:
        return (yield)
    finally:
        tier = next((t for t in _TIERS if item.get_closest_marker(t)), "unit")
        _CPU[tier] = _CPU.get(tier, 0.0) + _cpu_s() - start


def pytest_terminal_summary(terminalreporter):
    if len(_CPU) > 1:
        terminalreporter.write_line(
            "CPU seconds (with children): "
            + ", ".join(f"{k} {v:.1f}" for k, v in _CPU.items())
            + f"; the whole session {_cpu_s():.1f}")


#: programs a unit test must not run (their fixtures above say why a test may)
_TOOLS = ("gfortran", "gcc", "cc", "cpp", "c++", "g++", "gcov", "make", "cmake", "ninja",
          "mpirun", "mpiexec", "mpif90", "mpicc")


@pytest.fixture(scope="session")
def _tool_traps(tmp_path_factory):
    """A folder of stand-ins for :data:`_TOOLS` that record their own name
    and fail, and an empty OpenCL vendor folder (no platform)."""
    folder = tmp_path_factory.mktemp("tool-traps")
    log = folder / "ran.log"
    log.write_text("")
    for tool in _TOOLS:
        trap = folder / tool
        trap.write_text(f"#!/bin/sh\necho {tool} >> '{log}'\n"
                        f"echo 'a unit test ran {tool}: give the test its fixture "
                        f"(tests/conftest.py)' >&2\nexit 127\n")
        trap.chmod(0o755)
    (folder / "no-icd").mkdir()
    return folder, log


@pytest.fixture(autouse=True)
def _tier_tells_the_truth(request, monkeypatch):
    """A unit test that runs a compiler, a build tool or an OpenCL device fails
    (its tier would lie); a test marked ``opencl``/``gfortran`` gets the
    fixture of that need, so it skips where the tool is missing."""
    item = request.node
    for marker, fixture in _MARKED_NEEDS.items():
        if item.get_closest_marker(marker):
            request.getfixturevalue(fixture)
    if not item.get_closest_marker("unit"):
        yield
        return
    folder, log = request.getfixturevalue("_tool_traps")
    if log.stat().st_size:
        log.write_text("")
    ran: list[str] = []
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(folder / "no-icd"))
    monkeypatch.delenv("F2LOOPY_FC", raising=False)
    # a translation cache of the test's own: a script's translation that an
    # earlier test left in the session's cache would hide this test's fork
    # (the cache makes its folder when it first stores)
    cache = os.path.join(_UNIT_CACHES, str(next(_unit_cache_numbers)))
    request.addfinalizer(lambda: os.path.isdir(cache) and shutil.rmtree(cache, True))
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", cache)
    popen_init = subprocess.Popen.__init__
    python = os.path.realpath(sys.executable)

    def guarded_popen(self, args, *rest, **kwargs):
        argv0 = args if isinstance(args, (str, bytes, os.PathLike)) else \
            next(iter(args), "")
        words = os.fsdecode(argv0).split()
        if words and os.path.basename(words[0]) in _TOOLS:
            ran.append(os.path.basename(words[0]))
        elif words and (os.path.basename(words[0]).startswith("python")
                        or os.path.realpath(words[0]) == python):
            ran.append("a Python process")
        popen_init(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded_popen)
    fork = os.fork

    def guarded_fork():
        # the sandbox's children and forked workers (multiprocessing forks
        # through os.fork too); the child itself records nothing
        pid = fork()
        if pid:
            ran.append("a forked process (the script sandbox: sandbox_process; "
                       "other workers: python_process)")
        return pid

    monkeypatch.setattr(os, "fork", guarded_fork)
    cl = sys.modules.get("pyopencl")
    if cl is not None:
        def no_device(*args, **kwargs):
            ran.append("an OpenCL device")
            raise RuntimeError("a unit test asked for an OpenCL device: give it the "
                               "opencl_device fixture (tests/conftest.py)")
        monkeypatch.setattr(cl, "create_some_context", no_device)
        monkeypatch.setattr(cl, "get_platforms", no_device)
    yield
    if log.stat().st_size:
        ran += log.read_text().split()
    if ran:
        pytest.fail(f"unit test ran {', '.join(sorted(set(ran)))}: request the fixture of "
                    "what it needs (tests/conftest.py: gfortran, gcc, preprocessor, make, "
                    "cmake, mpi, opencl_device, python_process, sandbox_process), which also "
                    "gives its tier", pytrace=False)

# }}}
