"""The random programs of the differential fuzzer, as a small tree: typed
expressions (:class:`Expr`), statements, variables, helper procedures and the
whole :class:`Program`, which renders itself as Fortran (free or fixed form)
with its ``!$loopy`` script.  :mod:`f2loopy.fuzz.progen` builds them,
:mod:`f2loopy.fuzz.shrink` makes failing ones smaller.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

#: sizes the bounds of every subscript are checked for
SIZE_BOX = (1, 16)
#: values stored into written variables are clamped to [-CLAMP, CLAMP]
CLAMP = 1000.0
#: value ranges of the generated data arrays (passed to the input planner)
REAL_RANGE = (-2.0, 2.0)
INT_RANGE = (-9, 9)

KIND_NAMES = {"r4": "real", "r8": "double precision", "i4": "integer", "l": "logical"}


# {{{ expressions

@dataclass
class Expr:
    """An expression node.

    :attr op: ``lit`` (text is the literal), ``var`` (a scalar; text the
        name), ``ref`` (array element; text the name, args the indices),
        ``un`` (text ``-`` or ``.not.``), ``bin`` (text the operator),
        ``call`` (text the function), ``paren``.
    :attr kind: ``r4``, ``r8``, ``i4`` or ``l``.
    :attr bound: an upper bound of the magnitude of the value.
    :attr det: both compilers compute it bit for bit.
    """

    op: str
    kind: str
    text: str = ""
    args: tuple = ()
    bound: float = 0.0
    det: bool = True

    def render(self) -> str:
        if self.op in ("lit", "var"):
            return self.text
        if self.op == "ref":
            return f"{self.text}({', '.join(a.render() for a in self.args)})"
        if self.op == "un":
            inner = self.args[0].render()
            return f"(-{inner})" if self.text == "-" else f".not. {inner}"
        if self.op == "bin":
            a, b = self.args
            return f"({a.render()} {self.text} {b.render()})"
        if self.op == "call":
            return f"{self.text}({', '.join(a.render() for a in self.args)})"
        if self.op == "paren":
            return f"({self.args[0].render()})"
        raise ValueError(self.op)

    def walk(self):
        yield self
        for a in self.args:
            yield from a.walk()

    def names(self) -> set:
        """Names it reads (a kind parameter a literal's suffix names too)."""
        return {e.text for e in self.walk() if e.op in ("var", "ref")} | {
            e.text.rpartition("_")[2] for e in self.walk()
            if e.op == "lit" and "_" in e.text and not e.text.rpartition("_")[2].isdigit()}


def lit(text, kind, value) -> Expr:
    return Expr("lit", kind, text, (), abs(float(value)), True)


_REAL_LITS = {
    "r4": [("0.5", 0.5), ("1.5", 1.5), ("0.25", 0.25), ("2.0", 2.0), ("0.1", 0.1),
           ("3.0", 3.0), ("0.75", 0.75), ("1.0e-1", 0.1), ("2.5e0", 2.5),
           # every spelling of a real literal: no digits before or after the
           # point, an exponent without a point, signed exponents, upper case
           (".5", 0.5), ("2.", 2.0), ("5e-1", 0.5), ("0.25E+1", 2.5), ("125.E-2", 1.25)],
    "r8": [("0.5d0", 0.5), ("0.1d0", 0.1), ("2.5d0", 2.5), ("1.0d0", 1.0), ("0.3d0", 0.3),
           ("1.25d0", 1.25), ("3.0d-1", 0.3),
           (".5d0", 0.5), ("2.D0", 2.0), ("25d-1", 2.5), ("0.125D+1", 1.25), ("1d-1", 0.1)],
}


def _wider(a: str, b: str) -> str:
    order = ["l", "i4", "r4", "r8"]
    return a if order.index(a) >= order.index(b) else b

# }}}


# {{{ statements

@dataclass
class Assign:
    target: Expr
    value: Expr

    def render(self, ind):
        return [f"{ind}{self.target.render()} = {self.value.render()}"]


@dataclass
class Do:
    var: str
    lo: str
    hi: str
    step: int = 1
    body: list = field(default_factory=list)
    isl_lo: str = ""
    isl_hi: str = ""
    label: int | None = None       # labelled 'do 10 ... 10 continue'
    name: str | None = None        # a construct name: 'outer: do ... end do outer'
    #: a step known only at run time (then *step* is 0): its text and its
    #: sign (1, -1, or 0 for either: the loop may then run no iteration)
    rstep: str = ""
    rsign: int = 0

    def render(self, ind):
        step = f", {self.rstep}" if self.rstep else ("" if self.step == 1 else f", {self.step}")
        down = self.rsign < 0 if self.rstep else self.step < 0
        first, last = (self.hi, self.lo) if down else (self.lo, self.hi)
        inner = [ln for s in self.body for ln in s.render(ind + "  ")]
        if self.label is not None:
            return [f"{ind}do {self.label} {self.var} = {first}, {last}{step}", *inner,
                    f"{ind}{self.label} continue"]
        if self.name is not None:
            return [f"{ind}{self.name}: do {self.var} = {first}, {last}{step}", *inner,
                    f"{ind}end do {self.name}"]
        return [f"{ind}do {self.var} = {first}, {last}{step}", *inner, f"{ind}end do"]


@dataclass
class DoConcurrent:
    """``do concurrent (i = lo:hi, ..., mask)``: iterations write disjoint elements."""

    heads: list                      # [(var, lo, hi)]
    mask: Expr | None = None
    body: list = field(default_factory=list)

    def render(self, ind):
        heads = ", ".join(f"{v} = {lo}:{hi}" for v, lo, hi in self.heads)
        if self.mask is not None:
            heads += f", {self.mask.render()}"
        inner = [ln for s in self.body for ln in s.render(ind + "  ")]
        return [f"{ind}do concurrent ({heads})", *inner, f"{ind}end do"]


@dataclass
class Select:
    """``select case``: *cases* are ``(selector texts, body)``, non-overlapping."""

    selector: Expr
    cases: list
    default: list | None = None

    def render(self, ind):
        out = [f"{ind}select case ({self.selector.render()})"]
        for sel, body in self.cases:
            out.append(f"{ind}case ({', '.join(sel)})")
            out.extend(ln for s in body for ln in s.render(ind + "  "))
        if self.default is not None:
            out.append(f"{ind}case default")
            out.extend(ln for s in self.default for ln in s.render(ind + "  "))
        out.append(f"{ind}end select")
        return out


@dataclass
class CallStmt:
    name: str
    args: tuple                      # Exprs (the last one is written)

    def render(self, ind):
        return [f"{ind}call {self.name}({', '.join(a.render() for a in self.args)})"]


@dataclass
class Return:
    def render(self, ind):
        return [f"{ind}return"]


@dataclass
class If:
    branches: list                       # [(cond Expr, [stmts])]
    else_body: list | None = None

    def render(self, ind):
        out = []
        for k, (cond, body) in enumerate(self.branches):
            kw = "if" if k == 0 else "else if"
            out.append(f"{ind}{kw} ({cond.render()}) then")
            out.extend(ln for s in body for ln in s.render(ind + "  "))
        if self.else_body is not None:
            out.append(f"{ind}else")
            out.extend(ln for s in self.else_body for ln in s.render(ind + "  "))
        out.append(f"{ind}end if")
        return out


@dataclass
class OneLineIf:
    cond: Expr
    stmt: Assign | Cycle | Exit | Goto | Return    # a simple statement
    keyword: str = "if"                   # "where": an array assignment under a mask

    def render(self, ind):
        return [f"{ind}{self.keyword} ({self.cond.render()}) "
                f"{self.stmt.render('')[0].strip()}"]


@dataclass
class Cycle:
    name: str | None = None

    def render(self, ind):
        return [f"{ind}cycle" + (f" {self.name}" if self.name else "")]


@dataclass
class Exit:
    name: str | None = None

    def render(self, ind):
        return [f"{ind}exit" + (f" {self.name}" if self.name else "")]


@dataclass
class Goto:
    """``goto label`` (forward, or back to a :class:`Continue` before it)."""

    label: int
    keyword: str = "goto"

    def render(self, ind):
        return [f"{ind}{self.keyword} {self.label}"]


@dataclass
class ComputedGoto:
    """``go to (l1, l2, ...) index``: on to the next statement when the
    index is out of range."""

    labels: tuple
    index: Expr

    def render(self, ind):
        return [f"{ind}go to ({', '.join(map(str, self.labels))}) {self.index.render()}"]


@dataclass
class ArithmeticIf:
    """``if (e) l1, l2, l3``: to l1, l2, l3 as e is negative, zero, positive."""

    value: Expr
    labels: tuple

    def render(self, ind):
        return [f"{ind}if ({self.value.render()}) {', '.join(map(str, self.labels))}"]


@dataclass
class Continue:
    """``label continue``: where a goto goes."""

    label: int

    def render(self, ind):
        return [f"{ind}{self.label} continue"]


def _children(stmt):
    if isinstance(stmt, (Do, DoConcurrent)):
        return [stmt.body]
    if isinstance(stmt, If):
        return [b for _, b in stmt.branches] + ([stmt.else_body] if stmt.else_body else [])
    if isinstance(stmt, Select):
        return [b for _, b in stmt.cases] + ([stmt.default] if stmt.default else [])
    return []


def _all_exprs(stmt):
    out = list(statement_exprs(stmt))
    for b in _children(stmt):
        for x in b:
            out.extend(_all_exprs(x))
    return out


def statement_exprs(stmt):
    if isinstance(stmt, Assign):
        return [stmt.target, stmt.value]
    if isinstance(stmt, If):
        return [c for c, _ in stmt.branches]
    if isinstance(stmt, OneLineIf):
        return [stmt.cond] + statement_exprs(stmt.stmt)
    if isinstance(stmt, Select):
        return [stmt.selector]
    if isinstance(stmt, CallStmt):
        return list(stmt.args)
    if isinstance(stmt, DoConcurrent):
        return [stmt.mask] if stmt.mask is not None else []
    if isinstance(stmt, ComputedGoto):
        return [stmt.index]
    if isinstance(stmt, ArithmeticIf):
        return [stmt.value]
    return []

# }}}


# {{{ program

@dataclass
class Variable:
    name: str
    kind: str
    dims: tuple = ()        # ((lb text, ub text), ...)
    intent: str | None = None
    role: str = "data"      # size | data | index | ptr | out | local | param | table
    bound: float = 0.0
    value: str = ""         # a parameter's value, a table's data
    spelling: str = ""      # the type as written (default: KIND_NAMES)
    exact: bool = True      # only ever holds exactly reproducible values

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    #: a parameter declared by the FORTRAN 77 statement ``parameter (x = ...)``
    statement: bool = False

    def decl_lines(self) -> list:
        """The declaration: one line, two for a parameter statement."""
        if self.role == "param" and self.statement:
            t = self.spelling or KIND_NAMES[self.kind]
            return [f"{t} {self.name}", f"parameter ({self.name} = {self.value})"]
        return [self.decl()]

    def decl(self) -> str:
        t = self.spelling or KIND_NAMES[self.kind]
        intent = f", intent({self.intent})" if self.intent else ""
        if self.role == "param":
            return f"{t}, parameter :: {self.name} = {self.value}"
        if self.dims:
            shape = ", ".join(ub if lb == "1" else f"{lb}:{ub}" for lb, ub in self.dims)
            return f"{t}{intent} :: {self.name}({shape})"
        return f"{t}{intent} :: {self.name}"


@dataclass
class Helper:
    """A subroutine or function the main subroutine calls (f2loopy inlines it)."""

    name: str
    kind: str
    is_function: bool
    args: list                      # Variables (inputs; for a subroutine the last is out)
    body: list                      # statements
    result_name: str = ""           # function result variable
    pure: bool = False
    det: bool = True                # its result is exactly reproducible

    def render(self) -> list:
        names = ", ".join(a.name for a in self.args)
        t = KIND_NAMES[self.kind]
        prefix = "pure " if self.pure else ""
        if self.is_function:
            head = f"{prefix}{t} function {self.name}({names})" if not self.result_name else \
                f"{prefix}function {self.name}({names}) result({self.result_name})"
        else:
            head = f"{prefix}subroutine {self.name}({names})"
        lines = [head, "  implicit none"]
        for a in self.args:
            lines.append("  " + a.decl())
        if self.is_function and self.result_name:
            lines.append(f"  {t} :: {self.result_name}")
        for st in self.body:
            lines.extend(st.render("  "))
        lines.append(f"end {'function' if self.is_function else 'subroutine'} {self.name}")
        return lines


@dataclass
class Program:
    """A generated subroutine (and its transformation script)."""

    name: str
    args: list                              # Variables, in argument order
    locals: list                            # Variables
    prologue: list                          # statements (kept by the shrinker)
    body: list                              # statements
    loop_vars: list = field(default_factory=list)
    transforms: list = field(default_factory=list)   # script lines (Python)
    seed: int | None = None
    comment: str = ""
    helpers: list = field(default_factory=list)      # Helper
    helper_module: bool = False                      # helpers in a module (used)
    loose64: bool = False            # single-precision rounding may reach double outputs
    fixed_form: bool = False
    upper: bool = False

    @property
    def filename(self) -> str:
        return f"{self.name}.f" if self.fixed_form else f"{self.name}.f90"

    def used_helpers(self) -> list:
        names = set()
        stack = list(self.body)
        while stack:
            st = stack.pop()
            if isinstance(st, CallStmt):
                names.add(st.name)
            for e in statement_exprs(st):
                names |= {x.text for x in e.walk() if x.op == "call"}
            stack.extend(x for b in _children(st) for x in b)
            if isinstance(st, OneLineIf):
                stack.append(st.stmt)
        return [h for h in self.helpers if h.name in names]

    def used_names(self) -> set:
        """Names the body uses (the prologue only sets what the body uses)."""
        names = set()
        stack = list(self.body)
        while stack:
            s = stack.pop()
            for e in statement_exprs(s):
                names |= e.names()
            if isinstance(s, Do):
                for t in (s.lo, s.hi, s.rstep):
                    names |= set(_identifiers(t))
                names.add(s.var)
            if isinstance(s, DoConcurrent):
                for v, lo, hi in s.heads:
                    names |= {v} | set(_identifiers(lo)) | set(_identifiers(hi))
            for b in _children(s):
                stack.extend(b)
            if isinstance(s, OneLineIf):
                stack.append(s.stmt)
        # sizes used in shapes of used arrays, kind parameters in their types
        # (of those sizes too)
        while True:
            before = len(names)
            for v in self.args + self.locals:
                if v.name in names:
                    for lb, ub in v.dims:
                        names |= set(_identifiers(lb)) | set(_identifiers(ub))
                    names |= set(_identifiers(v.spelling))
                    if v.role == "param":
                        # (a parameter defined by others; no real literal's
                        # exponent is a variable's name)
                        names |= set(_identifiers(v.value))
            if len(names) == before:
                break
        return names

    def render(self) -> str:
        used = self.used_names()
        args = [a for a in self.args if a.name in used]
        loc = [v for v in self.locals if v.name in used]
        # parameters used in the shapes of used tables
        loops = sorted({v for v in self.loop_vars if v in used})
        lines = []
        if self.comment:
            lines += [f"! {ln}" for ln in self.comment.splitlines()]
        helpers = self.used_helpers()
        module = self.helper_module and helpers
        if module:
            lines.append(f"module {self.name}_mod")
            lines.append("  implicit none")
            lines.append("contains")
            for h in helpers:
                lines.extend("  " + ln if ln else "" for ln in h.render())
            lines.append(f"end module {self.name}_mod")
            lines.append("")
        else:
            for h in helpers:
                lines.extend(h.render())
                lines.append("")
        lines.append(f"subroutine {self.name}({', '.join(a.name for a in args)})")
        if module:
            lines.append(f"  use {self.name}_mod")
        lines.append("  implicit none")
        params = [v for v in loc if v.role == "param"]
        for v in params + [a for a in args] + [v for v in loc if v.role != "param"]:
            lines.extend("  " + ln for ln in v.decl_lines())
        if loops:
            lines.append(f"  integer :: {', '.join(loops)}")
        for h in ([] if module else helpers):
            if h.is_function:
                ext = ", external" if h.kind == "r4" else ""
                lines.append(f"  {KIND_NAMES[h.kind]}{ext} :: {h.name}")
        for v in loc:
            if v.role == "table":
                lines.append(f"  data {v.name} /{v.value}/")
        for st in self.prologue:
            if st.target.text in used:
                lines.extend(st.render("  "))
        for st in self.body:
            lines.extend(st.render("  "))
        lines.append(f"end subroutine {self.name}")
        if self.upper:
            lines = [ln.upper() for ln in lines]
        if self.fixed_form:
            lines = [w for ln in lines for w in _fixed(ln)]
        else:
            lines = [w for ln in lines for w in _wrap(ln)]
        if self.transforms:
            lines.append("")
            lines.append("!$loopy begin")
            lines.append(f"! k = parse_fortran(SOURCE, FILENAME)[{self.name!r}]")
            lines.extend(f"! {t}" for t in self.transforms)
            lines.append("! RESULT = [k]")
            lines.append("!$loopy end")
        return "\n".join(lines) + "\n"

    def data_ranges(self) -> dict:
        """Value ranges of the data arguments (for the input planner)."""
        out = {}
        used = self.used_names()
        for a in self.args:
            if a.name not in used:
                continue
            if a.role in ("data", "out") and a.kind in ("r4", "r8"):
                out[a.name] = REAL_RANGE
            elif a.role in ("data", "out") and a.kind == "i4":
                out[a.name] = INT_RANGE
        return out

    def copy(self) -> "Program":
        return copy.deepcopy(self)


def _wrap(line: str, width: int = 100) -> list:
    """Free-form continuation lines (``&``) for a statement longer than *width*
    (gfortran refuses lines over 132 characters), broken between tokens."""
    if len(line) <= width or line.lstrip().startswith("!"):
        return [line]
    indent = line[:len(line) - len(line.lstrip())] + "    "
    out = []
    rest = line
    while len(rest) > width:
        cut = rest.rfind(" ", len(indent) + 10, width)
        if cut < 0:
            break
        out.append(rest[:cut] + " &")
        rest = indent + "& " + rest[cut + 1:]
    out.append(rest)
    return out


def _fixed(line: str) -> list:
    """A free-form line in fixed form: label in columns 1-5, the statement from
    column 7, continuation lines marked in column 6, nothing past column 72."""
    body = line.lstrip()
    if not body:
        return [""]
    if body.startswith("!"):
        return ["!" + body[1:]]
    indent = min(len(line) - len(body), 20)
    label = ""
    head, _, rest = body.partition(" ")
    if head.isdigit():
        label, body = head, rest.lstrip()
    text = " " * indent + body
    out = []
    first = True
    while True:
        width = 66
        if len(text) <= width:
            chunk, text = text, ""
        else:
            cut = text.rfind(" ", 10, width)
            if cut < 0:
                cut = width
            chunk, text = text[:cut], text[cut:]
        out.append((f"{label:<5} " if first else "     &") + chunk)
        first = False
        if not text:
            return out


def _identifiers(text: str):
    import re
    return re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)

# }}}
