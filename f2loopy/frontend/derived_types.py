"""Derived types: definitions, and variables flattened into their components.

A ``type t ... end type`` definition (in a module or a procedure) becomes a
:class:`TypeDef`.  A variable of such a type (a dummy argument, a local, or a
module variable as in IFS's ``use yoecldp, only: yrecldp``) is flattened:
every component, nested types included, becomes a symbol of its own (named
``p_a``, ``p_q_x``... with a fresh name) reachable as ``p%a``; kernels see
these flattened components.  A dummy argument's components become kernel
arguments that remember their path (role :class:`~f2loopy.ir.roles.Component`),
so the host glue can take the object and pass its components.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.constant_arrays import initializer_values, reshaped_initializer


@dataclass(eq=False)
class Component:
    name: str
    dtype: np.dtype | None = None
    shape: tuple = ()
    lbs: tuple = ()
    init: object = None               # numpy value or None
    type: "TypeDef | None" = None      # a nested derived type
    #: "allocatable" or "pointer" for an array component of deferred shape
    #: (``real(8), allocatable :: data(:,:)``): its rank is ``len(shape)``,
    #: its extents and lower bounds are known only at run time; "pointer"
    #: with :attr:`type` for a scalar pointer of derived type (``type(grid_type),
    #: pointer :: grid``: see :mod:`f2loopy.frontend.pointer_components`)
    deferred: str | None = None
    #: why a kernel cannot use the component (``type(c_ptr) :: device_ptr``
    #: of a field type): raised where a kernel uses it, so that the type's
    #: other components stay usable
    error: FortranError | None = None


@dataclass(eq=False)
class TypeDef:
    name: str
    module: str | None                 # the module that defines it (None: a procedure)
    components: list = field(default_factory=list)
    error: FortranError | None = None  # why the definition cannot be used
    #: the types it extends, nearest first (lower case): ``x%parent%c`` is ``x%c``
    parents: tuple = ()
    #: type-bound operators: ``"+"`` (lower case, ``.dot.`` for a defined one)
    #: -> the names of the procedures bound (``generic :: operator(+) => add``)
    operators: dict = field(default_factory=dict)


def read_type_definition(reader, node) -> TypeDef:
    """The :class:`TypeDef` of a ``Derived_Type_Def`` *node* read by *reader*."""
    stmt = node.children[0]
    name = str(stmt.items[1])
    module = reader.module_name if reader.in_module else None
    tdef = TypeDef(name, module)
    seen: set[str] = set()
    for attr in (stmt.items[0].items if stmt.items[0] is not None else ()):
        parent = _type_attribute(reader, attr, name)
        if parent is not None:            # extends(parent): its components come first
            tdef.components.extend(parent.components)
            tdef.parents = (parent.name.lower(), *parent.parents)
            tdef.operators = {k: list(v) for k, v in parent.operators.items()}
            seen.update(c.name.lower() for c in parent.components)
    for part in node.children[1:]:
        if isinstance(part, (F.End_Type_Stmt, F.Sequence_Stmt)):
            continue
        if isinstance(part, F.Type_Bound_Procedure_Part):
            _check_bindings(reader, part, name)
            tdef.operators = _bound_operators(part, tdef.operators)
            continue
        if not isinstance(part, F.Component_Part):
            raise reader.error(f"'{str(part).split()[0].lower()}' in a type definition is not "
                               "supported", None, UnsupportedFeatureError)
        for comp_stmt in part.children:
            if isinstance(comp_stmt, F.Proc_Component_Def_Stmt):
                comps = _procedure_components(reader, comp_stmt, name)
            elif not isinstance(comp_stmt, F.Data_Component_Def_Stmt):
                raise reader.error("only data components are supported in a type "
                                   "definition", None, UnsupportedFeatureError)
            else:
                try:
                    comps = list(_components(reader, comp_stmt))
                except UnsupportedFeatureError as exc:
                    # an error where a kernel uses these components (a device
                    # pointer of a field type must not block its data)
                    comps = [Component(str(decl.items[0]), error=exc)
                             for decl in comp_stmt.items[2].items]
            for comp in comps:
                if comp.name.lower() in seen:
                    raise reader.error(f"component '{comp.name}' of type '{name}' is declared "
                                       "twice", comp.name)
                seen.add(comp.name.lower())
                tdef.components.append(comp)
    return tdef


def _procedure_components(reader, stmt, type_name: str) -> list:
    """The procedure pointer components of *stmt* (``procedure(iface),
    pointer, nopass :: read_c``), which a kernel cannot call: each an error
    where a kernel uses it, the type's data components stay usable."""
    from f2loopy.frontend.source import statement_lines
    reader.lines = statement_lines(stmt)
    names = [str(d) if isinstance(d, F.Name) else str(d.items[0])
             for d in stmt.items[2].items]
    exc = reader.error(f"procedure pointer component '{names[0]}' of type '{type_name}' cannot "
                       "be used in a kernel (a kernel calls no procedure pointers: call the "
                       "procedure itself)", names[0], UnsupportedFeatureError)
    return [Component(n, error=exc) for n in names]


