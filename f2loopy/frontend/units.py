"""The program units of a file, and turning each subroutine into a kernel.

:class:`FileRegistry` knows every subroutine, function and module of the
file (top level or ``module ... contains``).  Every subroutine becomes a
kernel; functions, and subroutines called from others, are inlined where
they are referenced (:mod:`f2loopy.frontend.inline`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import islpy as isl
import numpy as np
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.analysis.dependences import add_program_order_dependencies
from f2loopy.diagnostics import F2LoopyError, FortranError, UnsupportedFeatureError
from f2loopy.frontend.associate import associate_writes
from f2loopy.frontend.data_statements import apply_data
from f2loopy.frontend.declarations import DeclarationReader, UseCycleError, statement_lines
from f2loopy.frontend.derived_types import flatten_all, leaves
from f2loopy.frontend.derived_values import (
    derived_result, kernel_derived_check, operator_procedures)
from f2loopy.frontend.errors import file_may_stop
from f2loopy.frontend.generics import Generic, module_generics, specifics_of
from f2loopy.frontend.writes import scan_writes
from f2loopy.frontend.statement_functions import split_statement_functions
from f2loopy.frontend.lowering import LoweringState, UnitLowering
from f2loopy.frontend.module_data import (
    declare_common_blocks, declare_module_variables, declare_saved_locals, implicitly_saved,
    storage_arguments, unused_module_data)
from f2loopy.frontend.argument_facts import bind_name, check_bounds_unchanged
from f2loopy.frontend.kernel_arguments import array_dims, make_arg
from f2loopy.frontend.optionals import presence_arguments
from f2loopy.frontend.pointer_components import check_pointer_reads, pointer_positions
from f2loopy.frontend.reader import parse_units, specification_and_body
from f2loopy.frontend.source import SourceFile, preprocessor_lines, read_source
from f2loopy.frontend.symbols import SymbolTable
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import NonAffineError, align_params, make_space, pwaff_from_expr
from f2loopy.ir.kernel import AddressSpace, Kernel, ScalarArg, Temporary
from f2loopy.frontend.allocatables import component_arguments, has_dope
from f2loopy.ir.roles import Component, Extent
from f2loopy.ir.work_limit import parent_isl_limit

@dataclass(eq=False)
class ModuleInfo:
    name: str
    node: Any                                           # its fparser node
    procedures: dict = field(default_factory=dict)      # lower name -> Procedure
    symtab: SymbolTable | None = None
    #: errors of statements of its specification: raised where a unit uses
    #: an entity they concern (a module of a real project often declares
    #: things a kernel does not need: I/O helpers, pointer components...)
    deferred_errors: list = field(default_factory=list)

    #: generic names (lower) -> :class:`~f2loopy.frontend.generics.Generic`
    generics: dict = field(default_factory=dict)
    #: a main program: its internal procedures are kernels, the variables of
    #: its specification part their module data (host association); no
    #: other unit can 'use' it
    is_program: bool = False

    @property
    def procedure_names(self) -> set:
        return set(self.procedures) | set(self.generics)


@dataclass(eq=False)
class Procedure:
    """A subroutine or function of the file."""

    name: str
    kind: str                  # "subroutine" or "function"
    node: Any                  # its fparser node
    module: ModuleInfo | None
    line: int
    #: the file that defines it and its registry (procedures of other files
    #: are prepared and lowered with their own source, for their spans)
    src: SourceFile | None = None
    registry: FileRegistry | None = None
    #: for an internal procedure ('contains' in a subroutine): its host, and
    #: the host's internal procedures (lower name -> Procedure)
    host: Procedure | None = None
    siblings: dict | None = None
    #: its own internal procedures (lower name -> Procedure), once prepared
    internals: dict | None = None
    #: its dummy procedures bound (lower name -> Procedure), for a
    #: specialisation (:mod:`f2loopy.frontend.procedure_dummies`); then
    #: *base* is the procedure it specialises
    bindings: FrozenMap | None = None
    base: Procedure | None = None
    #: the specialisations of this procedure, made once each
    specialisations: dict = field(default_factory=dict)

    def prepare(self, src, registry, errors=None) -> "PreparedProcedure":
        return prepare_procedure(self.src or src, self, self.registry or registry, errors)


@dataclass(eq=False)
class PreparedProcedure:
    """A procedure's declarations read, ready to be lowered."""

    proc: Procedure
    symtab: SymbolTable
    reader: DeclarationReader
    dummies: list
    body: list
    written: set
    do_variables: set
    statement_functions: dict
    result_name: str | None
    first_line: int
    names: set = field(default_factory=set)      # every name the body mentions
    #: for an internal procedure: the host's variables it uses (lower-case)
    host_names: list = field(default_factory=list)
    #: the dummies that are procedures (as written, in order)
    procedure_dummies: tuple = ()


