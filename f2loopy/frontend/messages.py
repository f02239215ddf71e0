"""Message dummies: a ``character`` dummy argument the kernel assigns, as
every CCPP physics scheme does with ``character(len=*), intent(out) ::
errmsg`` (``errmsg = ''`` on entry, ``errmsg = 'negative pressure'`` with
``errflg = 1`` under a rare condition).

A kernel cannot hold text, but it can say *which* text it assigned when the
texts are constants: the dummy becomes an int32 argument the kernel writes,
0 on entry (the glue passes 0) and ``i`` after ``errmsg = messages[i - 1]``
(:attr:`f2loopy.ir.roles.Character.messages`, in the order of the first
assignment of each text in the source).  The glues turn the code back into
the text: 0 keeps the caller's value (the value on entry for
``intent(inout)``; an ``intent(out)`` dummy never assigned is undefined in
Fortran, and the caller's variable is left as it was).

An assignment is the last one in the sequential order exactly when the code
is: the code is an ordinary written scalar, which the kernel's dependences
order like any other (a loop that may assign it in two iterations stays
sequential).

Supported values: a character constant, a concatenation of constants, a
named character constant (``''`` too).  A text computed at run time
(concatenation with a variable, ``write(errmsg, fmt) value``) and any read
of the dummy stay located errors.  A procedure the kernel calls with the
dummy may assign its own character dummy (bound to the kernel's,
:func:`bind_message`): its texts join the kernel's table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost


def is_message_dummy(low: LoweringHost, sym) -> bool:
    """Whether *sym* is a character dummy of the kernel's own procedure that
    the procedure assigns (not one of a procedure being inlined, whose dummy
    is bound to the caller's actual argument)."""
    name = sym.name.lower()
    return bool(sym.is_dummy and low.parent is None and not sym.is_array
                and low.bindings.get(name) is None and name in low.written)


#: :attr:`~f2loopy.frontend.bindings.ScalarBinding.what` of a character
#: dummy of a called procedure bound to the kernel's message dummy (the
#: binding's expression, a variable, names it)
MESSAGE = "a message argument"


def message_root(low: LoweringHost, sym) -> str | None:
    """The name of the kernel's message dummy that *sym* stands for: itself,
    or the one a called procedure's character dummy is bound to; else None."""
    from f2loopy.frontend.bindings import ScalarBinding
    binding = low.bindings.get(sym.name.lower())
    if binding is not None:
        if isinstance(binding, ScalarBinding) and binding.what == MESSAGE and \
                isinstance(binding.expr, p.Variable):
            return binding.expr.name
        return None
    return sym.name if is_message_dummy(low, sym) else None


def bind_message(low: LoweringHost, node):
    """The binding of a called procedure's character dummy, which it assigns,
    to the actual argument *node* when that is the kernel's message dummy (or
    a dummy bound to it); None for any other actual argument."""
    if isinstance(node, F.Actual_Arg_Spec):
        node = node.items[1]
    if not isinstance(node, F.Name):
        return None
    sym = low.symtab.get(str(node))
    if sym is None:
        return None
    root = message_root(low, sym)
    if root is None:
        return None
    from f2loopy.frontend.bindings import ScalarBinding
    return ScalarBinding(p.Variable(root), True, MESSAGE)


def message_text(low: LoweringHost, node, name: str) -> str:
    """The text of the constant character expression *node* assigned to
    message dummy *name*, else a located error."""
    while isinstance(node, F.Parenthesis):
        node = node.items[1]
    if isinstance(node, F.Char_Literal_Constant):
        if node.items[1] is not None:
            raise low.error(f"'{name}' is assigned a character constant of kind "
                            f"{node.items[1]}; only default character messages are "
                            "supported", str(node), UnsupportedFeatureError)
        quoted = str(node.items[0])         # (quotes removed, doubled quotes undone)
        return quoted[1:-1].replace(quoted[0] * 2, quoted[0])
    if isinstance(node, F.Level_3_Expr) and str(node.items[1]).strip() == "//":
        return message_text(low, node.items[0], name) + message_text(low, node.items[2], name)
    if isinstance(node, F.Name):
        sym = low.symtab.get(str(node))
        if sym is not None and sym.text is not None:
            return sym.text
    raise low.error(f"'{name}' is assigned a text computed at run time ({node}): a kernel "
                    "only returns which of its constant messages it assigned; assign a "
                    "character constant (or a concatenation of constants) and return the "
                    "value in an integer argument", str(node), UnsupportedFeatureError)


def assign_message(low: LoweringHost, lhs_node, sym, rhs_node) -> None:
    """``errmsg = 'text'``: the code of the text assigned to the message
    dummy *sym* (or to the kernel's message dummy it is bound to)."""
    name = sym.name
    text = message_text(low, rhs_node, name)
    root = message_root(low, sym) or name
    table = low.st.messages.setdefault(root.lower(), [])
    if text not in table:
        table.append(text)
    code = np.int32(table.index(text) + 1)
    assignee, dtype = low.lower_assignee(lhs_node)
    if not isinstance(assignee, p.Variable):
        raise low.error(f"internal error: message dummy '{name}' is not a scalar", name)
    low.add_assignment(assignee, np.dtype(np.int32), code, name)


def refuse_message_read(low: LoweringHost, name: str):
    """The error for a use of message dummy *name* other than assigning it."""
    return low.error(f"'{name}' is a character argument the kernel assigns (a message): a "
                     "kernel only records which constant text it assigned, so it can only "
                     f"assign '{name}', not read, compare or pass it", name,
                     UnsupportedFeatureError)


def refuse_internal_write(low: LoweringHost, node) -> None:
    """A located error for ``write(errmsg, fmt) values`` (an internal write
    into a character variable); nothing for any other ``write``."""
    control = node.items[0]
    for k, spec in enumerate(control.items if control is not None else ()):
        key, value = spec.items
        key = str(key).lower() if key is not None else ("unit", "fmt")[min(k, 1)]
        if key != "unit" or not isinstance(value, F.Name):
            continue
        sym = low.symtab.get(str(value))
        meta = np.dtype(sym.dtype).metadata if sym is not None and sym.dtype is not None \
            else None
        if meta and "character" in meta:    # (f2loopy.frontend.characters' dtype)
            raise low.error(f"'write' into character variable '{value}' (an internal write) "
                            "is not supported: a kernel cannot build text at run time; assign "
                            f"a constant message ({value} = 'text') and return the values in "
                            "numeric arguments", str(value), UnsupportedFeatureError)


__all__ = ["MESSAGE", "assign_message", "bind_message", "is_message_dummy", "message_root",
           "message_text", "refuse_internal_write",
           "refuse_message_read"]