def _check_bindings(reader, part, name) -> None:
    """The type-bound procedures of type *name* (``procedure :: add``,
    ``generic :: operator(+) => add``) change nothing a kernel sees of its
    components: a kernel that calls one, or applies a type-bound operator or
    assignment to a whole value, is refused there (no such component; whole
    derived-type values are not supported).  A ``final`` procedure would run
    when a variable of the type goes away, which a kernel would not do: refused."""
    for binding in part.children:
        if isinstance(binding, F.Final_Binding):
            from f2loopy.frontend.source import statement_lines
            reader.lines = statement_lines(binding)
            raise reader.error(f"type '{name}' has a final procedure, which a kernel would not "
                               "call (finalisation is not supported)", "final",
                               UnsupportedFeatureError)


def operator_key(spec) -> str | None:
    """``"+"``, ``".dot."``... of ``operator(+)`` *spec* (a ``Generic_Spec``;
    ``.eq.`` is ``==`` and so on), or None for anything else."""
    if not isinstance(spec, F.Generic_Spec) or str(spec.items[0]).upper() != "OPERATOR":
        return None
    return normal_operator(str(spec.items[1]))


def normal_operator(op: str) -> str:
    """Operator *op* as f2loopy keys it (``.EQ.`` is ``==``...)."""
    op = op.strip().lower()
    return _OPERATOR_SPELLINGS.get(op, op)


_OPERATOR_SPELLINGS = {".eq.": "==", ".ne.": "/=", ".lt.": "<", ".le.": "<=", ".gt.": ">",
                       ".ge.": ">="}


def _bound_operators(part, inherited: dict) -> dict:
    """The type-bound operators of ``contains`` part *part* (after the
    *inherited* ones): each operator's procedures, the bindings' names
    resolved (``procedure :: add => add_impl``)."""
    procedure = {}
    for binding in part.children:
        if isinstance(binding, F.Specific_Binding):
            bname, target = binding.items[3], binding.items[4]
            procedure[str(bname).lower()] = str(target if target is not None else bname)
    out = {k: list(v) for k, v in inherited.items()}
    for binding in part.children:
        if isinstance(binding, F.Generic_Binding):
            key = operator_key(binding.items[1])
            if key is not None:
                out.setdefault(key, []).extend(procedure.get(str(n).lower(), str(n))
                                               for n in binding.items[2].items)
    return out


def _type_attribute(reader, attr, name):
    """Check attribute *attr* of the definition of type *name*: an access
    spec, ``bind(c)`` or ``abstract`` change nothing a kernel sees; for
    ``extends(parent)`` the parent's :class:`TypeDef` (its components are
    inherited; the parent component ``x%parent`` itself is not provided)."""
    if isinstance(attr, F.Access_Spec):
        return None
    word = str(attr.items[0]).lower() if isinstance(attr, F.Type_Attr_Spec) \
        else str(attr).strip().lower()
    if word == "abstract" or (word == "bind" and str(attr.items[1]).strip().lower() == "c"):
        return None
    if word == "extends":
        pname = str(attr.items[1])
        parent = reader.symtab.types.get(pname.lower())
        if parent is None:
            raise reader.error(f"type '{pname}' is not defined (define it in this unit or in "
                               "a module the unit uses)", pname)
        if parent.error is not None:
            raise parent.error
        return parent
    raise reader.error(f"attribute '{str(attr).lower()}' of type '{name}' is not supported",
                       name, UnsupportedFeatureError)


