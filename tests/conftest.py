import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session")
def cl_queue():
    """One OpenCL queue for the whole session (PoCL on CPU in CI)."""
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # pragma: no cover - environment problem
        pytest.skip(f"no OpenCL device: {exc}")
    return cl.CommandQueue(ctx)
