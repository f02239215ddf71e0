"""The numpy a transformation script sees: arithmetic, never raw memory.

numpy can build an array on any buffer at any offset (``np.ndarray(shape,
dtype, buffer=b, offset=-32)``, ``frombuffer``, ``lib.stride_tricks.as_strided``),
hand out addresses (``ndarray.ctypes``, ``__array_interface__``) and read or
write files (``fromfile``, ``memmap``, ``load``, ``tofile``).  A script gets
a module proxy with none of that:

* functions from an allow-list (:data:`NUMPY_NAMES`), all of which make new
  arrays or bounds-checked views of arrays;
* ``empty``/``empty_like`` that return zeros (uninitialised memory could hold
  what the parent process held);
* ``ndarray`` and ``dtype`` as stand-ins that answer ``isinstance`` and (for
  ``dtype``) build plain numeric dtypes, but cannot wrap a buffer or describe
  a structured, object or void layout;
* the numeric scalar types (``float32`` ...) and ufuncs.

Which attributes of arrays a script may read is decided by
:mod:`~f2loopy.directives.attributes` (``shape``, ``sum``, ``astype`` ...;
never ``ctypes``, ``data``, ``base`` or ``view``).
"""

from __future__ import annotations

import re
import types
from typing import Any, Callable

import numpy as np

NUMPY_NAMES = """
abs absolute add all allclose amax amin any arange arccos arccosh arcsin arcsinh arctan
arctan2 arctanh argmax argmin argsort around array array_equal asarray ascontiguousarray
asfortranarray atleast_1d atleast_2d atleast_3d can_cast cbrt
ceil clip column_stack common_type concatenate conj conjugate copysign cos cosh
count_nonzero cross cumprod cumsum deg2rad diag diagonal diff divide divmod dot dstack
e einsum equal euler_gamma exp exp2 expm1 eye finfo flatnonzero flip fliplr
flipud float_power floor floor_divide fmax fmin fmod full full_like gcd greater
greater_equal hstack hypot identity iinfo imag indices inf inner isclose iscomplexobj
isfinite isinf isnan isreal isscalar issubdtype kron lcm ldexp less less_equal linspace log
log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor logspace matmul max
maximum mean meshgrid min min_scalar_type minimum mod moveaxis multiply nan nanmax
nanmin ndim negative newaxis nextafter nonzero not_equal ones ones_like outer pi
positive power prod promote_types ptp rad2deg ravel ravel_multi_index real reciprocal
remainder repeat reshape result_type rint roll rot90 round searchsorted shape sign signbit
sin sinh size sort split sqrt square squeeze stack std subtract sum swapaxes take tan tanh
tensordot tile trace transpose tril triu true_divide trunc unique unravel_index var vstack
where zeros zeros_like
""".split()

LINALG_NAMES = "cholesky det eig eigh eigvals eigvalsh inv lstsq matrix_rank norm pinv " \
    "qr solve svd".split()

#: scalar types a script may not have (raw bytes, arbitrary objects)
_NO_SCALAR_TYPES = {"void", "object_", "record"}

#: spellings of plain numeric dtypes: 'float32', 'f4', '<f8', 'complex128', 'bool', 'int'
_DTYPE_TEXT_RE = re.compile(r"[<>=|]?(?:[a-z]+[0-9]*|[?bBhHiIlLqQpPefdgFDG][0-9]*)")


def _plain_dtype(dt: np.dtype) -> bool:
    return dt.kind in "biufc" and dt.fields is None and dt.subdtype is None


def safe_dtype(spec=None, *args, **kwargs) -> np.dtype:
    """``np.dtype(spec)`` for a plain numeric type (a scalar type, a name such
    as ``'float32'``, or such a dtype); nothing structured or made of objects."""
    if args or kwargs:
        raise TypeError("np.dtype in a transformation script takes one argument (a numeric "
                        "type such as np.float32 or 'float64')")
    if isinstance(spec, str):
        if not _DTYPE_TEXT_RE.fullmatch(spec):
            raise TypeError(f"np.dtype({spec[:40]!r}): transformation scripts may only use "
                            "plain numeric dtypes")
    elif not (isinstance(spec, np.dtype) or spec in (int, float, complex, bool)
              or isinstance(spec, type) and issubclass(spec, np.generic)):
        raise TypeError(f"np.dtype({type(spec).__name__}): transformation scripts may only "
                        "use plain numeric dtypes")
    dt = np.dtype(spec)
    if not _plain_dtype(dt):
        raise TypeError(f"np.dtype({dt.name}): transformation scripts may only use plain "
                        "numeric dtypes")
    return dt


class _StandIn(type):
    """Metaclass of the stand-ins for ``np.ndarray`` and ``np.dtype``:
    ``isinstance`` and ``issubclass`` answer for the real class; calling
    does what :attr:`make` allows."""

    real: type
    make: Callable[..., Any]

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, cls.real)

    def __call__(cls, *args, **kwargs):
        return cls.make(*args, **kwargs)


def _no_ndarray(*args, **kwargs):
    raise TypeError("np.ndarray(...) is not available in transformation scripts (it can "
                    "wrap raw memory): use np.zeros, np.ones, np.full or np.array")


ndarray = _StandIn("ndarray", (), {"real": np.ndarray, "make": staticmethod(_no_ndarray),
                                   "__module__": "numpy"})
dtype = _StandIn("dtype", (), {"real": np.dtype, "make": staticmethod(safe_dtype),
                               "__module__": "numpy"})


def _zeros_instead(func_name, zeros):
    def safe(*args, **kwargs):
        return zeros(*args, **kwargs)
    safe.__name__ = safe.__qualname__ = func_name
    safe.__doc__ = f"np.{func_name}, returning zeros (no uninitialised memory in scripts)"
    return safe


def numpy_members(module_proxy) -> dict:
    """Members of the script's ``numpy`` (and its ``numpy.linalg``)."""
    members = {}
    for n in NUMPY_NAMES:
        v = getattr(np, n, None)
        if (v is not None or n == "newaxis") and not isinstance(v, types.ModuleType):
            members[n] = v
    for n, v in vars(np).items():
        if n.startswith("_") or n in _NO_SCALAR_TYPES:
            continue
        if isinstance(v, type) and issubclass(v, np.generic) \
                and not issubclass(v, (np.void, np.object_)):
            members[n] = v
        elif isinstance(v, np.ufunc):
            members[n] = v
    members.update(ndarray=ndarray, dtype=dtype,
                   empty=_zeros_instead("empty", np.zeros),
                   empty_like=_zeros_instead("empty_like", np.zeros_like))
    members["linalg"] = module_proxy(
        "numpy.linalg", {n: getattr(np.linalg, n) for n in LINALG_NAMES
                         if hasattr(np.linalg, n)})
    return members
