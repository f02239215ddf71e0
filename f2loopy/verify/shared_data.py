"""Module data, common blocks, saved locals and derived-type arguments in
``f2loopy check``.

A kernel that uses module variables or common blocks gets them as extra
arguments (role :class:`~f2loopy.ir.roles.Stored`); one with a
derived-type dummy argument gets its components, flattened
(role :class:`~f2loopy.ir.roles.Component`).  The input planner draws
values for them like for any argument (by the kernel's names).  Then both
sides are given the same values:

* the original, through its ``bind(c)`` shim (:class:`ShimData`): the shim
  ``use`` s the module (a variable renamed ``f2l_s<k>``) or declares the
  common block, copies the values in before the call and out after it; a
  derived-type argument is a variable of the type (``f2l_d<k>``) whose
  components are copied in and out (an array of the type loops over its
  elements; the extents of every flattened component come as arguments);
* the generated kernel, through its Python glue (:func:`glue_call`): the
  values are set on ``glue.<module>.<variable>`` before the call and read
  back after it; a derived-type argument is an object with the components
  as attributes (``types.SimpleNamespace``), an array of a type a numpy
  structured array.

An allocatable module array (and a module pointer array, which the kernels
only index) is allocated by the shim with the extents the planner chose for
its :class:`~f2loopy.ir.roles.Allocation` arguments and lower bounds 1, as
the Python glue allocates an array assigned to it.

Every written variable is compared, module data included.  A saved local
(``save``) cannot be reached from outside its procedure: both sides start
it from its initial value (the original's first call does), and its value
after the call is not compared; check runs such a kernel a second time on
what the first call left, so that what depends on the saved values is.
"""

from __future__ import annotations

import types

import numpy as np

from f2loopy.glue.module_data import object_name
from f2loopy.ir.kernel import ArrayArg
from f2loopy.ir.roles import (
    Allocation, CommonMember, Component, ModuleVariable, SavedLocal, Stored, is_allocatable)

#: numpy dtype -> Fortran type and iso_c_binding kind
ISO_KIND = {
    "int8": ("integer", "c_int8_t"), "int16": ("integer", "c_int16_t"),
    "int32": ("integer", "c_int32_t"), "int64": ("integer", "c_int64_t"),
    "float32": ("real", "c_float"), "float64": ("real", "c_double"),
    "complex64": ("complex", "c_float_complex"), "complex128": ("complex", "c_double_complex"),
    "bool": ("logical", "4"),
}


def constant_extents(shape) -> tuple[int, ...]:
    """The extents of *shape* as integers (each is a number by the time a
    harness is written: sizes are fixed first; anything else raises)."""
    from typing import SupportsInt, cast
    return tuple(int(cast(SupportsInt, s)) for s in shape)


def _type_decl(dtype) -> str:
    type_name, kind = ISO_KIND[np.dtype(dtype).name]
    return f"{type_name}({kind})"


def is_saved(arg) -> bool:
    return isinstance(arg.role, SavedLocal)


def type_rank(arg) -> int:
    return arg.role.type_rank if isinstance(arg.role, Component) else 0


# {{{ saved locals, shared names

def saved_names(kernels) -> set:
    return {a.name for k in kernels for a in k.args if is_saved(a)}


def with_saved_initial(kernels, inputs: dict) -> dict:
    """*inputs* with every saved local at its initial value (else zero):
    the original starts there, and nothing outside it can set it."""
    out = dict(inputs)
    for k in kernels:
        for a in k.args:
            if is_saved(a) and a.name in out:
                shape = constant_extents(a.shape) if isinstance(a, ArrayArg) else ()
                init = a.role.init
                value = np.zeros(shape, dtype=np.dtype(a.dtype), order="F") if init is None \
                    else np.array(init, dtype=np.dtype(a.dtype), order="F").reshape(
                        shape, order="F")
                out[a.name] = np.asfortranarray(value) if shape else value[()]
    return out


def allocation_given(kernels) -> dict:
    """The values fixed for the :class:`~f2loopy.ir.roles.Allocation`
    arguments of *kernels* other than extents: allocated, and lower bounds 1
    for module arrays (the lower bounds of an allocatable component of a
    derived-type argument are drawn like sizes: kernels index such arrays
    from 0 and below, as the caller allocated them)."""
    components = {a.name for k in kernels for a in k.args
                  if isinstance(a.role, Component) and a.role.allocatable}
    return {a.name: 1 for k in kernels for a in k.args
            if isinstance(a.role, Allocation) and a.role.what != "extent"
            and not (a.role.what == "lbound" and a.role.array in components)}