def _components(reader, stmt):
    from f2loopy.frontend.source import statement_lines
    reader.lines = statement_lines(stmt)
    type_spec, attrs, decls = stmt.items
    nested, dtype = None, None
    if isinstance(type_spec, F.Declaration_Type_Spec):
        nested = lookup_type(reader, type_spec)
    else:
        dtype = reader.type_spec_dtype(type_spec)
    dims = None
    deferred = None
    for attr in (attrs.items if attrs is not None else ()):
        word = str(attr).strip().lower()
        if isinstance(attr, F.Dimension_Component_Attr_Spec):
            dims = attr.items[1]
        elif word in ("allocatable", "pointer"):
            deferred = word
        else:
            raise reader.error(f"component attribute '{word}' is not supported (components "
                               "need a fixed size)", word, UnsupportedFeatureError)
    for decl in decls.items:
        name_node, shape_node, _charlen, init = decl.items
        name = str(name_node)
        spec = shape_node if shape_node is not None else dims
        shape, lbs = (), ()
        if deferred is not None:
            yield _deferred_component(reader, name, spec, deferred, dtype, nested, init)
            continue
        if spec is not None:
            shape, lbs = _constant_shape(reader, spec, name)
        value = None
        if init is not None:
            if str(init.items[0]) == "=>":
                raise reader.error("pointer components are not supported", "=>",
                                   UnsupportedFeatureError)
            if nested is not None:
                raise reader.error(f"default value of component '{name}' of derived type is "
                                   "not supported", name, UnsupportedFeatureError)
            values = reshaped_initializer(reader, init.items[1], name, list(shape)) \
                if shape else None
            if values is None:
                values = initializer_values(reader, init.items[1], name)
            values = [reader.cast_value(v, dtype, name) for v in values]
            if len(values) == 1:
                value = np.full(shape, values[0], dtype=dtype, order="F")
            elif shape and len(values) == int(np.prod(shape)):
                value = np.array(values, dtype=dtype).reshape(shape, order="F")
            else:
                raise reader.error(f"the initial value of component '{name}' has "
                                   f"{len(values)} elements, not {int(np.prod(shape))}", name)
        if nested is not None and shape:
            raise reader.error(f"array component '{name}' of derived type is not supported",
                               name, UnsupportedFeatureError)
        yield Component(name, dtype, shape, lbs, value, nested)


def _deferred_component(reader, name, spec, what, dtype, nested, init) -> Component:
    """The :class:`Component` of allocatable or pointer (*what*) component
    *name*: an array of deferred shape *spec* of an intrinsic type, with no
    initial value but ``=> null()``."""
    if nested is not None and not (what == "pointer" and spec is None):
        also = " and scalar pointers of derived type" if what == "pointer" else ""
        raise reader.error(f"{what} component '{name}' of derived type is not supported (only "
                           f"{what} arrays of intrinsic types{also} are: make the inner "
                           "type's components the arrays)", name, UnsupportedFeatureError)
    if spec is None and nested is None:
        raise reader.error(f"{what} scalar component '{name}' is not supported (only {what} "
                           "arrays are: use a plain component)", name,
                           UnsupportedFeatureError)
    if spec is not None and not isinstance(spec, F.Deferred_Shape_Spec_List):
        raise reader.error(f"{what} component '{name}' must have a deferred shape "
                           f"({name}(:))", name)
    if init is not None and not (
            what == "pointer" and str(init.items[0]) == "=>" and
            str(init.items[1]).replace(" ", "").lower() == "null()"):
        raise reader.error(f"{what} component '{name}' may not have a default value (but "
                           "'=> null()' for a pointer)", name, UnsupportedFeatureError)
    if nested is not None:
        # (``type(grid_type), pointer :: grid``: the kernel reads through it,
        # see f2loopy.frontend.pointer_components)
        return Component(name, None, (), (), None, nested, what)
    assert spec is not None          # (refused above)
    rank = len(spec.items)
    return Component(name, dtype, (None,) * rank, (None,) * rank, None, None, what)


def _constant_shape(reader, spec, name):
    if not isinstance(spec, F.Explicit_Shape_Spec_List):
        raise reader.error(f"component '{name}' needs constant bounds (allocatable and "
                           "deferred-shape components are not supported)", name,
                           UnsupportedFeatureError)
    shape, lbs = [], []
    for s in spec.items:
        lo_node, hi_node = s.items
        try:
            lo = 1 if lo_node is None else int(reader.constant(lo_node))
            hi = int(reader.constant(hi_node))
        except FortranError:
            raise reader.error(f"component '{name}' needs constant bounds", name,
                               UnsupportedFeatureError) from None
        shape.append(max(0, hi - lo + 1))
        lbs.append(lo)
    return tuple(shape), tuple(lbs)