class FileRegistry:
    """Procedures and modules of one file (from one or several parse trees)."""

    def __init__(self, src: SourceFile, units, errors=None, *, search=None):
        self.src = src
        self.errors = errors
        #: a :class:`~f2loopy.frontend.search_path.SearchPath` for modules and
        #: procedures of other files, or None
        self.search = search
        self.procedures: dict[str, Procedure] = {}
        self.modules: dict[str, ModuleInfo] = {}
        #: main programs with internal procedures (not reachable by 'use')
        self.programs: dict[str, ModuleInfo] = {}
        self.all_procedures: list[Procedure] = []
        self._writes: dict = {}
        self._module_busy: set = search.module_busy if search is not None else set()
        for unit in units:
            self.add_unit(unit)
        self.all_procedures.sort(key=lambda pr: pr.line)

    def add_unit(self, unit):
        if isinstance(unit, (F.Subroutine_Subprogram, F.Function_Subprogram)):
            proc = _procedure(unit, None)
            self._register(proc, self.procedures)
        elif isinstance(unit, F.Module):
            name = str(unit.children[0].items[1])
            info = self.modules.get(name.lower())
            if info is None:
                info = ModuleInfo(name, unit)
                self.modules[name.lower()] = info
            for ch in unit.children:
                if isinstance(ch, F.Specification_Part):
                    for gname, names, line in module_generics(ch):
                        info.generics.setdefault(gname.lower(), Generic(
                            gname, info, names, line, src=self.src, registry=self))
                if isinstance(ch, F.Module_Subprogram_Part):
                    for sub in ch.children:
                        if isinstance(sub, (F.Subroutine_Subprogram, F.Function_Subprogram)):
                            self._register(_procedure(sub, info), info.procedures)
        elif isinstance(unit, F.Main_Program):
            # its internal procedures are kernels; the program's variables they
            # use by host association are module data of the program's name
            name = str(unit.children[0].items[1])
            internal = [sub for ch in unit.children if isinstance(ch, F.Internal_Subprogram_Part)
                        for sub in ch.children
                        if isinstance(sub, (F.Subroutine_Subprogram, F.Function_Subprogram))]
            if internal and name.lower() not in self.modules:
                info = ModuleInfo(name, unit, is_program=True)
                self.programs[name.lower()] = info
                for sub in internal:
                    self._register(_procedure(sub, info), info.procedures)
        elif isinstance(unit, F.Main_Program0) or unit is None:
            pass       # a program without internal procedures is a driver
        elif isinstance(unit, F.Comment):
            pass
        else:
            first, _ = statement_lines(unit)
            raise UnsupportedFeatureError(
                f"program unit '{type(unit).__name__.lower()}' is not supported",
                self.src.span(first or 1))

    def _register(self, proc, table):
        proc.src, proc.registry = self.src, self
        if proc.name.lower() in table:
            if table[proc.name.lower()].line == proc.line:
                return            # the same unit parsed twice (module headers)
            raise FortranError(f"{proc.kind} '{proc.name}' is defined twice",
                               self.src.span(proc.line, proc.name))
        table[proc.name.lower()] = proc
        self.all_procedures.append(proc)

    def kernel_procedures(self) -> list[Procedure]:
        """The procedures that become kernels: every subroutine, and every
        function that no procedure of the file references (a file of BLAS
        style functions; a function the file calls is inlined there)."""
        referenced: set[str] = operator_procedures(self.modules.values())
        for pr in self.all_procedures:
            referenced.update(str(n).lower() for n in walk(pr.node, F.Name)
                              if str(n).lower() != pr.name.lower())
        return [pr for pr in self.all_procedures if pr.kind == "subroutine"
                or pr.name.lower() not in referenced]

    def _load_other(self, path) -> "FileRegistry":
        """The registry of another file of the search path (read and parsed)."""
        from f2loopy.frontend.search_path import MAX_INDEXED_BYTES, read_bounded
        data = read_bounded(path)
        if data is None:
            raise F2LoopyError(f"cannot read {path} (not a regular file of at most "
                               f"{MAX_INDEXED_BYTES} bytes)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        from f2loopy.frontend.includes import expand_includes
        from f2loopy.preprocessor import needs_preprocessing, preprocess
        search = self.search
        pp = None
        if search is not None and search.cpp is False:
            from f2loopy.preprocessor import nocpp_refusal
            refusal = nocpp_refusal(text, path)
            if refusal is not None:
                raise refusal
        if search is not None and needs_preprocessing(text, path, search.cpp):
            # a module in a .F90 file with #ifdef (Reference LAPACK's
            # la_xisnan.F90): preprocessed with the macros of the translation
            pp = preprocess(text, path, defines=search.defines, undefines=search.undefines,
                            include_dirs=search.include_dirs,
                            fixed_form=search.forced_fixed_form)
        # its Fortran include lines: from its own folder first, then -I
        dirs = search.include_dirs if search is not None else ()
        pp = expand_includes(pp.text if pp else text, str(path), dirs, base=pp) or pp
        if pp is not None:
            if search is not None:
                search.preprocessed[str(path)] = pp
                search.includes.extend(f for f in pp.includes if f not in search.includes)
                search.absent.extend(pp.absent)
            text = pp.text
        src = read_source(text, str(path),
                          fixed_form=search.fixed_form(path) if search is not None else None)
        cpp = preprocessor_lines(src)
        if cpp:
            raise cpp[0]
        return FileRegistry(src, parse_units(src), search=search)

    def module(self, name: str, *, program: bool = False) -> ModuleInfo | None:
        """The module *name* of the file or the search path (with *program*,
        the main program of that name, the host of its internal procedures)."""
        info = (self.programs if program else self.modules).get(name.lower())
        if info is None and not program:
            if self.search:
                other = self.search.registry_defining("module", name, self.src.filename,
                                                       load=self._load_other)
                if other is not None:
                    return other.module(name)
        if info is None:
            return None
        if info.symtab is None:
            span = self.src.span(statement_lines(info.node)[0], name)
            if name.lower() in self._module_busy:
                raise UseCycleError(f"module '{name}' uses itself", span)
            if _USE_DEPTH[0] >= MAX_USE_DEPTH:
                raise UseCycleError(f"modules use one another more than {MAX_USE_DEPTH} levels "
                                    f"deep (module '{name}' is one of them)", span)
            self._module_busy.add(name.lower())
            _USE_DEPTH[0] += 1
            limit = sys.getrecursionlimit()
            # reading a module reads the modules it uses first, recursively: a
            # chain of MAX_USE_DEPTH modules needs more frames than Python's default
            sys.setrecursionlimit(max(limit, _FRAMES_PER_USE * MAX_USE_DEPTH + 2000))
            try:
                info.symtab = read_module_spec(self.src, info, self)
            finally:
                sys.setrecursionlimit(limit)
                _USE_DEPTH[0] -= 1
                self._module_busy.discard(name.lower())
        return info

    def find(self, name: str, symtab: SymbolTable | None, module: ModuleInfo | None):
        low = name.lower()
        if symtab is not None and low in symtab.procedure_dummies:
            # a dummy procedure: the procedure it is bound to, or none
            return symtab.procedure_bindings.get(low)
        internal = getattr(symtab, "internals", None) or {}
        if low in internal:
            return internal[low]
        if symtab is not None and low in symtab.use_renames:
            mod, remote = symtab.use_renames[low]
            return mod.procedures.get(remote) or mod.generics.get(remote)
        if module is not None and low in module.procedures:
            return module.procedures[low]
        if module is not None and low in getattr(module, "generics", ()):
            return module.generics[low]
        proc = self.procedures.get(low)
        if proc is None and self.search:
            other = self.search.registry_defining("procedure", name, self.src.filename,
                                                   load=self._load_other)
            if other is not None:
                proc = other.procedures.get(low)
        return proc

    def calls_may_stop(self, names, symtab, module, _seen=None) -> bool:
        """Whether a procedure among *names* (resolved as in a unit with
        *symtab* and *module*), or one that it calls, may stop: its file has a
        ``stop`` or calls ``xerbla``.  Over-approximate (a whole file's text
        counts), for deciding up front whether the kernel needs its flag to
        leave early: a callee of another file on the search path (Reference
        BLAS's dgemv inlined into a LAPACK routine) stops although the file
        being translated never says so."""
        seen = set() if _seen is None else _seen
        for name in sorted(names):
            # an array, a parameter or a dummy argument of the unit is data,
            # never a call (a dummy procedure is refused): no file of the
            # search path defining a procedure of that name is read
            try:
                sym = symtab.get(name) if symtab is not None else None
            except FortranError:
                sym = None
            if sym is not None and (sym.is_array or sym.is_parameter or sym.is_dummy) and \
                    name.lower() not in getattr(symtab, "procedure_dummies", ()):
                continue
            try:
                proc = self.find(name, symtab, module)
            except FortranError:
                continue
            if proc is None or id(proc) in seen:
                continue
            seen.add(id(proc))
            if isinstance(proc, Generic):
                if any(self.calls_may_stop([t.name], None, t.module, seen)
                       for t in specifics_of(proc)):
                    return True
                continue
            src = proc.src or self.src
            if file_may_stop(src.text):
                return True
            registry = proc.registry or self
            try:
                prep = proc.prepare(self.src, self)
            except FortranError:
                continue
            if registry.calls_may_stop(prep.names - prep.written, prep.symtab, proc.module,
                                       seen):
                return True
        return False

    def dummy_writes(self, proc: Procedure) -> set:
        """Lower-case names of *proc*'s dummy arguments it (or what it calls)
        may assign."""
        key = id(proc)
        if key in self._writes:
            return self._writes[key] or set()
        self._writes[key] = None          # in progress (recursion is rejected later)
        try:
            prep = proc.prepare(self.src, self)
            result = {d.lower() for d in prep.dummies} & prep.written
            # (and the host's variables an internal procedure assigns)
            result |= set(prep.host_names) & prep.written
            for d in prep.dummies:          # a derived-type dummy: any component written
                sym = prep.symtab.get(d)
                if sym is not None and sym.derived is not None and \
                        any(leaf.name.lower() in prep.written for leaf in leaves(sym)):
                    result.add(d.lower())
        except FortranError:
            result = set()
        self._writes[key] = result
        return result


def _procedure(node, module) -> Procedure:
    stmt = node.children[0]
    kind = "function" if isinstance(node, F.Function_Subprogram) else "subroutine"
    return Procedure(str(stmt.items[1]), kind, node, module, statement_lines(stmt)[0])


def read_module_spec(src, info: ModuleInfo, registry) -> SymbolTable:
    host = SymbolTable()
    spec = None
    for ch in info.node.children:
        if isinstance(ch, F.Specification_Part):
            spec = ch
    if spec is not None:
        reader = DeclarationReader(src, host, [], modules=registry.module,
                                   errors=info.deferred_errors)
        reader.search = registry.search
        reader.in_module = True
        reader.in_program = info.is_program
        reader.module_name = info.name
        reader.read(spec)
        reader.errors = None
        apply_data(reader)
        flatten_all(host)
        declare_module_variables(info.name, host, reader)
    return host


def prepare_procedure(src: SourceFile, proc: Procedure, registry: FileRegistry,
                      errors=None) -> PreparedProcedure:
    unit = proc.node
    parts = {type(ch).__name__: ch for ch in unit.children}
    stmt = unit.children[0]
    first, _ = statement_lines(stmt)
    if proc.kind == "subroutine":
        _, name_node, dummy_list, suffix = stmt.items
        prefix = stmt.items[0]
    else:
        prefix, name_node, dummy_list, suffix = stmt.items
    dummies = []
    for d in (dummy_list.items if dummy_list is not None else ()):
        if str(d) == "*":
            raise UnsupportedFeatureError("alternate returns ('*' arguments) are not supported",
                                          src.span(first, "*"))
        dummies.append(str(d))
    if len({d.lower() for d in dummies}) != len(dummies):
        raise FortranError("a dummy argument is repeated", src.span(first, proc.name))
    if proc.host is not None:
        internals = proc.siblings
    else:
        # (made once: the procedures are the same objects however often the
        # host is prepared, which the inliner's caches key on)
        if proc.internals is None:
            proc.internals = _internal_procedures(parts.get("Internal_Subprogram_Part"), proc)
        internals = proc.internals
    prefix_type = None
    for item in (prefix.items if prefix is not None else ()):
        word = str(item).strip().upper()
        if isinstance(item, (F.Intrinsic_Type_Spec, F.Declaration_Type_Spec)):
            prefix_type = item
        elif word in ("PURE", "ELEMENTAL", "RECURSIVE", "IMPURE"):
            pass
        else:
            raise UnsupportedFeatureError(f"'{word.lower()}' procedures are not supported",
                                          src.span(first, word.lower()))

    symtab = SymbolTable()
    symtab.internals = internals
    host = None
    host_prep = None
    if proc.host is not None:
        # host association: the host's names (its module's, its own) are
        # visible unless declared here
        host_prep = proc.host.prepare(src, registry)
        host = host_prep.symtab
    elif proc.module is not None:
        info = registry.module(proc.module.name, program=proc.module.is_program)
        assert info is not None             # the module the procedure is in
        host = info.symtab
    reader = DeclarationReader(src, symtab, dummies, host, modules=registry.module,
                               errors=errors)
    reader.search = registry.search
    specs, body = specification_and_body(src, unit)
    for spec in specs:
        reader.read(spec)
    for node in body:
        if isinstance(node, F.Data_Stmt):
            reader.lines = statement_lines(node)
            reader.decl_Data_Stmt(node)
    statement_functions, body = split_statement_functions(reader, symtab, body)
    apply_data(reader)
    declare_common_blocks(reader)
    flatten_all(symtab)
    implicitly_saved(reader, body)
    declare_saved_locals(reader, proc.name)

    result_name = None
    if proc.kind == "function":
        result_name = str(suffix.items[0]) if suffix is not None and suffix.items[0] \
            is not None else proc.name
        rsym = symtab.get(result_name)
        if rsym is None or not symtab.is_local(result_name):
            rsym = symtab.declare(result_name, src.span(first, proc.name))
        if derived_result(reader, symtab, rsym, prefix_type):
            pass                # (a value of derived type: f2loopy.frontend.derived_values)
        elif prefix_type is not None:
            reader.lines = (first, first)
            if rsym.dtype is not None and rsym.type_span is not None:
                raise FortranError(f"the type of '{proc.name}' is declared twice",
                                   src.span(first, proc.name))
            rsym.dtype = reader.type_spec_dtype(prefix_type)
        if rsym.dtype is None and rsym.derived is None:
            rsym.dtype = symtab.implicit_type(result_name)
            if rsym.dtype is None:
                raise FortranError(f"function '{proc.name}' has no type (implicit none is "
                                   "in effect; declare it)", src.span(first, proc.name))
    called = {str(c.items[0]).lower() for c in walk(body, F.Call_Stmt)
              if isinstance(c.items[0], F.Name)}
    from f2loopy.frontend.procedure_dummies import procedure_dummies
    proc_dummies = procedure_dummies(dummies, reader.externals, called, symtab)
    symtab.procedure_dummies = frozenset(d.lower() for d in proc_dummies)
    symtab.procedure_bindings = proc.bindings or FrozenMap()
    for d in dummies:
        sym = symtab.get(d) if symtab.is_local(d) else None
        if sym is None:
            sym = symtab.declare(d, src.span(first, d))
        sym.is_dummy = True
        if d.lower() in symtab.procedure_dummies:
            continue        # no data: bound to a procedure where it is called
        if sym.derived is not None:
            for leaf in leaves(sym):
                leaf.is_dummy = True
            continue
        if sym.dtype is None:
            sym.dtype = symtab.implicit_type(d)
            if sym.dtype is None:
                exc = FortranError(f"dummy argument '{d}' has no type (implicit none is in "
                                   "effect; declare it)", src.span(first, d))
                if errors is None:
                    raise exc
                # collecting: go on (the body's errors are wanted too), and say
                # nothing if its declaration was refused already
                sym.dtype = np.dtype(np.int32)
                if not _declaration_failed(src, errors, d):
                    errors.append(exc)
        if sym.is_parameter:
            raise FortranError(f"dummy argument '{d}' cannot be a parameter", sym.span)
        if sym.is_initialized:
            raise FortranError(f"dummy argument '{d}' cannot have an initial value",
                               sym.span)
    names: set[str] = set()
    written, do_vars = scan_writes(body, registry, symtab, proc.module, names)
    host_names = []
    if host_prep is not None:
        from f2loopy.frontend.host_association import host_variables
        host_names = host_variables(src, proc, symtab, host_prep, dummies, do_vars)
    associate_writes(body, symtab, written)
    # a loop variable that is a dummy argument or module data: the kernel
    # writes its value after the loops back (UnitLowering.lower_body)
    lowered = {d.lower() for d in dummies}
    for v in do_vars:
        sym = symtab.get(v)
        if v in lowered or (sym is not None and sym.storage is not None):
            written.add(v)
    for d in dummies:
        sym = symtab.get(d)
        if sym is not None and "value" in sym.attributes and (
                d.lower() in written or d.lower() in do_vars):
            raise UnsupportedFeatureError(
                f"'value' dummy argument '{d}' is assigned in the procedure: not supported "
                "(assign a local copy of it instead)", sym.span)
    return PreparedProcedure(proc, symtab, reader, dummies, body, written, do_vars,
                             statement_functions, result_name, first, names, host_names,
                             proc_dummies)


def _internal_procedures(part, host) -> dict:
    """Lower name -> Procedure of the internal procedures of *host* (its
    ``contains`` part *part*); they are inlined where called, like the
    procedures of the file."""
    out: dict[str, Procedure] = {}
    if part is None:
        return out
    for sub in part.children:
        if isinstance(sub, (F.Subroutine_Subprogram, F.Function_Subprogram)):
            ip = _procedure(sub, host.module)
            ip.host, ip.siblings = host, out
            out[ip.name.lower()] = ip
    return out


def _declaration_failed(src, errors, name: str) -> bool:
    """Whether one of the *errors* so far is on a line that mentions *name*
    (its declaration was refused)."""
    import re
    pattern = re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)
    for exc in errors:
        span = getattr(exc, "span", None)
        if span is not None and 0 < span.line <= len(src.lines) and \
                pattern.search(src.lines[span.line - 1]):
            return True
    return False