def labels(kernels) -> dict:
    """Argument name -> ``(spelling, rank of the type)`` for reports: a
    module variable or COMMON member as the glue's ``module.variable``, a
    component of a derived-type argument as ``p%x`` (with the rank of an
    array of the type, whose axes come last in the flattened array)."""
    out = {}
    for k in kernels:
        for a in k.args:
            if isinstance(a.role, Stored):
                out[a.name] = (".".join((object_name(a.role), *a.role.names)), 0)
            elif isinstance(a.role, Component):
                out[a.name] = ("%".join(a.role.path), type_rank(a))
    return out


def share_storage(kernels, state: dict) -> None:
    """Make the arguments of *kernels* that stand for one module variable
    under different names hold the same value (the first name's)."""
    first: dict = {}
    for k in kernels:
        for a in k.storage_args:
            if a.name not in state:
                continue
            key = a.role.key
            if key in first and first[key] != a.name:
                state[a.name] = state[first[key]]
            first.setdefault(key, a.name)

# }}}


# {{{ the original's side: the shim

class ShimData:
    """The parts of a kernel's shim that set module data, common blocks and
    derived-type arguments (see the module docstring).

    :arg names: argument name -> the shim's name for it.
    """

    def __init__(self, kernel, names: dict, private=None):
        self.kernel = kernel
        #: ``private(module, variable)``: whether a 'use' cannot reach it
        self.private = private or (lambda module, var: False)
        self.names = names
        self.uses: list[str] = []
        self.alias_lines: list[str] = []
        #: module -> statements of procedures that must be compiled inside it
        #: (bind(c) accessors of its PRIVATE derived-type variables)
        self.accessors: dict[str, list[str]] = {}
        self.declarations: list[str] = []
        self.copy_in: list[str] = []
        self.copy_out: list[str] = []
        #: argument name -> the shim's names of its extents (component arrays)
        self.extents: dict = {}
        #: derived-type root -> the shim variable passed in its place
        self.roots: dict = {}
        self._storage()
        self._derived()

    @property
    def extent_names(self) -> list[str]:
        return [x for xs in self.extents.values() for x in xs]

    def declared(self, arg) -> str | None:
        """The declaration of argument *arg* in the shim where this class
        decides it (component arrays, module arrays), else None."""
        if arg.name in self.extents:
            return f"{_type_decl(arg.dtype)} :: {self.names[arg.name]}(" + \
                ", ".join(self.extents[arg.name]) + ")"
        if isinstance(arg, ArrayArg) and is_allocatable(arg.role):
            return f"{_type_decl(arg.dtype)} :: {self.names[arg.name]}(" + \
                ", ".join(self._allocation(arg)) + ")"
        if isinstance(arg, ArrayArg) and isinstance(arg.role, Stored):
            return f"{_type_decl(arg.dtype)} :: {self.names[arg.name]}(" + \
                ", ".join(str(n) for n in constant_extents(arg.shape)) + ")"
        return None

    def _allocation(self, arg) -> list[str]:
        """The shim's extents of allocatable module array *arg*: its
        extent arguments (a component of an array of derived type: its own
        constant extents, then the array's, which one component carries)."""
        role = arg.role
        if isinstance(role, ModuleVariable) and role.type_rank:
            carriers = {a.name: a for a in self.kernel.storage_args
                        if isinstance(a.role, ModuleVariable) and a.role.type_rank
                        and a.role.module == role.module and a.role.path[0] == role.path[0]}
            extent = {}
            for a in self.kernel.args:
                if isinstance(a.role, Allocation) and a.role.array in carriers and \
                        a.role.what == "extent":
                    carrier = carriers[a.role.array]
                    own = carrier.ndim - carrier.role.type_rank
                    extent[arg.ndim - arg.role.type_rank + a.role.axis - own] = self.names[a.name]
            own = arg.ndim - role.type_rank
            return [str(int(n)) for n in arg.shape[:own]] + [extent[d] for d in
                                                             range(own, arg.ndim)]
        extent = {a.role.axis: self.names[a.name] for a in self.kernel.args
                  if isinstance(a.role, Allocation) and a.role.array == arg.name
                  and a.role.what == "extent"}
        return [extent[d] for d in range(arg.ndim)]

    def actual(self, arg):
        """What the shim passes for Fortran argument *arg*: the derived-type
        variable for its first component, None for the others."""
        if isinstance(arg.role, Component):
            root = arg.role.root
            if root in self._passed:
                return None
            self._passed.add(root)
            return self.roots[root]
        return self.names[arg.name]

    def reset(self) -> None:
        """Start over with :meth:`actual` (each root is passed once)."""
        self._passed: set = set()

    def interface_declaration(self, arg, dummy: str) -> str | None:
        """The declaration of the derived-type dummy passed for *arg* in an
        interface block of the original, or None for another argument."""
        if not isinstance(arg.role, Component):
            return None
        local, rank = self._type_of[arg.role.root]
        return f"type({local}) :: {dummy}" + (
            "(" + ", ".join("*" if d == rank - 1 else "1" for d in range(rank)) + ")"
            if rank else "")

    def _storage(self):
        k = self.kernel
        renamed: dict = {}
        blocks: dict = {}
        hidden: dict = {}
        allocated: set = set()       # arrays of derived type allocated already
        for a in k.storage_args:
            role = a.role
            if isinstance(role, ModuleVariable) and (len(role.path) > 1 or role.allocatable) \
                    and self.private(role.module, role.path[0]):
                # a component of a PRIVATE derived-type variable, or a PRIVATE
                # allocatable array: neither a 'use' nor a symbol of an
                # interoperable type reaches it
                hidden.setdefault((role.module, role.path[0]), []).append(a)
                continue
            if isinstance(role, ModuleVariable) and role.type_rank:
                self._struct_array_component(a, renamed, allocated)
                continue
            if isinstance(role, ModuleVariable):
                module, var = role.module, role.path[0]
                local = renamed.get((module, var))
                if local is None:
                    local = renamed[(module, var)] = f"f2l_s{len(renamed)}"
                    if len(role.path) == 1 and self.private(module, var):
                        # by its symbol, which a PRIVATE variable has too (a
                        # 'use' cannot reach it): gfortran's __MODULE_MOD_VAR
                        self._alias(local, module, var, a)
                    else:
                        self.uses.append(f"  use {module}, only: {local} => {var}")
                    if role.pointer_root:
                        # a pointer to a derived-type value: given a target
                        self.copy_in.append(f"  if (.not. associated({local})) "
                                            f"allocate({local})")
                target = "%".join((local, *role.path[1:]))
                if isinstance(a, ArrayArg) and role.allocatable:
                    # (a pointer gets a new target; the old one is the caller's)
                    if not role.pointer:
                        self.copy_in.append(f"  if (allocated({target})) deallocate({target})")
                    self.copy_in.append(f"  allocate({target}({', '.join(self._allocation(a))}))")
            elif isinstance(role, CommonMember):
                members = blocks.setdefault(role.block, [])
                target = f"f2l_c{len(blocks) - 1}_{len(members)}"
                members.append(target)
                shape = "" if not isinstance(a, ArrayArg) else \
                    "(" + ", ".join(str(n) for n in constant_extents(a.shape)) + ")"
                self.declarations.append(f"  {_type_decl(a.dtype)} :: {target}{shape}")
            else:
                continue             # a saved local: out of reach (see with_saved_initial)
            self.copy_in.append(f"  {target} = {self.names[a.name]}")
            self.copy_out.append(f"  {self.names[a.name]} = {target}")
        for block, members in blocks.items():
            self.declarations.append(f"  common /{block}/ {', '.join(members)}")
        for (module, var), args in hidden.items():
            self._accessor(module, var, args)

    def _struct_array_component(self, a, renamed: dict, allocated: set) -> None:
        """Copy component *a* of a module array of derived type (rank 1) in
        and out element by element, allocating the array first (once, with
        the drawn extent) if it is allocatable."""
        role = a.role
        module, var = role.module, role.path[0]
        local = renamed.get((module, var))
        if local is None:
            local = renamed[(module, var)] = f"f2l_s{len(renamed)}"
            self.uses.append(f"  use {module}, only: {local} => {var}")
        extents = self._allocation(a) if role.allocatable else \
            [str(int(n)) for n in a.shape]
        if role.allocatable and (module, var) not in allocated:
            allocated.add((module, var))
            self.copy_in.append(f"  if (allocated({local})) deallocate({local})")
            self.copy_in.append(f"  allocate({local}({extents[-1]}))")
        own = a.ndim - role.type_rank
        section = ", ".join([":"] * own + ["f2l_e"])
        element = f"{local}(lbound({local}, 1) + f2l_e - 1)%" + "%".join(role.path[1:])
        mine = self.names[a.name]
        if "  integer :: f2l_e" not in self.declarations:
            self.declarations.append("  integer :: f2l_e")
        head = f"  do f2l_e = 1, {extents[-1]}"
        self.copy_in += [head, f"    {element} = {mine}({section})", "  end do"]
        self.copy_out += [head, f"    {mine}({section}) = {element}", "  end do"]

    def _accessor(self, module: str, var: str, args) -> None:
        """Copy the components *args* of PRIVATE module variable
        *module*::*var* in and out through two bind(c) procedures compiled
        inside the module (:attr:`accessors`), which the shim calls."""
        import hashlib
        digest = hashlib.sha256(f"{self.kernel.name}/{module}/{var}".lower().encode())
        base = f"f2l_acc_{digest.hexdigest()[:16]}"
        dummies = [f"v{j}" for j in range(len(args))]
        decls = []
        extents: list[str] = []          # (allocatable arrays: their extents, by value)
        actual_extents: list[str] = []
        allocations: list[str] = []
        paths = ["%".join((var, *a.role.path[1:])) for a in args]
        ins: list[str] = []
        outs: list[str] = []
        loops: list[str] = []
        for a, d, path in zip(args, dummies, paths, strict=True):
            soa = isinstance(a.role, ModuleVariable) and a.role.type_rank > 0
            if isinstance(a, ArrayArg) and isinstance(a.role, ModuleVariable) and \
                    a.role.allocatable:
                names = [f"{d}_n{x}" for x in range(a.ndim)]
                extents += names
                actual_extents += self._allocation(a)
                shape = "(" + ", ".join(names) + ")"
                pointer = a.role.pointer
                if soa:         # a module array of derived type: allocated once
                    if f"allocate({var}(" not in " ".join(allocations):
                        allocations.append(f"if (allocated({var})) deallocate({var})")
                        allocations.append(f"allocate({var}({names[-1]}))")
                else:
                    allocations.append(f"if ({'associated' if pointer else 'allocated'}"
                                       f"({path})) {'nullify' if pointer else 'deallocate'}"
                                       f"({path})")
                    allocations.append(f"allocate({path}{shape})")
            else:
                shape = "" if not isinstance(a, ArrayArg) else \
                    "(" + ", ".join(str(n) for n in constant_extents(a.shape)) + ")"
            decls.append(f"{_type_decl(a.dtype)} :: {d}{shape}")
            if soa:             # element by element (rank 1)
                own = a.ndim - a.role.type_rank
                section = f"{d}({', '.join([':'] * own + ['f2l_e'])})"
                element = f"{var}(lbound({var}, 1) + f2l_e - 1)%" + "%".join(a.role.path[1:])
                head = f"do f2l_e = 1, size({var})"
                ins += [head, f"  {element} = {section}", "end do"]
                outs += [head, f"  {section} = {element}", "end do"]
                loops = ["integer :: f2l_e"]
            else:
                ins.append(f"{path} = {d}")
                outs.append(f"{d} = {path}")
        if extents:
            decls.insert(0, f"integer(c_int32_t), value :: {', '.join(extents)}")
        actual = ", ".join([self.names[a.name] for a in args] + actual_extents)
        dummies += extents
        self.declarations.append("  interface")
        for way, body in (("in", allocations + ins), ("out", outs)):
            head = f"subroutine {base}_{way}({', '.join(dummies)}) bind(c, name='{base}_{way}')"
            self.accessors.setdefault(module, []).extend(
                [head, "use iso_c_binding", *decls, *loops, *body, "end subroutine"])
            self.declarations += [f"    {head}", "      import",
                                  *(f"      {x}" for x in decls), "    end subroutine"]
            (self.copy_in if way == "in" else self.copy_out).append(
                f"  call {base}_{way}({actual})")
        self.declarations.append("  end interface")

    def _alias(self, local: str, module: str, var: str, arg) -> None:
        """Declare *local* in :attr:`alias_module` as the storage of module
        variable *module*::*var* (a scalar or array of an interoperable type)."""
        if not self.alias_lines:
            self.alias_lines.append("  use iso_c_binding")
        shape = "" if not isinstance(arg, ArrayArg) else \
            "(" + ", ".join(str(n) for n in constant_extents(arg.shape)) + ")"
        self.alias_lines.append(f"  {_type_decl(arg.dtype)}, bind(c, name='__{module}_MOD_"
                                f"{var}') :: {local}{shape}")

    @property
    def alias_module_name(self) -> str:
        import hashlib
        digest = hashlib.sha256(self.kernel.name.lower().encode()).hexdigest()[:12]
        return f"f2l_alias_{digest}"       # (a Fortran name: at most 63 characters)

    @property
    def alias_module(self) -> str:
        """A module (before the shim) declaring the module variables the shim
        reaches by symbol; empty if none."""
        if not self.alias_lines:
            return ""
        name = self.alias_module_name
        return "\n".join([f"module {name}", *self.alias_lines, f"end module {name}", ""])

    def _derived(self):
        self._passed = set()
        self._type_of: dict = {}
        k = self.kernel
        types_: dict = {}
        loops = 0
        parts = [a for a in k.fortran_args if isinstance(a.role, Component)]
        for a in parts:
            module, tname, rank = a.role.type_module, a.role.type_name, a.role.type_rank
            root = a.role.root
            if isinstance(a, ArrayArg):
                self.extents[a.name] = [f"f2l_x{self.names[a.name][5:]}_{d}"
                                        for d in range(a.ndim)]
            if root not in self.roots:
                local = types_.get((module.lower(), tname.lower()))
                if local is None:
                    local = types_[(module.lower(), tname.lower())] = f"f2l_t{len(types_)}"
                    self.uses.append(f"  use {module.lower()}, only: {local} => {tname}")
                var = f"f2l_d{len(self.roots)}"
                self.roots[root] = var
                self._type_of[root] = (local, rank)
                dims = ""
                if rank:
                    dims = "(" + ", ".join(self.extents[a.name][a.ndim - rank:]) + ")"
                self.declarations.append(f"  type({local}) :: {var}{dims}")
                loops = max(loops, rank)
            var = self.roots[root]
            path = "%".join(a.role.path[1:])
            mine = self.names[a.name]
            for place in a.role.pointers:
                # a pointer component of derived type: given a target, once
                target = f"{var}%{'%'.join(a.role.path[1:place + 1])}"
                if f"  allocate({target})" not in self.copy_in:
                    self.copy_in.append(f"  allocate({target})")
            if a.role.allocatable:
                # allocated with the drawn lower bounds (a pointer component
                # gets a new target)
                lower = {d.role.axis: self.names[d.name] for d in k.args
                         if isinstance(d.role, Allocation) and d.role.array == a.name
                         and d.role.what == "lbound"}
                bounds = ", ".join(f"{lower[d]}:{lower[d]} + {x} - 1"
                                   for d, x in enumerate(self.extents[a.name]))
                self.copy_in.append(f"  allocate({var}%{path}({bounds}))")
            if not rank:
                self.copy_in.append(f"  {var}%{path} = {mine}")
                self.copy_out.append(f"  {mine} = {var}%{path}")
                continue
            own = a.ndim - rank if isinstance(a, ArrayArg) else 0
            idx = ", ".join(f"f2l_i{d}" for d in range(rank))
            section = ", ".join([":"] * own + [f"f2l_i{d}" for d in range(rank)])
            heads = [f"  do f2l_i{d} = 1, {self.extents[a.name][own + d]}"
                     for d in reversed(range(rank))]
            tails = ["  end do"] * rank
            self.copy_in += heads + [f"    {var}({idx})%{path} = {mine}({section})"] + tails
            self.copy_out += heads + [f"    {mine}({section}) = {var}({idx})%{path}"] + tails
        if loops:
            self.declarations.append("  integer :: " + ", ".join(f"f2l_i{d}"
                                                                 for d in range(loops)))

