"""The error buffer in the Fortran glue (see :mod:`f2loopy.frontend.errors`).

The glue passes a zeroed array as the kernel's error buffer and, after the
launch, looks at it: if the kernel reached an error site, then

* with ``status=``: the status is ``F2L_ERROR_STOP`` and
  ``f2l_error_message()`` says what the Fortran would have printed;
* without: the glue does what the Fortran does there, with the same
  statements: the ``write``/``print`` of the same text and integers, then
  the same ``stop``/``error stop`` (same message, same exit status), or
  ``call xerbla`` with the same arguments (the program's own xerbla, which
  usually stops; if it returns, so does the call, as the subroutine would).
"""

from __future__ import annotations

from f2loopy.glue.fexpr import LOCAL_PREFIX, f_string
from f2loopy.ir.control import ERROR_VALUES

ERR = f"{LOCAL_PREFIX}err"


def pass_error_buffer(body, locals_, index: int) -> None:
    n = ERROR_VALUES + 1
    locals_.append(f"integer(c_int32_t), target :: {ERR}({n})")
    body.add(f"{ERR} = 0")
    body.add(f"call f2l_c%array({index}, \"error buffer\", \"({n})\", c_loc({ERR}), 1, "
             f"{n}_c_int64_t, {n}_c_int64_t, 4_c_int64_t, .true.)")


def _value(k: int) -> str:
    return f"{ERR}({k + 2})"


def _message(site) -> str:
    """A Fortran character expression: the site's message (as the Python
    glue's KernelStopError says it)."""
    where = f"{site.span.filename}:{site.span.line}: " if site.span else ""
    pieces = [f_string(where)]
    first = True

    def text(t):
        pieces.append(f_string(t))

    for act in site.actions:
        if not first:
            text("; ")
        first = False
        if act[0] == "write":
            for j, (kind, x) in enumerate(act[3]):
                if j:
                    text(" ")
                if kind == "text":
                    text(x)
                else:
                    pieces.append(f"f2l_to_string({_value(x)})")
        elif act[0] == "xerbla":
            text(f"On entry to {act[1].strip()} parameter number ")
            pieces.append(f"f2l_to_string({_value(act[2])})")
            text(" had an illegal value")
        else:
            word = "STOP" if act[0] == "stop" else "ERROR STOP"
            text(word if act[1] is None else f"{word} {act[1]}")
    return " // ".join(pieces)


def _replay(site) -> list[str]:
    """The Fortran statements of *site*."""
    out = []
    for act in site.actions:
        if act[0] == "write":
            fmt = "*" if act[2] == "*" else f_string(act[2])
            items = ", ".join(f_string(x) if kind == "text" else _value(x)
                              for kind, x in act[3])
            out.append(f"write({act[1]}, {fmt}) {items}")
        elif act[0] == "xerbla":
            out.append(f"call xerbla({f_string(act[1])}, {_value(act[2])})")
        else:
            code = "" if act[1] is None else \
                f" {act[1]}" if isinstance(act[1], int) else f" {f_string(act[1])}"
            out.append(f"{act[0]}{code}")
    return out


def handle_stops(body, kernel, status: str) -> None:
    body.add(f"if (f2l_c%status == F2L_OK .and. {ERR}(1) /= 0) then")
    body.add(f"if (present({status})) then", 6)
    body.add(f"select case ({ERR}(1))", 8)
    for k, site in enumerate(kernel.error_sites, 1):
        body.add(f"case ({k})", 8)
        body.add(f"call f2l_c%fail(F2L_ERROR_STOP, {_message(site)})", 10)
    body.add("end select", 8)
    body.add("else", 6)
    body.add("call f2l_c%finish()", 8)
    body.add(f"select case ({ERR}(1))", 8)
    for k, site in enumerate(kernel.error_sites, 1):
        body.add(f"case ({k})", 8)
        for line in _replay(site):
            body.add(line, 10)
    body.add("end select", 8)
    body.add("return", 8)
    body.add("end if", 6)
    body.add("end if")