#: how deep modules may use one another (``use`` of a module that uses
#: another...): gfortran reads any chain; f2loopy reads them recursively
MAX_USE_DEPTH = 256
#: Python frames one level of such a chain takes, with room for what a
#: module's declarations need
_FRAMES_PER_USE = 16
_USE_DEPTH = [0]


def lower_subroutine(src: SourceFile, proc: Procedure, registry: FileRegistry, *,
                     collect: bool = False, bindings: tuple = ()):
    """The kernel of subroutine *proc*, its dummy procedures bound as
    *bindings* (:class:`~f2loopy.frontend.procedure_dummies.Binding` s, any
    kernel's) say.  In collecting mode returns ``(kernel or None, errors)``."""
    errors: list[FortranError] | None = [] if collect else None
    try:
        # the parent's own work on downloaded code: bounded, located
        with parent_isl_limit(f"translating '{proc.name}'", src.span(proc.line),
                              FortranError):
            kernel = _lower(src, proc, registry, errors, bindings)
    except FortranError as exc:
        if errors is None:
            raise
        errors.append(exc)
        kernel = None
    if collect:
        return (None if errors else kernel), errors
    return kernel


def _lower(src, proc, registry, errors, bindings=()):
    first_errors: list | None = [] if errors is not None else None
    prep = proc.prepare(src, registry, first_errors)
    bound: tuple = ()
    if prep.procedure_dummies or any(b.kernel == proc.name.lower() for b in bindings):
        from f2loopy.frontend.procedure_dummies import bind_kernel
        proc, bound = bind_kernel(src, proc, prep, registry, bindings)
        prep = proc.prepare(src, registry, errors)
    elif first_errors:
        errors.extend(first_errors)
    state = LoweringState(collect=errors is not None)
    symtab = prep.symtab
    dummies = []
    derived_of = {}         # flattened component (lower) -> the derived-type dummy
    for d in prep.dummies:
        sym = symtab.get(d)
        if d in prep.procedure_dummies:
            continue            # bound: the kernel calls the procedure
        if sym.derived is not None:
            kernel_derived_check(sym, proc.name)
            for leaf in leaves(sym):
                dummies.append(leaf.name)
                derived_of[leaf.name.lower()] = sym
        else:
            dummies.append(d)
    if prep.result_name is not None:
        # a function as a kernel: its result is an argument the glue returns
        rsym = symtab.get(prep.result_name)
        kernel_derived_check(rsym, proc.name)
        rsym.is_dummy = True
        rsym.intent = "out"
        dummies.append(prep.result_name)
    # module variables: arguments the glue passes (named as the subroutine
    # names them, also where what it inlines uses them)
    storage = [s for s in symtab.symbols() if s.storage is not None]
    for sym in storage:
        state.storage_names.setdefault(sym.storage_key or sym.storage, sym.name)
        state.storage_by_name.setdefault(sym.name, sym)
    lowering = UnitLowering(src, symtab, dummies + [s.name for s in storage], prep.written,
                            prep.do_variables,
                            state=state, registry=registry, unit_name=proc.name,
                            statement_functions=prep.statement_functions,
                            module_info=proc.module,
                            callees_may_stop=not file_may_stop(src.text) and
                            registry.calls_may_stop(prep.names - prep.written, symtab,
                                                    proc.module))
    state.taken_names.update(prep.names)
    lowering.lower_body(prep.body)
    lowering.prune_loop_scalars()
    check_pointer_reads(lowering, symtab, lowering.instructions)
    if state.errors:
        errors.extend(state.errors)

    first = prep.first_line
    args = []
    for d in dummies:
        leaf = symtab.get(d)
        allocatable = d.lower() in derived_of and "allocatable" in leaf.attributes
        if d.lower() in derived_of and d.lower() not in lowering.used and not (
                allocatable and has_dope(lowering, leaf)):
            continue           # a component the kernel does not use
        try:
            owner = derived_of.get(d.lower())
            role = None
            if owner is not None:
                tdef = owner.derived
                role = Component(path=tuple(leaf.path), type_module=tdef.module or "",
                                 type_name=tdef.name, type_rank=len(owner.dims or ()),
                                 pointers=pointer_positions(tdef, leaf.path))
            if allocatable and role is not None:
                args.extend(component_arguments(lowering, leaf, role))
                continue
            arg = make_arg(src, prep.reader, lowering, symtab, d, first,
                            is_result=d == prep.result_name)
            if role is not None:
                arg = arg.copy(role=role)
            args.append(arg)
        except FortranError as exc:
            if errors is None:
                raise
            errors.append(exc)
    args.extend(storage_arguments(symtab, lowering))
    # the extents of assumed-shape arrays, which the host glue passes
    for (array, axis), name in state.assumed_extents.items():
        sym = symtab.get(array)
        if sym.derived is not None or sym.path is not None:
            root = sym.path[0] if sym.path is not None else sym.name
            raise UnsupportedFeatureError(
                f"assumed-shape arrays of derived type ('{root}') are not supported: declare "
                f"its bounds ({root}(n))", symtab.get(root).span)
        args.append(ScalarArg(name=name, dtype=np.dtype(np.int32), intent="in",
                              span=sym.span, role=Extent(array=sym.name, axis=axis)))
    args.extend(presence_arguments(lowering, symtab, prep.dummies))
    temporaries = _make_temporaries(src, lowering, symtab, dummies + [s.name for s in storage])
    if errors:
        return None
    kernel = Kernel(
        name=proc.name,
        assumptions=_conformance_assumptions(state.conformance,
                                             state.assumed_extents.values()),
        args=tuple(args),
        temporaries=FrozenMap(temporaries),
        domains=tuple(lowering.domains),
        instructions=tuple(lowering.instructions),
        loop_exits=FrozenMap(state.loop_exits),
        error_sites=tuple(state.error_sites),
        prints=tuple(state.prints),
        span=src.span(first, proc.name),
        module=proc.module.name if proc.module is not None else None,
        module_data=unused_module_data(symtab, args),
        bind_name=bind_name(proc),
        host_program=proc.module is not None and proc.module.is_program,
        bound_procedures=bound,
    )
    check_bounds_unchanged(kernel)
    from f2loopy.frontend.local_allocatables import check_saved_work_arrays
    check_saved_work_arrays(kernel, state.saved_work)
    return add_program_order_dependencies(kernel)