def lookup_type(reader, type_spec, *, allow_class: bool = False) -> TypeDef:
    """The definition named by ``type(t)`` *type_spec* (or ``class(t)``
    with *allow_class*: dummy arguments of a procedure that is inlined)."""
    word, tname = type_spec.items
    if str(word).upper() == "CLASS" and allow_class and str(tname) != "*":
        word = "TYPE"
    if str(word).upper() == "CLASS":
        raise reader.error(f"polymorphic 'class({tname})' declarations are not supported (a "
                           f"kernel needs the exact type: declare it type({tname}), or pass "
                           "the components)", "class", UnsupportedFeatureError)
    if str(word).upper() != "TYPE":
        raise reader.error(f"'{str(word).lower()}(...)' declarations are not supported",
                           str(word).lower(), UnsupportedFeatureError)
    name = str(tname)
    tdef = reader.symtab.types.get(name.lower())
    if tdef is None:
        refused = reader.symtab.library_error(name)   # type(c_ptr), type(mpi_comm)
        if refused is not None:
            raise reader.error(refused.message, name, UnsupportedFeatureError)
        raise reader.error(f"type '{name}' is not defined (define it in this unit or in a "
                           "module the unit uses)", name)
    if tdef.error is not None:
        raise tdef.error
    return tdef


def flatten(symtab, sym, *, fresh, outer=None) -> None:
    """Give derived-type symbol *sym* a symbol per component (recursively):
    ``sym.components`` maps lower-case component names to them.  *fresh*
    makes a unique name from a base.  An array of derived type (``pts(n)``)
    gives each component the array's axes after its own (``pts(i)%w(k)`` is
    ``pts_w(k, i)``): *outer* holds those axes."""
    if outer is None:
        outer = list(sym.dims or ())
    elif sym.is_array:
        raise UnsupportedFeatureError(f"array components of derived type ('{sym.name}') are "
                                      "not supported", sym.span)
    sym.components = {}
    for comp in sym.derived.components:
        if comp.deferred is not None and outer:
            raise UnsupportedFeatureError(
                f"{comp.deferred} component '{comp.name}' of an array of derived type "
                f"('{sym.name}') is not supported (only of a scalar of the type: pass "
                f"the arrays themselves)", sym.span)
        name = fresh(f"{sym.name}_{comp.name}")
        csym = symtab.declare(name, sym.span)
        csym.path = (*(sym.path or (sym.name,)), comp.name)
        csym.intent = sym.intent
        csym.struct_rank = len(outer)
        if "pointer_root" in sym.attributes or sym.path is None and "pointer" in sym.attributes:
            csym.attributes.add("pointer_root")      # (a module pointer to a derived value)
        if "through_pointer" in sym.attributes or comp.type is not None and comp.deferred:
            csym.attributes.add("through_pointer")   # (at or below a pointer component)
        if comp.error is not None:
            # (no data: not one of the leaves a kernel receives)
            csym.attributes.update(("poisoned", "unusable"))
            csym.value = comp.error
        elif comp.type is not None:
            csym.derived = comp.type
            flatten(symtab, csym, fresh=fresh, outer=outer)
        elif comp.deferred is not None:
            csym.dtype = comp.dtype
            csym.dims = [(None, ":")] * len(comp.shape)
            csym.attributes.add("allocatable")
            if comp.deferred == "pointer":
                csym.attributes.add("pointer")
        else:
            csym.dtype = comp.dtype
            dims = [(F.Expr(str(lb)), F.Expr(str(lb + n - 1)))
                    for n, lb in zip(comp.shape, comp.lbs, strict=True)] + list(outer)
            if dims:
                csym.dims = dims
            if comp.init is not None:
                csym.component_init = comp.init
        sym.components[comp.name.lower()] = csym


def _flattened(sym):
    for csym in (sym.components or {}).values():
        yield csym
        yield from _flattened(csym)


def leaves(sym):
    """The component symbols of derived-type *sym* that hold data, in order
    (not those a kernel cannot use: an error where used)."""
    for csym in sym.components.values():
        if "unusable" in csym.attributes:
            continue
        if csym.derived is not None:
            yield from leaves(csym)
        else:
            yield csym


