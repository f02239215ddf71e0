"""Module variables in the Python glue: ``glue.<module>.<variable>``.

For every Fortran module whose variables a kernel of the file uses, the glue
module has an object named like the module (lower case) whose attributes are
those variables: numpy arrays in Fortran order of the declared dtype and
shape, and scalars as numpy scalars.  They start from the module's
initialisers (else zero) and persist across calls; a kernel receives them as
extra arguments and its writes update them (arrays in place, scalars by
setting the attribute).  An attribute may be replaced by the user (a new
array of the same dtype and shape, a pyopencl array to keep it on the
device, or a number); the kernel checks it like any argument.
"""

from __future__ import annotations

import re

import numpy as np

from f2loopy.codegen.names import py_name
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.roles import (
    Allocation, CommonMember, Component, ModuleVariable, SavedLocal, Stored, has_allocation,
    is_allocatable)

#: names the glue module defines at its top level besides the kernels
_GLUE_NAMES = {"os", "threading", "np", "cl", "CL_FILE", "CL_SHA256", "KernelArgumentError"}

_IDENT = re.compile(r"[a-z][a-z0-9_]*")

MODULE_DATA_RUNTIME = '''

class ModuleData:
    """The variables of a Fortran module (or the members of a common block)
    that the kernels use, as attributes."""

    def __init__(self, what, **values):
        self.__dict__["_what"] = what
        self.__dict__.update(values)

    def __setattr__(self, key, value):
        if key not in self.__dict__:
            raise AttributeError(f"{self._what} has no variable '{key}' used by these "
                                 "kernels")
        self.__dict__[key] = value

    def __repr__(self):
        names = ", ".join(k for k in self.__dict__ if not k.startswith("_"))
        return f"<Fortran {self._what}: {names}>"


def _record(**components):
    """A derived-type value: an object with attributes named like its components."""
    import types
    return types.SimpleNamespace(**components)


def _attribute(obj, part):
    """The attribute of *obj* for Fortran component *part* (as declared, or in
    lower or upper case: Fortran names ignore case) and its spelling."""
    for spelling in (part, part.lower(), part.upper()):
        if hasattr(obj, spelling):
            return getattr(obj, spelling), spelling
    raise AttributeError(part)


def _component(fn, name, value, path):
    """Component *path* (names) of argument *name*, an object with attributes."""
    for k, part in enumerate(path):
        try:
            value, _ = _attribute(value, part)
        except AttributeError:
            raise KernelArgumentError(f"{fn}: argument '{name}' has no component "
                                      f"'{'%'.join((name,) + path[:k + 1])}' (pass an object "
                                      "with attributes named like the type's components)"
                                      ) from None
    return value


def _set_component(fn, name, value, path, new):
    owner = _component(fn, name, value, path[:-1])
    try:
        _, spelling = _attribute(owner, path[-1])
    except AttributeError:
        spelling = path[-1]
    setattr(owner, spelling, new)


def _field(fn, name, value, path, rank, dtype):
    """The component *path* of structured array *value* (an array of a derived
    type of rank *rank*) as a Fortran-ordered array with the component's axes
    first, and a function that writes a changed copy back."""
    if not isinstance(value, np.ndarray) or value.dtype.names is None:
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a numpy structured "
                                  f"array (an array of a derived type), got "
                                  f"{type(value).__name__}")
    if value.ndim != rank:
        raise KernelArgumentError(f"{fn}: argument '{name}' must have {rank} dimension(s), "
                                  f"got {value.ndim}")
    view = value
    for k, part in enumerate(path):
        names = view.dtype.names or ()
        match = [n for n in names if n.lower() == part.lower()]
        if not match:
            raise KernelArgumentError(f"{fn}: argument '{name}' has no field "
                                      f"'{'%'.join((name,) + path[:k + 1])}' (its dtype has "
                                      f"{', '.join(names) or 'no fields'})")
        view = view[match[0]]
    if view.dtype != np.dtype(dtype):
        raise KernelArgumentError(f"{fn}: field '{'%'.join((name,) + path)}' of argument "
                                  f"'{name}' must have dtype {np.dtype(dtype).name}, got "
                                  f"{view.dtype}")
    order = list(range(rank, view.ndim)) + list(range(rank))
    copy = np.asfortranarray(view.transpose(order))

    def write_back():
        view[...] = copy.transpose(np.argsort(order))
    return copy, write_back


def _initial(dtype, shape, data):
    dtype = np.dtype(dtype)
    if data is None:
        value = np.zeros(shape, dtype=dtype, order="F")
    else:
        value = np.frombuffer(bytes.fromhex(data), dtype=dtype).reshape(shape, order="F")
        value = np.array(value, order="F")
    return value if shape else value[()]
'''


