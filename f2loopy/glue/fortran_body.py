"""The body of a Fortran glue procedure, printed from the kernel's host plan
(:mod:`f2loopy.glue.plan`): an ``f2l_call`` (``runtime/f2loopy_runtime.f90``)
begun, the extents of assumed-shape arrays taken, fixed values and
assumptions checked, every argument registered with its slot (its index
among the kernel's parameters), the launch or the launch sequence
(:mod:`f2loopy.glue.fortran_launches`), the error buffer looked at and the
call finished.  The procedure around it is :mod:`f2loopy.glue.fortran`'s.
"""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import CodegenError
from f2loopy.glue.fexpr import (
    LOCAL_PREFIX, HostExpressionError, f_bool_expr, f_int_expr, f_literal, f_string, local_int, wrap)
from f2loopy.glue.fortran_decl import declaration_text, fortran_type, layout_conversion
from f2loopy.glue.fortran_allocatables import (
    allocatable_declaration, dope_locals, is_pointer_array, pass_allocatable)
from f2loopy.glue.fortran_optional import absent_array, guard_present, pass_optional_scalar
from f2loopy.glue.plan import ERROR, Array, HostPlan, Scalar


class Body:
    """Lines of a glue procedure and the names its expressions use."""

    def __init__(self):
        self.lines: list[str] = []
        self.used: set[str] = set()

    def add(self, text: str, indent: int = 4):
        self.lines.extend(wrap(" " * indent + text))

    def int_expr(self, expr) -> str:
        return f_int_expr(expr, self.used)


class Procedure:
    """What the body of a glue procedure needs besides its lines: the
    dummy arguments' declarations (comment, type and attributes, name),
    its locals, and the lines taking the extents of assumed-shape arrays
    (run first: the 64-bit copies of the scalars use them)."""

    def __init__(self):
        self.body = Body()
        self.decls: list[tuple] = []
        self.locals: list[str] = []
        self.extents = Body()
        self.slots: dict = {}      # argument, temporary, error buffer or host loop -> slot
        self.count = 0             # slots taken
        self.after_run: list[str] = []

    def slot(self, name: str) -> int:
        """The next slot, now *name*'s."""
        index = self.slots[name] = self.count
        self.count += 1
        return index