def next_component(sym, name: str):
    """The component *name* of derived-type variable *sym* (None if it has no
    such component); the parent component of an extended type
    (``x%parent`` in ``x%parent%c``) is *sym* itself, whose flattened
    components include the inherited ones."""
    if not sym.components:
        return None
    low = name.lower()
    found = sym.components.get(low)
    if found is None and sym.derived is not None and low in sym.derived.parents:
        return sym
    return found


def component_symbol(lowering_or_reader, symtab, parts, needle):
    """The symbol of ``a%b%c`` (*parts*: the names) and whether it is a leaf."""
    sym = symtab.get(parts[0])
    if sym is None or sym.derived is None:
        raise lowering_or_reader.error(f"'{parts[0]}' is not of a derived type", parts[0])
    for k, name in enumerate(parts[1:], 2):
        if sym.derived is None:
            raise lowering_or_reader.error(f"'{sym.name}' has no components", name)
        if name.lower() in sym.derived.parents and name.lower() not in sym.components:
            if k < len(parts):
                continue               # x%parent%c is the inherited x%c
            raise lowering_or_reader.error(
                f"the parent component '{name}' of type '{sym.derived.name}' cannot be used "
                "as a whole (use its components, which the extended type inherits)", name,
                UnsupportedFeatureError)
        nxt = sym.components.get(name.lower())
        if nxt is None:
            raise lowering_or_reader.error(f"type '{sym.derived.name}' has no component "
                                           f"'{name}'", name)
        if "poisoned" in nxt.attributes:
            raise nxt.value               # (see lower_derived_assignment)
        sym = nxt
    return sym


def data_ref_parts(node):
    """``(names, index nodes or None)`` of a ``Data_Ref`` ``a%b%c(i)`` or
    ``pts(j)%w(i)`` (the flattened component's subscripts: the last part's,
    then the first part's); subscripts on an inner part are not supported."""
    names, last, first = [], None, None
    items = node.items
    for k, part in enumerate(items):
        if isinstance(part, F.Name):
            names.append(str(part))
        elif isinstance(part, F.Part_Ref) and k in (0, len(items) - 1):
            names.append(str(part.items[0]))
            subs = part.items[1]
            subs = list(subs.items) if isinstance(subs, F.Section_Subscript_List) else [subs]
            if k == 0:
                first = subs
            else:
                last = subs
        else:
            return None, None
    if first is None:
        return names, last
    return names, (last or []) + first


def array_designator(lowering, node):
    """The array (or array section) that the ``Data_Ref`` *node* designates,
    as a name or ``Part_Ref`` over its flattened component, or None where
    *node* is a scalar (an element, a scalar component) or no such array:
    ``q%w`` is ``q_w``, ``q%w(1:2)`` is ``q_w(1:2)``, and for an element of an
    array of derived type ``pts(i)%w`` is ``pts_w(:, i)`` and ``pts(:)%m`` is
    ``pts_m(:)``.  The component is reached in *lowering*'s symbol table
    under its own name (an alias of the symbol where the unit has no
    variable of that name, else a fresh one)."""
    names, _ = data_ref_parts(node)
    if names is None:
        return None
    leaf = component_symbol(lowering, lowering.symtab, names, names[-1])
    if leaf.derived is not None or not leaf.dims:
        return None
    items = node.items
    first = _subscripts(items[0]) if isinstance(items[0], F.Part_Ref) else None
    last = _subscripts(items[-1]) if len(items) > 1 and isinstance(items[-1], F.Part_Ref) \
        else None
    own = len(leaf.dims) - leaf.struct_rank
    if leaf.struct_rank and first is None:
        return None                  # (a whole array of derived type: component_access says)
    if last is not None and len(last) != own:
        return None
    subs = [str(x) for x in (last if last is not None else [":"] * own)] + \
        [str(x) for x in (first or [])]
    if not any(isinstance(x, F.Subscript_Triplet) for x in (last or []) + (first or [])) and \
            (last is not None or own == 0):
        return None                  # an element
    alias = _alias(lowering.symtab, leaf)
    if not subs or all(x == ":" for x in subs) and not leaf.struct_rank:
        return F.Name(alias)
    try:
        return F.Part_Ref(f"{alias}({', '.join(subs)})")
    except Exception:                 # (fparser's errors): keep the original's message
        return None


