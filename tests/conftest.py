import atexit
import os
import shutil
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


@pytest.fixture(scope="session")
def cl_queue():
    """One OpenCL queue for the whole session (PoCL on CPU in CI)."""
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # pragma: no cover - environment problem
        pytest.skip(f"no OpenCL device: {exc}")
    return cl.CommandQueue(ctx)


# {{{ test tiers: `pytest -m unit` is the quick loop (README, "Tests")

#: modules whose tests compare generated kernels with gfortran or run them on OpenCL
_DIFFERENTIAL_MODULES = {
    "test_differential_arrays", "test_differential_core", "test_differential_coverage",
    "test_differential_statements", "test_fortran_glue", "test_fortran_glue_transformed",
    "test_check", "test_regressions", "test_samples", "test_runtime", "test_glue",
    "test_floopy", "test_numa_volume",
}
#: modules of generated-code shape tests
_CODEGEN_MODULES = {"test_codegen_shape"}
#: modules that take minutes (fuzzing campaigns, whole-application builds)
_SLOW_MODULES = {"test_fuzz_hostile", "test_fuzz_differential", "test_heat_app", "test_build"}
_TIERS = ("unit", "codegen", "differential", "slow")


def pytest_configure(config):
    for tier, text in (("unit", "fast tests of the translator alone (no OpenCL device, no gfortran)"),
                       ("codegen", "shape of the generated code"),
                       ("differential", "generated kernels run on OpenCL against gfortran or numpy"),
                       ("slow", "fuzzing campaigns and whole-application builds")):
        config.addinivalue_line("markers", f"{tier}: {text}")


def pytest_collection_modifyitems(config, items):
    """Give every test one tier: a marker it carries, else its module's, else
    ``differential`` when it runs kernels (the ``cl_queue`` fixture or an
    ``opencl``/``gfortran`` marker), else ``unit``."""
    for item in items:
        if any(item.get_closest_marker(t) for t in _TIERS):
            continue
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if module in _SLOW_MODULES:
            tier = "slow"
        elif module in _CODEGEN_MODULES:
            tier = "codegen"
        elif (module in _DIFFERENTIAL_MODULES or "cl_queue" in item.fixturenames
              or item.get_closest_marker("opencl") or item.get_closest_marker("gfortran")):
            tier = "differential"
        else:
            tier = "unit"
        item.add_marker(getattr(pytest.mark, tier))

# }}}