ALLOCATABLE_RUNTIME = '''

def _allocation(fn, what, value, dtype, rank):
    """An allocatable array *value* (None: unallocated; a pair ``(array,
    lower bounds)`` for lower bounds other than 1) as the kernel takes it:
    ``(array, extents, lower bounds, allocated flag)``."""
    if value is None:
        return np.zeros((0,) * rank, dtype=dtype, order="F"), (0,) * rank, (1,) * rank, 0
    lower = (1,) * rank
    if isinstance(value, tuple):
        if len(value) != 2 or not isinstance(value[1], (tuple, list)) or \
                len(value[1]) != rank or \
                not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool)
                        and abs(int(b)) <= np.iinfo(np.int32).max for b in value[1]):
            raise KernelArgumentError(f"{fn}: allocatable {what} given as a tuple must be "
                                      f"(array, lower bounds) with {rank} integer lower "
                                      "bound(s)")
        value, lower = value[0], tuple(int(b) for b in value[1])
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple):
        raise KernelArgumentError(f"{fn}: allocatable {what} must be None (unallocated) or a "
                                  f"numpy or pyopencl array, got {type(value).__name__}")
    if len(shape) != rank:
        raise KernelArgumentError(f"{fn}: allocatable {what} must have {rank} dimension(s) "
                                  f"as declared in Fortran, got {len(shape)}")
    if any(n > np.iinfo(np.int32).max for n in shape):
        raise KernelArgumentError(f"{fn}: allocatable {what} is too large (an extent does "
                                  "not fit in int32)")
    if any(lb + int(n) - 1 > np.iinfo(np.int32).max for lb, n in zip(lower, shape)):
        raise KernelArgumentError(f"{fn}: allocatable {what} is too large (an upper bound does "
                                  "not fit in int32)")
    return value, tuple(int(n) for n in shape), lower, 1
'''


SOA_RUNTIME = '''

def _soa(fn, what, value, path, rank, dtype, own, allocatable):
    """Component *path* of the module array of derived type *value* (the glue
    attribute *what*) as the kernel takes it (its own axes first, then the
    array's), and a function that writes the kernel's changes back (None:
    the kernel works on the array itself); ``(None, None)`` while an
    allocatable one is unallocated.  *value* is an object with the
    components as attributes (a structure of arrays: numpy or pyopencl
    arrays of shape own + the array's) or a numpy structured array of the
    array's shape (fields named like the components)."""
    if value is None:
        if allocatable:
            return None, None
        raise KernelArgumentError(f"{fn}: {what} must be an object with the components as "
                                  "attributes or a numpy structured array, got None")
    spelled = "%".join(path)
    back = None
    if isinstance(value, np.ndarray) and value.dtype.names is not None:
        array, back = _field(fn, what, value, path, rank, dtype)
    else:
        array = _component(fn, what, value, path)
        if array is None:
            raise KernelArgumentError(f"{fn}: component {spelled} of {what} is None (give every "
                                      f"component an array, or set {what} to None)")
    shape = getattr(array, "shape", None)
    if not isinstance(shape, tuple) or len(shape) != len(own) + rank or \
            tuple(shape[:len(own)]) != tuple(own):
        raise KernelArgumentError(f"{fn}: component {spelled} of {what} must be an array of "
                                  f"shape {tuple(own)} followed by the {rank} extent(s) of the "
                                  f"array of derived type, got "
                                  f"{shape if isinstance(shape, tuple) else type(array).__name__}")
    return array, back


def _soa_allocation(fn, what, value, dtype, own, rank):
    """``(array, extents, lower bounds, allocated flag)`` of a component
    (None: unallocated) of an allocatable module array of derived type."""
    if value is None:
        shape = tuple(own) + (0,) * rank
        return np.zeros(shape, dtype=dtype, order="F"), shape, (1,) * len(shape), 0
    return _allocation(fn, what, value, dtype, len(own) + rank)
'''


def _own_shape(a) -> tuple:
    """The constant extents of the own axes of component *a* of a module
    array of derived type."""
    return tuple(int(s) for s in a.shape[:a.ndim - a.role.type_rank])


def _is_soa(a) -> bool:
    return isinstance(a.role, ModuleVariable) and a.role.type_rank > 0