def _subscripts(part) -> list:
    subs = part.items[1]
    return list(subs.items) if isinstance(subs, F.Section_Subscript_List) else [subs]


def _alias(symtab, leaf) -> str:
    """A name under which *symtab* finds component symbol *leaf*."""
    name, k = leaf.name, 0
    while True:
        try:
            found = symtab.get(name)
        except FortranError:
            found = None
        if found is leaf:
            return name
        if found is None and name not in symtab:
            symtab.aliases[name.lower()] = leaf
            return name
        k += 1
        name = f"{leaf.name}_{k}"


def component_access(lowering, node):
    """``(leaf symbol, index nodes or None)`` of the ``Data_Ref`` *node*."""
    names, index = data_ref_parts(node)
    if names is None:
        raise lowering.error(f"'{node}': subscripts on a derived-type value are not "
                             "supported (arrays of derived type)", "%",
                             UnsupportedFeatureError)
    leaf = component_symbol(lowering, lowering.symtab, names, names[-1])
    if leaf.struct_rank and not isinstance(node.items[0], F.Part_Ref):
        raise lowering.error(f"'{'%'.join(names)}': components of a whole array of derived "
                             f"type are not supported (index it: {names[0]}(i)%...)",
                             names[0], UnsupportedFeatureError)
    if leaf.derived is not None:
        raise lowering.error(f"'{'%'.join(names)}' is a whole derived-type value; use its "
                             "components",
                             names[-1], UnsupportedFeatureError)
    if leaf.struct_rank and index is not None and (
            len(index) != len(leaf.dims or ()) or
            any(isinstance(x, F.Subscript_Triplet) for x in index)):
        # pts(i)%w or pts(i)%w(:) of a w(3) component: array syntax on a
        # component of one element
        base = "%".join([str(node.items[0]).replace(" ", ""), *names[1:]])
        raise lowering.error(f"'{base}': array syntax on the array component '{names[-1]}' "
                             "of an element of an array of derived type is not supported: "
                             f"assign its elements in a loop ({base}(k) for each k)",
                             names[-1], UnsupportedFeatureError)
    return leaf, index


def flatten_all(symtab) -> None:
    """Flatten every derived-type variable declared in *symtab*."""
    def fresh(base):
        name, k = base, 0
        while name in symtab:
            k += 1
            name = f"{base}_{k}"
        return name
    for sym in list(symtab.local_symbols()):
        if "poisoned" in sym.attributes:
            continue
        if sym.derived is not None and sym.components is None:
            try:
                flatten(symtab, sym, fresh=fresh)
            except UnsupportedFeatureError as exc:
                if not sym.dims:
                    raise
                # an array of a type with allocatable components: an error
                # where a kernel uses it (a module's other kernels translate)
                for part in [sym, *_flattened(sym)]:
                    part.attributes.add("poisoned")
                    part.value = exc


def _is_text(sym) -> bool:
    """Whether *sym* holds characters (the dtype's mark, see
    :func:`f2loopy.frontend.characters.character_dtype`)."""
    meta = np.dtype(sym.dtype).metadata if sym.dtype is not None else None
    return meta is not None and "character" in meta


def _element_of_array(symtab, node):
    """The symbol of the array of derived type whose element *node* is
    (``p(i)``, every subscript a scalar), or None."""
    if not isinstance(node, F.Part_Ref):
        return None
    sym = symtab.get(str(node.items[0]))
    if sym is None or sym.derived is None or not sym.dims or not sym.components:
        return None
    subs = _subscripts(node)
    if len(subs) != len(sym.dims) or any(isinstance(x, F.Subscript_Triplet) for x in subs):
        return None
    return sym


def selector_symbol(symtab, selector):
    """The symbol a variable or component *selector* names, or None for an
    expression."""
    if isinstance(selector, F.Name):
        return symtab.get(str(selector))
    if isinstance(selector, F.Data_Ref):
        names, index = data_ref_parts(selector)
        if names is None or index is not None:
            return None
        sym = _along(symtab, names)
        return sym if sym is not None and sym.derived is None else None
    return None


