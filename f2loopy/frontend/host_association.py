"""Host association: the variables of its host that an internal procedure
(``contains`` in a subroutine) uses without declaring them.

:func:`host_variables` names them when the procedure is prepared (its symbol
table sees the host's, see :func:`~f2loopy.frontend.units.prepare_procedure`);
the inliner binds them to the host's own variables
(:meth:`~f2loopy.frontend.inline.InliningMixin.bind_host_variables`).
"""

from __future__ import annotations

import re

from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.source import statement_lines


def host_variables(src, proc, symtab, host_prep, dummies, do_vars) -> list:
    """The variables of its host that internal procedure *proc* uses (host
    association), lower-case: the host's dummy arguments and locals that
    *proc* mentions (in its declarations or body) without declaring them.
    The inliner binds them to the host's own variables, like arguments.
    Parameters, module data, common blocks and saved locals need no binding
    (they are the same names everywhere).  A derived-type variable of the
    host, or one *proc* uses as its loop variable, is refused, located at
    its first use."""
    host_symtab = host_prep.symtab
    mentioned = {str(n).lower() for n in walk(proc.node, F.Name)}
    own = {d.lower() for d in dummies} | {proc.name.lower()} | set(proc.siblings or {})
    out = []
    for name in sorted(mentioned - own):
        if symtab.is_local(name) or not host_symtab.is_local(name):
            continue
        sym = host_symtab.get(name)
        why = None
        if sym.derived is not None or sym.path is not None:
            why = "derived-type variables of the host are not supported"
        elif sym.is_parameter or sym.storage is not None or \
                (name not in {d.lower() for d in host_prep.dummies} and
                 sym.dtype is None and not sym.is_array):
            continue          # a constant, module data, or no variable (a procedure)
        elif name in do_vars:
            why = "a loop variable of the host is not supported: declare it in " \
                f"'{proc.name}'"
        if why is not None:
            _host_error(src, proc, name, why)
        out.append(name)
    return out


def _host_error(src, proc, name, why) -> None:
    host = proc.host
    first = statement_lines(proc.node.children[0])[0]
    last = max(first, statement_lines(proc.node.children[-1])[0])
    line = first
    for ln in range(first + 1, last + 1):
        if 0 < ln <= len(src.lines) and re.search(rf"\b{re.escape(name)}\b",
                                                  src.lines[ln - 1], re.IGNORECASE):
            line = ln
            break
    raise UnsupportedFeatureError(
        f"internal procedure '{proc.name}' uses '{name}' of its host '{host.name}' "
        f"({why})", src.span(line, name))