def allocation_reads(k) -> list[str]:
    """Lines of a glue function that take the extents, lower bounds and
    allocation flags of the allocatable module arrays of kernel *k* (their
    :class:`~f2loopy.ir.roles.Allocation` arguments) from the arrays."""
    out = []
    dope = [a for a in k.args if isinstance(a.role, Allocation)]
    for a in k.args:
        if not has_allocation(a.role):
            continue
        v = py_name(a.name)
        if isinstance(a.role, Component):
            what = f"component {'%'.join(a.role.path)}"
        else:
            what = ".".join((a.role.owner, *a.role.names))
        if _is_soa(a):
            out.append(f"    {v}, _{v}_n, _{v}_lb, _{v}_alloc = _soa_allocation({k.name!r}, "
                       f"{what!r}, {v}, np.{np.dtype(a.dtype).name}, {_own_shape(a)!r}, "
                       f"{a.role.type_rank})")
        else:
            out.append(f"    {v}, _{v}_n, _{v}_lb, _{v}_alloc = _allocation({k.name!r}, "
                       f"{what!r}, {v}, np.{np.dtype(a.dtype).name}, {a.ndim})")
        for d in dope:
            r = d.role
            if r.array == a.name:
                source = {"extent": f"_{v}_n[{r.axis}]", "lbound": f"_{v}_lb[{r.axis}]",
                          "allocated": f"_{v}_alloc"}[r.what]
                out.append(f"    {py_name(d.name)} = {source}")
    return out


def modules_used(kernels) -> dict:
    """module name -> {variable: storage argument} over the IR *kernels*."""
    out: dict = {}
    blocks: dict = {}
    for k in kernels:
        for a in k.storage_args:
            role = a.role
            if not isinstance(role, CommonMember):
                continue
            layout = [m.role.member for m in k.storage_args
                      if isinstance(m.role, CommonMember) and m.role.block == role.block]
            seen = blocks.setdefault(role.block, (k.name, layout))
            if seen[1] != layout:
                raise CodegenError(f"common block /{role.block}/ has members "
                                   f"{', '.join(seen[1])} in '{seen[0]}' but "
                                   f"{', '.join(layout)} in '{k.name}' (the glue exposes "
                                   "them by name: use the same names everywhere)", k.span)
    used = {object_name(a.role) for k in kernels for a in k.storage_args}
    for k in kernels:
        # the other variables of the modules whose variables a kernel uses
        # (not passed: no kernel uses them) are exposed too
        extra = [a for a in k.module_data if object_name(a.role) in used]
        for a in list(k.storage_args) + extra:
            module, var = object_name(a.role), a.role.names
            seen = out.setdefault(module, {}).get(var)
            if seen is not None and (np.dtype(seen.dtype) != np.dtype(a.dtype)
                                     or _layout_key(seen) != _layout_key(a)):
                raise CodegenError(f"module variable {module}::{var} has different types in "
                                   "the kernels of this file", a.span)
            out[module][var] = a
    return out


def _layout_key(a) -> tuple:
    """What must agree between two kernels' views of one module variable
    (an allocatable array's run-time extents have per-kernel names)."""
    if isinstance(a.role, ModuleVariable) and a.role.allocatable:
        return ("allocatable", a.ndim)
    return tuple(a.shape)


def object_name(role: Stored) -> str:
    """The name of the glue object holding the data of *role*: the module's or
    common block's name, ``<procedure>_save`` for the saved locals of a procedure."""
    return role.owner + "_save" if isinstance(role, SavedLocal) else role.owner


def python_module_objects(kernels) -> str:
    """Definitions of the module-data objects of *kernels* (empty if none)."""
    modules = modules_used(kernels)
    if not modules and not any(isinstance(a.role, Component) for k in kernels
                               for a in k.args):
        return ""
    taken = _GLUE_NAMES | {py_name(k.name) for k in kernels}
    lines = [MODULE_DATA_RUNTIME, ""]
    if any(is_allocatable(a.role) for m in modules.values() for a in m.values()) or \
            any(has_allocation(a.role) for k in kernels for a in k.args):
        lines[1:1] = [ALLOCATABLE_RUNTIME]
    if any(_is_soa(a) for m in modules.values() for a in m.values()):
        lines[1:1] = [SOA_RUNTIME]
    for module in sorted(modules):
        if not _IDENT.fullmatch(module):
            raise CodegenError(f"module name '{module}' cannot be a Python name")
        if not all(_IDENT.fullmatch(x) for path in modules[module] for x in path):
            raise CodegenError(f"a variable of module '{module}' cannot be a Python name")
        if module in taken:
            raise CodegenError(f"module '{module}' has the name of a function or variable of "
                               "the Python glue; rename it")
        kinds = {a.role.kind for a in modules[module].values()}
        if len(kinds) > 1:
            raise CodegenError(f"'{module}' is both a module and a common block; rename one")
        what = {"module": f"module {module}", "common": f"common /{module}/",
                "save": f"saved variables of {module[:-len('_save')]}"}[kinds.pop()]
        tree: dict = {}
        for path, a in modules[module].items():
            node = tree
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = a
        lines.append(f"{py_name(module)} = ModuleData({what!r},")
        lines += _values(tree, 1)
        lines.append(")")
    return "\n".join(lines) + "\n"


