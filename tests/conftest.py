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


@pytest.fixture(scope="session")
def cl_queue():
    """One OpenCL queue for the whole session (PoCL on CPU in CI)."""
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # pragma: no cover - environment problem
        pytest.skip(f"no OpenCL device: {exc}")
    return cl.CommandQueue(ctx)