def glue_body(plan: HostPlan, k, nm: dict, status: str, glue: str) -> Procedure:
    """The body of the glue procedure *glue* of *plan* (*nm*: the names the
    procedure gives the kernel's arguments; *status* its status argument)."""
    proc = Procedure()
    body = proc.body
    # the first kernel, and what its arguments must be: checked before every launch
    first = plan.launch_list()[0]
    options = f_string(' '.join(plan.build_options))
    if plan.specialized:
        # compiled per value of these arguments: the cached kernel is the
        # one built for the values of the last call (the runtime keeps one
        # program per options, so going back to earlier values rebuilds
        # nothing)
        changed = " .or. ".join(f"int({nm[name]}, c_int64_t) /= f2l_spec_{n}"
                                for n, (name, _) in enumerate(plan.specialized, 1))
        body.add(f"if (f2l_spec_built .and. ({changed})) f2l_kernel = c_null_ptr")
        for n, (name, macro) in enumerate(plan.specialized, 1):
            body.add(f"f2l_spec_{n} = int({nm[name]}, c_int64_t)")
            options += f" // {f_string(' -D' + macro + '=')} // f2l_to_string({nm[name]})"
        body.add("f2l_spec_built = .true.")
    body.add(f"call f2l_c%begin({f_string(glue)}, f2l_kernel, f2l_program(), "
             f"{options}, {f_string(first.c_name)}, "
             f"{f_string(' '.join(first.signature))})")
    for e in plan.extents:
        proc.locals.append(f"integer(c_int32_t), target :: {nm[e.name]}")
        proc.extents.add(f"{nm[e.name]} = 0")
        starts = len(proc.extents.lines), len(body.lines)
        proc.extents.add(f"if (rank({nm[e.array]}) == {e.rank}) {nm[e.name]} = "
                         f"int(size({nm[e.array]}, {e.axis + 1}), c_int32_t)")
        body.add(f"if (rank({nm[e.array]}) /= {e.rank}) call f2l_c%fail(F2L_ERROR_ARGUMENT, "
                 + f_string(f"argument '{e.array}' must have {e.rank} dimension(s), got ")
                 + f" // f2l_to_string(rank({nm[e.array]})))")
        if e.optional:
            guard_present(proc.extents.lines, starts[0], nm[e.array])
            guard_present(body.lines, starts[1], nm[e.array])
    dope_locals(plan.dope, nm, proc.locals, proc.extents,
                frozenset(a.name for a in plan.arguments
                          if isinstance(a, Array) and a.allocatable and is_pointer_array(a.arg)))
    # fixed arguments and assumptions first: sizes depend on the scalars
    for f in plan.fixed:
        _check_fixed(body, f, nm)
    _check_assumptions(body, plan, k, nm)
    hidden = {e.name: (e.array, e.axis) for e in plan.extents}
    for a in plan.arguments:
        fortran_type(a.dtype)       # (a type Fortran cannot pass is an error here)
        if isinstance(a, Array):
            _register_array(proc, a, nm, hidden)
        else:
            _register_scalar(proc, a, nm)
    for sb in plan.scratch:
        body.add(f"call f2l_c%scratch({proc.slot(sb.name)}, ({body.int_expr(sb.elements)}) "
                 f"* {sb.itemsize}_c_int64_t)")
    if plan.error is not None:
        from f2loopy.glue.fortran_errors import pass_error_buffer
        pass_error_buffer(body, proc.locals, proc.slot(ERROR))
    if plan.sequence:
        from f2loopy.glue.fortran_launches import launch_sequence
        launch_sequence(proc, plan)
    else:
        launch = plan.launches[0]
        groups = ", ".join(group_count(body, g) for g in launch.num_groups)
        local = ", ".join(group_count(body, x) for x in launch.local_size)
        body.add(f"call f2l_c%run([{groups}], [{local}])")
    for line in proc.after_run:
        body.add(line)
    if plan.error is not None:
        from f2loopy.glue.fortran_errors import handle_stops
        handle_stops(body, k, status)
    body.add(f"call f2l_c%finish({status})")
    return proc


def _register_scalar(proc: Procedure, a: Scalar, nm: dict) -> None:
    ftype, nbytes = fortran_type(a.dtype)
    is_logical = a.dtype.kind == "b"
    lkind = a.logical_kind
    if is_logical and lkind != 4:
        # the caller's storage, as the device holds it (logical(c_bool): 1 byte)
        ftype, nbytes = f"logical({lkind})", lkind
    v = nm[a.name]
    if a.hidden:
        if a.role == "value":       # else fixed: checked above, not passed
            proc.body.add(f"call f2l_c%value({proc.slot(a.name)}, c_loc({v}), "
                          f"{nbytes}_c_size_t)")
        return
    tmp = f"{LOCAL_PREFIX}v_{a.name}"
    if a.kind == "message":
        _register_message(proc, a, v, tmp, nbytes)
        return
    if a.character is not None and a.role == "value":
        # a character flag: the code of its first character, plus 256 if
        # more non-blank ones follow (f2loopy.frontend.characters)
        proc.decls.append((None, "character(len=*), intent(in)", a.name))
        proc.locals.append(f"integer(c_int32_t), target :: {tmp}")
        proc.body.add(f"{tmp} = 32")
        proc.body.add(f"if (len({v}) > 0) {tmp} = ichar({v}(1:1))")
        seen = v
        if a.character.length is not None:
            # a declared length: the dummy sees that many characters
            seen = f"{v}(1:min({a.character.length}, len({v})))"
        proc.body.add(f"if (len_trim({seen}) > 1) {tmp} = {tmp} + 256")
        proc.body.add(f"call f2l_c%value({proc.slot(a.name)}, c_loc({tmp}), "
                      f"{nbytes}_c_size_t)")
        return
    intent = "inout" if a.role == "scalar_ref" else "in"
    opt = ", optional" if a.optional else ""
    proc.decls.append((None, f"{ftype}, intent({intent}), target{opt}", a.name))
    if a.role == "fixed":
        return
    lint = {1: "c_int8_t", 2: "c_int16_t", 8: "c_int64_t"}.get(lkind, "c_int32_t")
    if a.optional:
        pass_optional_scalar(proc.body, proc.locals, proc.after_run, proc.slot(a.name), a, v,
                             ftype, nbytes, lint)
        return
    if is_logical:
        proc.locals.append(f"integer({lint}), target :: {tmp}")
        proc.body.add(f"{tmp} = merge(1_{lint}, 0_{lint}, {v})")
        ptr = f"c_loc({tmp})"
        if a.role == "scalar_ref":
            proc.after_run.append(f"if (f2l_c%status == F2L_OK) {v} = {tmp} /= 0")
    else:
        ptr = f"c_loc({v})"
    what = "value" if a.role == "value" else "scalar"
    proc.body.add(f"call f2l_c%{what}({proc.slot(a.name)}, {ptr}, {nbytes}_c_size_t)")