def _values(tree: dict, depth: int) -> list[str]:
    """``name=value,`` lines of the initial values in *tree* (nested dicts of
    storage arguments: derived-type variables become records)."""
    pad = "    " * depth
    out = []
    for name in sorted(tree):
        a = tree[name]
        if isinstance(a, dict) and depth == 1 and any(
                _is_soa(x) and is_allocatable(x.role) for x in _tree_leaves(a)):
            out.append(f"{pad}{py_name(name)}=None,")     # an unallocated array of a type
            continue
        if isinstance(a, dict):
            out.append(f"{pad}{py_name(name)}=_record(")
            out += _values(a, depth + 1)
            out.append(f"{pad}),")
            continue
        if is_allocatable(a.role):
            out.append(f"{pad}{py_name(name)}=None,")
            continue
        dtype = np.dtype(a.dtype)
        shape = tuple(int(s) for s in a.shape)
        data = None
        if a.role.init is not None:
            data = np.asarray(a.role.init, dtype=dtype).reshape(-1, order="F") \
                .tobytes().hex()
        out.append(f"{pad}{py_name(name)}=_initial({dtype.name!r}, {shape!r}, {data!r}),")
    return out


def _tree_leaves(tree: dict):
    for value in tree.values():
        if isinstance(value, dict):
            yield from _tree_leaves(value)
        else:
            yield value


def _attribute_path(a) -> str:
    return ".".join(py_name(x) for x in (object_name(a.role), *a.role.names))


def storage_reads(k) -> list[str]:
    """Lines of a glue function that fetch the module variables of kernel *k*."""
    out = []
    for a in k.storage_args:
        v = py_name(a.name)
        if _is_soa(a):
            role = a.role
            root = ".".join(py_name(x) for x in (object_name(role), role.path[0]))
            out.append(f"    {v}, _{v}_field = _soa({k.name!r}, {root!r}, {root}, "
                       f"{role.path[1:]!r}, {role.type_rank}, np.{np.dtype(a.dtype).name}, "
                       f"{_own_shape(a)!r}, {role.allocatable})")
            continue
        out.append(f"    {v} = {_attribute_path(a)}")
    return out


def storage_writes(k, written: set) -> list[str]:
    """Lines that store the scalar module variables kernel *k* wrote (their
    one-element buffers ``_NAME_host``) back into the module objects."""
    return [f"    {_attribute_path(a)} = _{py_name(a.name)}_host[0]"
            for a in k.storage_args if not a.shape and a.name in written]


def fortran_parameters(k) -> list[str]:
    """The names of the Fortran arguments of *k*: a derived-type argument once,
    in place of its flattened components."""
    out = []
    for a in k.fortran_args:
        name = a.role.root if isinstance(a.role, Component) else a.name
        if name not in out:
            out.append(name)
    return out


def component_reads(k) -> list[str]:
    """Lines that take the components of derived-type arguments from the
    objects passed."""
    out = []
    for a in k.fortran_args:
        if isinstance(a.role, Component):
            root, path = a.role.root, a.role.path[1:]
            rank = a.role.type_rank
            if rank:
                out.append(f"    {py_name(a.name)}, {py_name(a.name)}_field = _field("
                           f"{k.name!r}, {root!r}, {py_name(root)}, {path!r}, {rank}, "
                           f"np.{np.dtype(a.dtype).name})")
            else:
                out.append(f"    {py_name(a.name)} = _component({k.name!r}, {root!r}, "
                           f"{py_name(root)}, {path!r})")
    return out


def component_writes(k, written: set) -> list[str]:
    """Lines that set the scalar components the kernel wrote on the objects."""
    out = []
    for a in k.storage_args:
        if _is_soa(a) and a.name in written:     # a field of a structured array
            v = py_name(a.name)
            out.append(f"    if _{v}_field is not None:")
            out.append(f"        _{v}_field()")
    for a in k.fortran_args:
        role = a.role
        if isinstance(role, Component) and role.type_rank:
            if a.name in written:           # a field of an array of derived type
                out.append(f"    {py_name(a.name)}_field()")
            continue
        if isinstance(role, Component) and not a.shape and a.name in written:
            root, path = role.root, role.path[1:]
            out.append(f"    _set_component({k.name!r}, {root!r}, {py_name(root)}, {path!r}, "
                       f"_{py_name(a.name)}_host[0])")
    return out