def _conformance_assumptions(pairs, extents):
    """The parameter set where every pair of extents agrees (what Fortran
    requires of conforming operands), or None for no assumption.  Extents of
    assumed-shape arrays (*extents*) are not negative."""
    if not pairs:
        return None
    result = None
    for name in extents:
        s = isl.Set(f"[{name}] -> {{ : {name} >= 0 }}")
        result = s if result is None else isl.Set.intersect(*align_params(result, s))
    for a, b in pairs:
        names = sorted(variables_read(a) | variables_read(b))
        space = make_space([], names).params()
        try:
            eq = pwaff_from_expr(a, space).eq_set(pwaff_from_expr(b, space))
        except (NonAffineError, isl.Error):
            continue
        result = eq if result is None else isl.Set.intersect(*align_params(result, eq))
    return result.coalesce() if result is not None else None


def _make_temporaries(src, lowering: UnitLowering, symtab, dummies) -> dict:
    temps = {}
    dummy_set = {d.lower() for d in dummies}
    for sym in symtab.symbols():
        low = sym.name.lower()
        if low in dummy_set or low not in lowering.used or "local_allocatable" in sym.attributes:
            continue
        if (sym.is_parameter or sym.is_initialized) and not sym.is_array:
            continue
        shape: tuple = ()
        lbs: tuple = ()
        space = None
        constant = sym.is_parameter or sym.is_initialized
        if sym.is_array:
            shape, lbs = array_dims(src, DeclarationReader(src, symtab, lowering.dummies), lowering,
                               sym)
            if None in shape:
                raise FortranError(f"local array '{sym.name}' cannot have an assumed size "
                                   "('*')", sym.span)
            shape = tuple(s if _constant_or(s, None) is None else max(0, _constant_or(s, 0))
                          for s in shape)
            lbs = tuple(_constant_or(lb, lb) for lb in lbs)
            if not all(isinstance(x, int) for x in shape + lbs):
                # an automatic array: its bounds depend on scalar arguments the
                # subroutine leaves unchanged (checked by array_dims); device scratch
                # memory that the host allocates for each call
                if constant:
                    raise FortranError(f"constant array '{sym.name}' needs constant "
                                       "bounds", sym.span)
                space = AddressSpace.GLOBAL
        init = sym.value if isinstance(sym.value, np.ndarray) else None
        if constant and init is None:
            init = np.zeros(shape, dtype=sym.dtype, order="F")
        temps[sym.name] = Temporary(
            name=sym.name, dtype=np.dtype(sym.dtype), shape=shape, lower_bounds=lbs,
            span=sym.span, initializer=init, read_only=constant, address_space=space)
    temps.update(lowering.extra_temporaries)
    return temps


def _constant_or(expr, default):
    """*expr*'s value as an int if it is constant, else *default*."""
    try:
        return int(evaluate_constant(expr))
    except NotConstant:
        return default