def _register_message(proc: Procedure, a: Scalar, v: str, tmp: str, nbytes: int) -> None:
    """A character dummy the kernel assigns (f2loopy.frontend.messages): the
    kernel writes the code of the text assigned (0: none, the caller's
    string is kept); the text is assigned to the caller's string, which
    Fortran's assignment pads with blanks or truncates to its length."""
    from f2loopy.glue.fexpr import f_string
    assert a.character is not None
    proc.decls.append((None, "character(len=*), intent(inout)", a.name))
    proc.locals.append(f"integer(c_int32_t), target :: {tmp}")
    proc.body.add(f"{tmp} = 0")
    proc.body.add(f"call f2l_c%scalar({proc.slot(a.name)}, c_loc({tmp}), {nbytes}_c_size_t)")
    proc.after_run.append("if (f2l_c%status == F2L_OK) then")
    proc.after_run.append(f"  select case ({tmp})")
    seen = v
    if a.character.length is not None:
        # a declared length: the dummy is the first so many characters
        seen = f"{v}(1:min({a.character.length}, len({v})))"
    for i, text in enumerate(a.character.messages, start=1):
        proc.after_run.append(f"  case ({i})")
        proc.after_run.append(f"    {seen} = {f_string(text)}")
    proc.after_run.append("  end select")
    proc.after_run.append("end if")


def _register_array(proc: Procedure, a: Array, nm: dict, hidden: dict) -> None:
    body = proc.body
    ftype, nbytes = fortran_type(a.dtype)
    lkind = a.logical_kind
    if lkind and lkind != 4:
        ftype, nbytes = f"logical({lkind})", lkind
    intent = "inout" if a.written else "in"
    v = nm[a.name]
    if a.allocatable:
        decl_text = f"{a.name}({', '.join(':' * a.arg.ndim)}), " + (
            "pointer" if is_pointer_array(a.arg) else "allocatable")
        proc.decls.append((decl_text, allocatable_declaration(ftype, a.arg), a.name))
        pass_allocatable(body, proc.slot(a.name), a.arg, v, decl_text, elements(body, a.arg),
                         nbytes, a.written)
        return
    decl_text = declaration_text(a.arg, hidden)
    opt = ", optional" if a.optional else ""
    proc.decls.append((decl_text, f"{ftype}, dimension(..), intent({intent}), contiguous, "
                       f"target{opt}", a.name))
    start = len(body.lines)
    if lkind:
        body.add(f"if (storage_size({v}) /= {8 * lkind}) call f2l_c%fail("
                 "F2L_ERROR_ARGUMENT, " + f_string(f"argument '{a.name}': the kernel needs "
                                                    f"{lkind}-byte logicals") + ")")
    common = (f"{proc.slot(a.name)}, {f_string(a.name)}, {f_string(decl_text)}, "
              f"c_loc({v}), rank({v}), size({v}, kind=c_int64_t)")
    written = ".true." if a.written else ".false."
    conversion = layout_conversion(a.arg)
    if isinstance(conversion, str):
        body.add(f"call f2l_c%fail(F2L_ERROR_ARGUMENT, "
                 f"{f_string(f'argument {a.name!r}: ' + conversion)})")
    elif conversion is not None:
        extents, terms, device_elems = conversion
        ext = ", ".join(body.int_expr(e) for e in extents)
        trm = ", ".join(body.int_expr(t) for t in terms)
        body.add(f"call f2l_c%array_mapped({common}, {nbytes}_c_int64_t, [{ext}], [{trm}], "
                 f"{body.int_expr(device_elems)}, {written})")
    else:
        body.add(f"call f2l_c%array({common}, {elements(body, a.arg)}, {nbytes}_c_int64_t, "
                 f"{written})")
    if a.optional:
        guard_present(body.lines, start, v, absent_array(proc.slots[a.name], a.arg, nbytes))


