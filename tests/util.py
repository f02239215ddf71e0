"""Shared helpers for the tests: translate, load the glue, run against gfortran."""

from __future__ import annotations

import copy
import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import translate_text, write_outputs
from f2loopy.verify.compare import Tolerance, compare

run_counter = itertools.count()

needs_gfortran = pytest.mark.usefixtures("gfortran")


def translate_and_load(source: str, tmp_path: Path, *, defines=None, transform=None,
                       filename="kernel.f90"):
    """Translate *source* into *tmp_path* and import the generated glue module."""
    stem = f"{Path(filename).stem}{next(run_counter)}"
    path = Path(tmp_path) / f"{stem}{Path(filename).suffix}"
    path.write_text(source)
    result = translate_text(source, path, defines=defines, transform=transform)
    write_outputs(result.outputs)
    glue = Path(tmp_path) / f"{stem}_cl.py"
    spec = importlib.util.spec_from_file_location(f"{stem}_cl", glue)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, result


def fortran_reference(source: str, filename="kernel.f90"):
    from f2loopy.verify.fortran import FortranLibrary
    tu = parse_fortran(source, filename)
    return FortranLibrary(source, tu.kernels, filename=filename)


def run_both(source: str, name: str, args: list, tmp_path, queue, *, rtol=None,
             ulps=None, defines=None, filename="kernel.f90", module=None, reference=None):
    """Run subroutine *name* through gfortran and through f2loopy+OpenCL on
    copies of *args*; assert every array and scalar output matches."""
    ref = reference or fortran_reference(source, filename)
    ref_args = copy.deepcopy(args)
    ref_out = ref.call(name, ref_args)
    if module is None:
        module, _ = translate_and_load(source, tmp_path, defines=defines, filename=filename)
    cl_args = copy.deepcopy(args)
    returned = getattr(module, name)(*cl_args, queue=queue)
    kernel = parse_fortran(source, filename)[name]
    ret_list = list(returned) if isinstance(returned, tuple) else (
        [] if returned is None else [returned])
    problems = []
    ret_iter = iter(ret_list)
    from f2loopy.codegen import generate_code
    gk = generate_code(kernel)
    # (the kernel's own arguments come first; extents of assumed-shape arrays and
    # module data follow, which neither side passes)
    for ka, r_val, c_val in zip(gk.arguments, ref_out, cl_args, strict=False):
        if ka.kind == "array":
            tol = Tolerance.for_dtype(ka.dtype, rtol=rtol, ulps=ulps)
            m = compare(ka.name, c_val, r_val, tol, lower_bounds=ka.ir_arg.lower_bounds)
        elif ka.kind == "scalar_ref":
            got = next(ret_iter)
            m = compare(ka.name, got, r_val, Tolerance.for_dtype(ka.dtype, rtol=rtol, ulps=ulps))
        else:
            continue
        if m is not None:
            problems.append(str(m))
    assert not problems, "\n".join(problems)
    return cl_args, ref_args


def run_case(case, tmp_path, queue):
    """:func:`run_both` on a differential case ``(source, make_args, subroutine
    or None for the first, filename, options)``."""
    source, make_args, sub, filename, kw = case
    if sub is None:
        sub = parse_fortran(source, filename).kernels[0].name
    run_both(source, sub, make_args(), tmp_path, queue, filename=filename, **kw)


def zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype, order="F")


def ints(shape, low, high, seed):
    return farray(shape, np.int32, seed=seed, low=low, high=high)


def farray(shape, dtype=np.float32, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        a = rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    else:
        a = rng.uniform(low, high, size=shape).astype(dtype)
    return np.asfortranarray(a)


def load_kernels(kernels, tmp_path, stem=None):
    """Generate code for (transformed) IR *kernels* and import their glue."""
    from f2loopy.codegen import generate_code, join_program
    from f2loopy.glue.python import generate_python_glue
    if not isinstance(kernels, (list, tuple)):
        kernels = [kernels]
    stem = stem or f"k{next(run_counter)}"
    gks = [generate_code(k) for k in kernels]
    program = join_program(gks)
    (Path(tmp_path) / f"{stem}.cl").write_text(program)
    glue = Path(tmp_path) / f"{stem}_cl.py"
    glue.write_text(generate_python_glue(gks, program, f"{stem}.cl", "test.f90"))
    spec = importlib.util.spec_from_file_location(f"{stem}_cl", glue)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_transformed(source, name, transform, args, tmp_path, queue, **kw):
    """Compare gfortran on *source* with the OpenCL of ``transform(kernel)``."""
    kernel = parse_fortran(source, "test.f90")[name]
    module = load_kernels(transform(kernel), tmp_path)
    return run_both(source, name, args, tmp_path, queue, module=module, **kw)
