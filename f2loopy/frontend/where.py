"""``where`` statements and constructs (with ``elsewhere`` and masked
``elsewhere``, nested): masked array assignments.

Each assignment of the construct becomes the array assignment it is, guarded
element by element by the masks that control it (``.not. m1 .and. m2`` in
the second branch...).  Fortran evaluates a mask once, before the statements
it controls; when none of them assigns a variable the mask reads, evaluating
it again in every assignment gives the same values, so it is written inline.
Otherwise the mask is first stored in a logical temporary of its shape
(device scratch memory), read by the assignments at their own positions.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.ir.types import BOOL, is_logical
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.lowering_state import ElementalContext
from f2loopy.frontend.declarations import statement_lines
from f2loopy.ir.expressions import make_subscript, variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.kernel import AddressSpace

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


class WhereMixin(_Host):
    """Lowering of ``where`` (mixed into UnitLowering)."""

    # where_guards: callables ctx -> mask expression, outermost first;
    # where_assigning: lowering an assignment of a 'where' (f2loopy.frontend.scopes)

    def where_element_guard(self, ctx):
        """The hook :meth:`~f2loopy.frontend.arrays.ArraySyntaxMixin.emit_elemental`
        calls for the element assignments of an array assignment (not the
        loops of reductions or temporaries of its right-hand side): in a
        ``where``, the guard that masks them at the positions of *ctx*, else
        None."""
        if not (self.where_assigning and self.where_guards):
            return None
        return self.in_context(ctx, self.where_guard, ctx)

    def stmt_Where_Stmt(self, node):
        mask_node, assignment = node.items
        self.lower_where([(mask_node, [assignment], self.lines)])

    def stmt_Where_Construct(self, node):
        branches: list = []     # (mask node or None, statements, lines)
        for ch in node.content:
            if isinstance(ch, F.Where_Construct_Stmt):
                branches.append((ch.items[0], [], statement_lines(ch)))
            elif isinstance(ch, F.Masked_Elsewhere_Stmt):
                branches.append((ch.items[0], [], statement_lines(ch)))
            elif isinstance(ch, F.Elsewhere_Stmt):
                branches.append((None, [], statement_lines(ch)))
            elif isinstance(ch, F.End_Where_Stmt):
                pass
            elif isinstance(ch, F.Comment):
                pass
            elif branches:
                branches[-1][1].append(ch)
        self.lower_where(branches)

    def lower_where(self, branches):
        assigned = set()
        for _, body, _ in branches:
            for st in body:
                for a in walk(st, F.Assignment_Stmt):
                    lhs = a.items[0]
                    assigned.add(str(lhs.items[0] if isinstance(lhs, F.Part_Ref)
                                     else lhs).lower())
        outer = len(self.where_guards)
        earlier: list = []       # guards of the masks of the earlier branches
        with self.where_branches():
            for mask_node, body, lines in branches:
                with self.at(lines):
                    guard = None
                    del self.where_guards[outer:]
                    self.where_guards.extend(_negated(g) for g in earlier)
                    if mask_node is not None:
                        names = {str(n).lower() for n in walk(mask_node, F.Name)}
                        if names & assigned and not _same_elements(mask_node, body):
                            guard = self.where_snapshot(mask_node,
                                                        sorted(names & assigned)[0])
                        else:
                            guard = self.where_inline(mask_node)
                    if guard is not None:
                        self.where_guards.append(guard)
                        earlier.append(guard)
                    for st in body:
                        self.lower_where_statement(st)

    def lower_where_statement(self, st):
        with self.at_statement(st):
            try:
                if isinstance(st, F.Assignment_Stmt):
                    lhs_node = st.items[0]
                    if not self.is_array_assignment(lhs_node):
                        raise self.error("an assignment in a 'where' must assign an array "
                                         "(or an array section)", str(lhs_node))
                    with self.where_assignment():
                        self.stmt_Assignment_Stmt(st)
                elif isinstance(st, (F.Where_Stmt, F.Where_Construct)):
                    self.lower_statement(st)
                else:
                    raise self.error("only array assignments and nested 'where' may appear "
                                     "in a 'where'", str(st).split("(")[0].split()[0].lower())
            except FortranError as exc:
                self.record(exc)

    def where_guard(self, ctx):
        """The guard of an assignment in the elemental context *ctx*, or None."""
        if not self.where_guards:
            return None
        terms = [g(ctx) for g in self.where_guards]
        return terms[0] if len(terms) == 1 else p.LogicalAnd(tuple(terms))

    # {{{ masks

    def mask_text(self, mask_node) -> str:
        """The mask as written on the statement's line (to point at it)."""
        first = self.lines[0]
        line = self.src.lines[first - 1] if 0 < first <= len(self.src.lines) else ""
        m = re.search(r"\bwhere\s*\(", line, re.IGNORECASE)
        if m:
            depth, start = 1, m.end()
            for k in range(start, len(line)):
                depth += {"(": 1, ")": -1}.get(line[k], 0)
                if depth == 0:
                    return line[start:k].strip() or str(mask_node)
        return str(mask_node)

    def where_inline(self, mask_node):
        text = self.mask_text(mask_node)
        lines = self.lines

        def guard(ctx):
            with self.at(lines):           # errors point at the mask
                before = ctx.operands
                mask = self.expr(mask_node)
                if not is_logical(self.checked_dtype(mask)):
                    raise self.error("the mask of a 'where' must be logical", text)
                # (an array operand, even if folding left it out: .false. .and. a > 0)
                if ctx.operands == before:
                    raise self.error("the mask of a 'where' must be an array expression",
                                     text)
            return mask
        return guard

    def where_snapshot(self, mask_node, changed):
        """Store the mask in a logical temporary now; the guard reads it."""
        text = self.mask_text(mask_node)
        ctx = ElementalContext(self)
        mask = self.in_context(ctx, self.expr, mask_node)
        if not is_logical(self.checked_dtype(mask)):
            raise self.error("the mask of a 'where' must be logical", text)
        if ctx.rank is None:
            raise self.error("the mask of a 'where' must be an array expression", text)
        extents = []
        for lo, hi, st in ctx.axes:
            ext = normalize_integer(p.FloorDiv(p.Sum((hi, p.Product((-1, lo)), st)), st)) \
                if st != 1 else normalize_integer(p.Sum((hi, p.Product((-1, lo)), 1)))
            try:
                ext = max(0, int(evaluate_constant(ext)))
            except NotConstant:
                bad = [n for n in variables_read(ext) if not self.is_invariant_param(n)]
                if bad:
                    raise self.error(
                        f"the mask of this 'where' reads '{changed}', which the construct "
                        f"assigns, and its shape depends on '{bad[0]}': store the mask in "
                        "a logical array first", text, UnsupportedFeatureError) from None
            extents.append(ext)
        name = self.new_temporary("where_mask", BOOL, shape=tuple(extents),
                                  lower_bounds=(0,) * len(extents),
                                  address_space=AddressSpace.GLOBAL)
        element = make_subscript(name, tuple(ctx.positions))
        with self.where_assignment():
            self.emit_elemental(ctx, "ascending", name, lambda: self.add_assignment(
                element, BOOL, mask, text, base_id=name), subst_targets=True)

        def guard(use_ctx):
            if use_ctx.rank != len(extents):
                raise self.error(f"the mask has rank {len(extents)} but the assignment has "
                                 f"rank {use_ctx.rank}")
            for d, ext in enumerate(extents):
                have = use_ctx.extents[d]
                if isinstance(ext, int) and have is not None and have != ext:
                    raise self.error(f"array shapes do not conform: dimension {d + 1} of "
                                     f"the mask has {ext} elements, of the assignment "
                                     f"{have}")
            return make_subscript(name, tuple(use_ctx.positions))
        return guard

    # }}}


def _negated(guard):
    return lambda ctx: p.LogicalNot(guard(ctx))


def _same_elements(mask_node, body) -> bool:
    """Whether *body* is one array assignment and the mask reads the array it
    assigns only as the same section: each element's mask is then evaluated
    just before that element is assigned, which is all Fortran asks."""
    if len(body) != 1 or not isinstance(body[0], F.Assignment_Stmt):
        return False
    lhs = body[0].items[0]
    target = str(lhs.items[0] if isinstance(lhs, F.Part_Ref) else lhs)
    text = str(mask_node)
    word = re.compile(rf"\b{re.escape(target)}\b", re.IGNORECASE)
    if isinstance(lhs, F.Part_Ref):
        text = text.replace(str(lhs), "")
        return not word.search(text)
    return not re.search(rf"\b{re.escape(target)}\b\s*\(", text, re.IGNORECASE)