def int64_copies(proc: Procedure, k, nm: dict) -> list[str]:
    """The 64-bit copies of the integer scalars the size expressions use
    (their declarations go to the procedure's locals)."""
    used = proc.body.used
    copies = []
    for a in k.args:
        if a.name in used:
            if a.shape or np.dtype(a.dtype).kind not in "iu":
                raise CodegenError(f"the Fortran glue of '{k.name}' needs '{a.name}' as an "
                                   "integer scalar to compute sizes", k.span)
            proc.locals.append(f"integer(c_int64_t) :: {local_int(a.name)}")
            copies.append(f"    {local_int(a.name)} = {nm[a.name]}")
    unknown = used - {a.name for a in k.args}
    if unknown:
        raise CodegenError(f"the Fortran glue of '{k.name}' cannot compute sizes that depend on "
                           + ", ".join(sorted(unknown)), k.span)
    return copies


def group_count(body: Body, expr) -> str:
    if isinstance(expr, (int, np.integer)):
        return f"{max(0, int(expr))}_c_int64_t"
    return f"max(0_c_int64_t, {body.int_expr(expr)})"


def elements(body: Body, arg) -> str:
    """Elements the declaration of *arg* needs (-1: assumed size)."""
    if any(s is None for s in arg.shape):
        return "-1_c_int64_t"
    const = 1
    factors = []
    for s in arg.shape:
        if isinstance(s, (int, np.integer)):
            const *= max(0, int(s))
        else:
            factors.append(f"max(0_c_int64_t, {body.int_expr(s)})")
    if const != 1 or not factors:
        factors.insert(0, f"{const}_c_int64_t")
    return " * ".join(factors)


def _check_fixed(body: Body, f, nm):
    lit = f_literal(f.value, f.dtype)
    dt = f.dtype
    differs = ".neqv." if dt.kind == "b" else "/="
    if dt.kind == "f":     # as short as the kernel's precision allows: 1.4, not 1.39999997
        shown = np.format_float_positional(dt.type(f.value), unique=True, trim="0")
    else:
        shown = f"{f.value}"
    body.add(f"if ({nm[f.name]} {differs} {lit}) call f2l_c%fail(F2L_ERROR_ARGUMENT, "
             + f_string(f"{f.what} was fixed to {shown} when the kernel was "
                        "translated; got ") + f" // f2l_to_string({nm[f.name]}))")


def _check_assumptions(body: Body, plan: HostPlan, k, nm):
    a = plan.assumption
    if a is None:
        return
    try:
        test = f_bool_expr(a.condition, body.used)
    except HostExpressionError as exc:
        raise CodegenError(f"the Fortran glue cannot check the assumption {a.text}: {exc}",
                           k.span) from None
    values = " // \", \" // ".join(f"\"{n} = \" // f2l_to_string({nm[n]})" for n in a.names)
    message = f_string(f"the kernel was translated assuming {a.text}; the arguments violate it (")
    body.add(f"if (.not. {test}) call f2l_c%fail(F2L_ERROR_ARGUMENT, {message}"
             + (f" // {values}" if values else "") + " // \")\")")