# }}}


# {{{ the generated side: the Python glue

def _glue_object(module, role: Stored):
    from f2loopy.codegen.names import py_name
    obj = getattr(module, py_name(object_name(role)))
    path = [py_name(x) for x in role.names]
    soa = isinstance(role, ModuleVariable) and role.type_rank > 0
    for part in path[:-1]:
        if soa and getattr(obj, part, None) is None:
            # an unallocated module array of derived type (or a nested
            # type's part of it): a record of its component arrays (a
            # structure of arrays), which the caller fills in
            setattr(obj, part, types.SimpleNamespace())
        obj = getattr(obj, part)
    return obj, path[-1]


def _structured(members, state):
    """A numpy structured array (Fortran order) holding the flattened
    components *members* (arguments of one array of a derived type)."""
    rank = members[0].role.type_rank
    tree: dict = {}
    type_shape: tuple[int, ...] = ()
    for a in members:
        value = np.asarray(state[a.name])
        own = value.shape[:value.ndim - rank]
        type_shape = value.shape[value.ndim - rank:]
        node = tree
        for part in a.role.path[1:-1]:
            node = node.setdefault(part, {})
        node[a.role.path[-1]] = (np.dtype(a.dtype), own)

    def dtype_of(node):
        return np.dtype([(n, dtype_of(v)) if isinstance(v, dict) else (n, v[0], v[1])
                         for n, v in node.items()])
    arr = np.zeros(type_shape, dtype=dtype_of(tree), order="F")
    for a in members:
        view = _field_view(arr, a)
        value = np.asarray(state[a.name])
        own = value.ndim - rank
        view[...] = value.transpose(list(range(own, value.ndim)) + list(range(own)))
    return arr


