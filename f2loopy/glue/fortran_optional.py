"""Optional dummy arguments in the Fortran glue (see
:mod:`f2loopy.frontend.optionals`): the glue's dummies are optional too, so
an absent argument is passed on as absent; the presence flag comes from
``present()`` (:func:`~f2loopy.glue.fortran_body.glue_body`),
an absent scalar is passed as a zero and an absent array as an empty buffer.
"""

from __future__ import annotations

from f2loopy.glue.fexpr import LOCAL_PREFIX, f_string


def pass_optional_scalar(body, locals_, after_run, index, s, v, ftype, nbytes, lint) -> None:
    """Pass optional scalar *s* (a :class:`~f2loopy.glue.plan.Scalar` step;
    the glue's dummy *v*) as kernel argument *index* through a local copy
    (zero where absent), and copy a written one back where present."""
    a = s.arg
    tmp = f"{LOCAL_PREFIX}o_{a.name}"
    logical = a.dtype.kind == "b"
    locals_.append(f"{f'integer({lint})' if logical else ftype}, target :: {tmp}")
    zero = f"0_{lint}" if logical else "0"
    body.add(f"{tmp} = {zero}")
    value = f"merge(1_{lint}, 0_{lint}, {v})" if logical else v
    body.add(f"if (present({v})) {tmp} = {value}")
    what = "value" if s.role == "value" else "scalar"
    body.add(f"call f2l_c%{what}({index}, c_loc({tmp}), {nbytes}_c_size_t)")
    if s.role == "scalar_ref":
        after_run.append(f"if (present({v})) then")
        after_run.append(f"  if (f2l_c%status == F2L_OK) {v} = {tmp}"
                         + (" /= 0" if logical else ""))
        after_run.append("end if")


def guard_present(lines: list, start: int, v: str, absent: list | None = None) -> None:
    """Run *lines* from *start* on only where optional *v* is present (else
    the *absent* lines)."""
    inner = ["  " + x for x in lines[start:]]
    pad = inner[0][:len(inner[0]) - len(inner[0].lstrip())][2:] if inner else "    "
    out = [f"{pad}if (present({v})) then"] + inner
    if absent:
        out += [f"{pad}else"] + [f"{pad}  {x}" for x in absent]
    out.append(f"{pad}end if")
    lines[start:] = out


def absent_array(index: int, a, nbytes: int) -> list[str]:
    """The call passing an empty buffer for absent optional array *a*."""
    return [f"call f2l_c%array({index}, {f_string(a.name)}, {f_string(a.name)}, c_null_ptr, "
            f"{a.ndim}, 0_c_int64_t, 0_c_int64_t, {nbytes}_c_int64_t, .false.)"]