def component_value(lowering, node):
    """The value of the ``Data_Ref`` *node* (``a%b%c(i)``, ``pts(i)%w``): a
    flattened component, its element or an array section of it."""
    section = array_designator(lowering, node)
    if section is not None:              # q%w, pts(i)%w: an array (section)
        return lowering.converter()(section)
    leaf, index = component_access(lowering, node)
    if index is None:
        return lowering.resolve_name(leaf.name, node)
    ref = lowering.array_ref(leaf.name, index, node)
    if ref is None:
        raise lowering.error(f"component '{'%'.join(leaf.path)}' is not an array",
                             leaf.path[-1])
    return ref


def _derived_type_of(symtab, node):
    """The :class:`TypeDef` of the value designator *node* designates (a
    variable, an element of an array or a component of derived type), or
    None for anything else (a scalar of an intrinsic type, an expression)."""
    if isinstance(node, F.Name):
        sym = symtab.get(str(node))
        return sym.derived if sym is not None and not sym.dims else None
    if isinstance(node, F.Part_Ref):
        sym = symtab.get(str(node.items[0]))
        return sym.derived if sym is not None and sym.dims else None
    if isinstance(node, F.Data_Ref):
        names, index = data_ref_parts(node)
        if names is None or index is not None and not isinstance(node.items[0], F.Part_Ref):
            return None
        sym = _along(symtab, names)
        return sym.derived if sym is not None else None
    return None


def _along(symtab, names):
    """The symbol of the component path *names* (``a``, ``b``, ``c`` of
    ``a%b%c``) from variable ``names[0]``, or None where a part is missing."""
    sym = symtab.get(names[0])
    for name in names[1:]:
        if sym is None or not sym.components:
            return None
        sym = next_component(sym, name)
        if sym is not None and "unusable" in sym.attributes:
            raise sym.value             # (a component a kernel cannot hold)
    return sym


def type_bound_call_error(lowering, designator):
    """The located error of ``call x%move(...)`` (*designator*): a
    type-bound procedure is not called in a kernel."""
    base, _, binding = designator.items
    spelled = f"{str(base).replace(' % ', '%')}%{binding}"
    return lowering.error(f"calling type-bound procedure '{spelled}' is not supported in a "
                          f"kernel: call the procedure it binds directly, with the object as "
                          f"an argument declared type(...) (call {binding}({base}, ...) if "
                          f"'{binding}' is bound to a procedure of that name)", str(binding),
                          UnsupportedFeatureError)


#: the most elements of components that default initialization sets one by one
_MOST_DEFAULT_ELEMENTS = 4096


def default_initialize(lowering) -> None:
    """Give the local variables of derived type of the unit being lowered
    (and its ``intent(out)`` dummy arguments of derived type) the default
    values of their components (``real(8) :: mass = 1d0`` in the type), as
    Fortran does on every entry of the procedure."""
    import itertools
    for sym in lowering.symtab.local_symbols():
        if sym.derived is None or sym.components is None or sym.path is not None or \
                sym.storage is not None or "poisoned" in sym.attributes or \
                sym.is_dummy and sym.intent != "out":
            continue
        for leaf in leaves(sym):
            init = leaf.component_init
            if init is None or "through_pointer" in leaf.attributes:   # (not the object's)
                continue
            own = np.asarray(init)
            if not leaf.dims:
                target, dtype = lowering.lower_assignee(F.Name(leaf.name))
                lowering.add_assignment(target, dtype, own[()], None, predicates=())
                continue
            lbs, ubs = lowering.bounds_of(leaf)
            try:
                ranges = [range(int(lo), int(hi) + 1) for lo, hi in zip(lbs, ubs, strict=True)]
            except TypeError:          # (run-time bounds of an array of the type)
                ranges = None
            count = int(np.prod([len(r) for r in ranges])) if ranges is not None else None
            if ranges is None or count is None or count > _MOST_DEFAULT_ELEMENTS:
                raise UnsupportedFeatureError(
                    f"the default values of component '{'%'.join(leaf.path)}' of "
                    f"'{sym.name}' cannot be set here (more than {_MOST_DEFAULT_ELEMENTS} "
                    "elements, or bounds known only at run time): assign them explicitly",
                    sym.span)
            own_rank = own.ndim
            for index in itertools.product(*reversed(ranges)):
                index = tuple(reversed(index))
                value = own[tuple(i - int(lbs[k]) for k, i in enumerate(index[:own_rank]))]
                target, dtype = lowering.lower_assignee(
                    F.Part_Ref(f"{leaf.name}({', '.join(str(i) for i in index)})"))
                lowering.add_assignment(target, dtype, value, None, predicates=())