def _field_view(arr, a):
    view = arr
    for part in a.role.path[1:]:
        view = view[part]
    return view


def _get_path(obj, path):
    for part in path:
        obj = getattr(obj, part)
    return obj


def glue_call(module, kernel, state: dict):
    """The arguments to pass the glue function of *kernel* for the values
    in *state*, after setting its module variables; and a function that
    puts what the call left in the module objects and derived-type
    arguments back into *state*."""
    from f2loopy.glue.module_data import fortran_parameters
    for a in kernel.storage_args:
        if a.name in state:
            obj, attr = _glue_object(module, a.role)
            setattr(obj, attr, state[a.name])
    roots: dict = {}
    for a in kernel.fortran_args:
        if isinstance(a.role, Component):
            roots.setdefault(a.role.root, []).append(a)
    objects = {}
    for root, members in roots.items():
        if type_rank(members[0]):
            objects[root] = _structured(members, state)
            continue
        top = types.SimpleNamespace()
        for a in members:
            node = top
            for part in a.role.path[1:-1]:
                if not hasattr(node, part):
                    setattr(node, part, types.SimpleNamespace())
                node = getattr(node, part)
            value = state[a.name]
            if a.role.allocatable:       # (array, lower bounds), as drawn
                lower = sorted((d.role.axis, d.name) for d in kernel.args
                               if isinstance(d.role, Allocation) and d.role.array == a.name
                               and d.role.what == "lbound")
                value = (value, tuple(int(state[n]) for _, n in lower))
            setattr(node, a.role.path[-1], value)
        objects[root] = top
    args = [objects[n] if n in objects else state[n] for n in fortran_parameters(kernel)]

    def collect():
        for a in kernel.storage_args:
            if a.name in state:
                obj, attr = _glue_object(module, a.role)
                state[a.name] = getattr(obj, attr)
        for root, members in roots.items():
            for a in members:
                if type_rank(a):
                    view = _field_view(objects[root], a)
                    back = list(range(type_rank(a), view.ndim)) + list(range(type_rank(a)))
                    state[a.name] = np.asfortranarray(view.transpose(back))
                else:
                    state[a.name] = _get_path(objects[root], a.role.path[1:])
                    if a.role.allocatable and isinstance(state[a.name], tuple):
                        state[a.name] = state[a.name][0]
    return args, collect


def hidden_outputs(kernel) -> set:
    """Names of the scalars the glue of *kernel* does not return (module
    variables and components: it stores them)."""
    return {a.name for a in kernel.args if isinstance(a.role, (Stored, Component))}

# }}}


__all__ = ["ISO_KIND", "ShimData", "glue_call", "hidden_outputs", "is_saved", "labels", "saved_names", "share_storage", "type_rank", "with_saved_initial"]

