"""Random Fortran programs in the subset f2loopy translates (differential fuzzing).

:func:`generate_program` builds a :class:`Program` from a seed: one subroutine
with size arguments, input and output arrays of several kinds and ranks (some
with lower bounds other than 1 and halos), scalar inputs and outputs, and a
body of random statements: affine loop nests (rectangular, triangular,
constant trip counts, steps, reversed loops, CSR-style data-dependent bounds),
``if``/``else if``/``else``, ``cycle``, assignments to array elements, local
temporaries and accumulators, with arithmetic over mixed kinds (promotion,
literal kinds), integer division and ``mod``, relational and logical
operators and the supported intrinsics.

Programs are built so that both sides must compute the same thing:

* every subscript stays in bounds for *every* size in [1, 16] (checked with
  isl as the program is built), and index arrays (``x(ix(i))``, row
  pointers) are left to the input planner of :mod:`f2loopy.verify.inputs`;
* values stay bounded: inputs are small, a value stored into a variable the
  program writes is clamped (``max(-C, min(C, e))``) when its bound could
  exceed C, ``exp`` only sees bounded arguments, divisors are bounded away
  from zero (``1.0 + abs(e)``), ``sqrt``/``log`` get non-negative/positive
  arguments, ``asin``/``acos`` arguments in (-1, 1);
* discontinuous operations (comparisons, ``int``/``nint``/``floor``, ``mod``
  of reals, ``sign``, the first argument of ``atan2``) only see values that
  both compilers compute bit for bit (``+ - *``, ``abs``, ``min``/``max``,
  conversions; not ``/``, ``sqrt``, transcendental functions, whose last bit
  may differ between libraries);
* every local variable is set in a prologue before the body runs.

The program is kept as a small tree (:class:`Program`) so that a failing one
can be shrunk (:func:`shrink_candidates`) and rendered again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import islpy as isl
import numpy as np

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
        return {e.text for e in self.walk() if e.op in ("var", "ref")}


def lit(text, kind, value) -> Expr:
    return Expr("lit", kind, text, (), abs(float(value)), True)


_REAL_LITS = {
    "r4": [("0.5", 0.5), ("1.5", 1.5), ("0.25", 0.25), ("2.0", 2.0), ("0.1", 0.1),
           ("3.0", 3.0), ("0.75", 0.75), ("1.0e-1", 0.1), ("2.5e0", 2.5)],
    "r8": [("0.5d0", 0.5), ("0.1d0", 0.1), ("2.5d0", 2.5), ("1.0d0", 1.0), ("0.3d0", 0.3),
           ("1.25d0", 1.25), ("3.0d-1", 0.3)],
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

    def render(self, ind):
        step = "" if self.step == 1 else f", {self.step}"
        first, last = (self.lo, self.hi) if self.step > 0 else (self.hi, self.lo)
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
    stmt: object                          # an Assign or Cycle

    def render(self, ind):
        return [f"{ind}if ({self.cond.render()}) {self.stmt.render('')[0].strip()}"]


@dataclass
class Cycle:
    name: str | None = None

    def render(self, ind):
        return [f"{ind}cycle" + (f" {self.name}" if self.name else "")]


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
                for t in (s.lo, s.hi):
                    names |= set(_identifiers(t))
                names.add(s.var)
            if isinstance(s, DoConcurrent):
                for v, lo, hi in s.heads:
                    names |= {v} | set(_identifiers(lo)) | set(_identifiers(hi))
            for b in _children(s):
                stack.extend(b)
            if isinstance(s, OneLineIf):
                stack.append(s.stmt)
        # sizes used in shapes of used arrays
        for v in self.args + self.locals:
            if v.name in names:
                for lb, ub in v.dims:
                    names |= set(_identifiers(lb)) | set(_identifiers(ub))
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
            lines.append("  " + v.decl())
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


class _Env:
    """Loops enclosing the statement being generated."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.loops: list = []          # (var, isl_lo, isl_hi)
        self.section = None            # length of the array sections (array syntax)
        self.pure = False              # only inputs and loop indices (do concurrent)
        self.in_helper = False
        self.names: list = []          # construct names of the enclosing loops

    def domain(self, extra: str = "") -> isl.Set:
        names = [v for v, _, _ in self.loops]
        cons = [f"{SIZE_BOX[0]} <= {s} <= {SIZE_BOX[1]}" for s in self.sizes]
        cons += [f"{lo} <= {v} <= {hi}" for v, lo, hi in self.loops]
        if extra:
            cons.append(extra)
        text = f"[{', '.join(self.sizes)}] -> {{ [{', '.join(names)}] : {' and '.join(cons)} }}"
        return isl.Set(text)


class Generator:
    """Builds one random program (see the module docstring)."""

    def __init__(self, seed: int, *, max_statements: int = 10, max_depth: int = 3):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.max_statements = max_statements
        self.max_depth = max_depth
        self.n_loops = 0
        self.budget = 0

    # {{{ random helpers

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def int_in(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    # }}}

    # {{{ declarations

    def declare(self):
        sizes = ["n"] + (["m"] if self.chance(0.7) else [])
        self.sizes = sizes
        args = [Variable(s, "i4", intent="in", role="size") for s in sizes]

        def shape(ndim):
            dims = []
            for _ in range(ndim):
                s = self.pick(sizes + ["3", "4"] if ndim > 1 else sizes)
                kind = self.int_in(0, 9)
                if s in ("3", "4"):
                    dims.append(("1", s))
                elif kind < 5:
                    dims.append(("1", s))
                elif kind < 7:
                    dims.append(("0", f"{s}+1"))        # a halo
                elif kind < 8:
                    dims.append(("-1", s))
                else:
                    dims.append(("1", f"{s}+2"))
            return tuple(dims)

        arrays = []
        n_in = self.int_in(1, 3)
        names = iter("abcdefgh")
        for _ in range(n_in):
            kind = self.pick(["r4", "r4", "r8", "i4"])
            arrays.append(Variable(next(names), kind, shape(self.int_in(1, 3)), "in", "data",
                                   INT_RANGE[1] if kind == "i4" else REAL_RANGE[1]))
        n_out = self.int_in(1, 2)
        outs = iter("uvw")
        for _ in range(n_out):
            kind = self.pick(["r4", "r8", "r4", "i4"])
            arrays.append(Variable(next(outs), kind, shape(self.int_in(1, 3)), "inout", "out",
                                   CLAMP))
        if self.chance(0.25):
            arrays.append(Variable("mask", "l", shape(1), "in", "data", 1))
        if self.chance(0.25):
            # an index array: x(ix(i)) (values chosen by the input planner)
            arrays.append(Variable("ix", "i4", (("1", sizes[0]),), "in", "index", 0))
        self.csr = len(sizes) > 1 and self.chance(0.15)
        if self.csr:
            arrays.append(Variable("ptr", "i4", (("1", "n+1"),), "in", "ptr", 0))
            arrays.append(Variable("val", "r4", (("1", "m"),), "in", "data", REAL_RANGE[1]))
            arrays.append(Variable("col", "i4", (("1", "m"),), "in", "index", 0))
        scalars = []
        if self.chance(0.6):
            scalars.append(Variable("alpha", self.pick(["r4", "r8"]), (), "in", "data",
                                    REAL_RANGE[1]))
        if self.chance(0.3):
            scalars.append(Variable("kk", "i4", (), "in", "data", INT_RANGE[1]))
        outs_s = []
        if self.chance(0.6):
            outs_s.append(Variable("s", self.pick(["r4", "r8"]), (), "inout", "out", CLAMP))
        if self.chance(0.3):
            outs_s.append(Variable("cnt", "i4", (), "inout", "out", CLAMP))
        if self.chance(0.15):
            outs_s.append(Variable("flag", "l", (), "inout", "out", 1))
        self.args = args + scalars + arrays + outs_s
        for v in self.args:
            if v.kind == "r8":
                v.spelling = self.pick(["double precision", "real*8", "real(8)",
                                        "real(kind=8)", "double precision"])
            elif v.kind == "r4" and self.chance(0.2):
                v.spelling = self.pick(["real*4", "real(4)", "real(kind=4)"])
        locs = [Variable("t1", "r4", role="local", bound=CLAMP),
                Variable("t2", "r8", role="local", bound=CLAMP),
                Variable("it", "i4", role="local", bound=CLAMP)]
        if self.chance(0.3):
            locs.append(Variable("lg", "l", role="local", bound=1))
        if self.chance(0.3):
            locs.append(Variable("wk", "r4", (("1", "4"),), role="local", bound=CLAMP))
        if self.chance(0.3):
            t, v = self.pick(_REAL_LITS["r4"])
            locs.append(Variable("c0", "r4", role="param", bound=v, value=t))
        if self.chance(0.2):
            locs.append(Variable("k0", "i4", role="param", bound=3,
                                 value=str(self.int_in(-3, 3))))
        if self.chance(0.25):
            vals = [self.pick(["0.5", "1.5", "-0.25", "2.0", "0.125"]) for _ in range(4)]
            locs.append(Variable("tab", "r4", (("1", "4"),), role="table", bound=2.0,
                                 value=", ".join(vals)))
        self.locals = locs
        for v in self.args + self.locals:
            if v.role in ("out", "local") and v.kind in ("r4", "r8"):
                v.exact = self.chance(0.4)
        self.vars = {v.name: v for v in self.args + self.locals}
        self.loose64 = False
        self.helpers = []
        self.functions = []
        self.helper_module = self.chance(0.5)
        for k in range(self.int_in(0, 2)):
            self.helpers.append(self.helper(k))
        self.functions = [h for h in self.helpers if h.is_function]

    def helper(self, k: int) -> "Helper":
        """A small subroutine or function of scalars, called from the body."""
        kind = self.pick(["r4", "r8"])
        is_function = self.chance(0.5)
        name = f"{'f' if is_function else 'h'}{k + 1}"
        nargs = self.int_in(1, 2)
        args = [Variable(x, kind, (), "in", "hdata", CLAMP) for x in ("x", "y")[:nargs]]
        saved = self.vars
        self.vars = {a.name: a for a in args}
        env = _Env([])
        env.in_helper = True
        env.pure = True
        try:
            value = self.expr(env, kind)
            if self.chance(0.4):
                other = self.expr(env, kind)
                cond = self.comparison(env)
                body_value = None
            else:
                body_value = value
        finally:
            self.vars = saved
        result = name
        result_name = ""
        if is_function and self.chance(0.3):
            result = result_name = "res"
        res = Expr("var", kind, result, (), CLAMP, False)
        if not is_function:
            args.append(Variable("r", kind, (), "out", "hout", CLAMP))
            res = Expr("var", kind, "r", (), CLAMP, False)
        if body_value is not None:
            body = [self.stored(res, self.fit(value, kind))]
        else:
            body = [If([(cond, [self.stored(res, self.fit(value, kind))])],
                       [self.stored(res, self.fit(other, kind))])]
        h = Helper(name, kind, is_function, args, body, result_name,
                   pure=self.helper_module and self.chance(0.8))
        h.det = all(e.det for st in body for e in _all_exprs(st) if e is not res)
        return h

    def prologue(self):
        out = []
        for v in self.locals:
            if v.role in ("param", "table"):
                continue
            if v.is_array:
                for k in range(1, 5):
                    out.append(Assign(Expr("ref", v.kind, v.name, (lit(str(k), "i4", k),),
                                           CLAMP), lit(f"{k}.0", "r4", k)))
            else:
                value = {"r4": lit("0.0", "r4", 0), "r8": lit("1.0d0", "r8", 1),
                         "i4": lit("0", "i4", 0), "l": lit(".false.", "l", 0)}[v.kind]
                out.append(Assign(Expr("var", v.kind, v.name, (), CLAMP), value))
        return out

    # }}}

    # {{{ subscripts

    def index_for(self, env: _Env, lb: str, ub: str):
        """An affine subscript in [lb, ub] for every size in the box, or None."""
        cands = []
        for var, _, _ in env.loops:
            for off in (0, 0, 0, 1, -1, 2):
                cands.append(f"{var} + {off}" if off > 0 else
                             (f"{var} - {-off}" if off < 0 else var))
            cands.append(f"2*{var}")
            cands.append(f"{var} - 1")
        for s in self.sizes:
            cands.append(s)
            cands.append(f"{s} - {var}" if env.loops else s)
        cands += ["1", "2", lb, ub]
        order = list(self.rng.permutation(len(cands)))
        for k in order[:12]:
            c = cands[int(k)]
            if self.in_bounds(env, c, lb, ub):
                return c
        return None

    def in_bounds(self, env: _Env, idx: str, lb: str, ub: str) -> bool:
        try:
            bad = env.domain(f"({idx} < {lb} or {idx} > {ub})")
        except isl.Error:
            return False
        return bad.is_empty()

    def array_ref(self, env: _Env, var: Variable):
        idx = []
        for lb, ub in var.dims:
            c = self.index_for(env, lb, ub)
            if c is None:
                return None
            idx.append(Expr("lit", "i4", c, (), 0.0, True))
        return Expr("ref", var.kind, var.name, tuple(idx), var.bound, var.exact)

    def indirect_ref(self, env: _Env, var: Variable):
        """``x(ix(...))`` on a 1-D array *var* (ix's values are planned)."""
        ix = self.vars.get("ix")
        if ix is None or len(var.dims) != 1 or var.role == "index":
            return None
        inner = self.array_ref(env, ix)
        if inner is None:
            return None
        return Expr("ref", var.kind, var.name, (Expr("ref", "i4", "ix", inner.args, 0, True),),
                    var.bound, var.exact)

    # }}}

    # {{{ expressions

    def readable(self, env, v: Variable) -> bool:
        if v.role in ("size", "index", "ptr"):
            return False
        if env.pure:
            return v.role in ("data", "param", "table", "hdata")
        return v.role not in ("hdata", "hout")

    def leaf(self, env, kind, det):
        """A variable, array element or literal of *kind* (or convertible)."""
        for _ in range(6):
            r = self.rng.random()
            if kind == "l":
                logicals = [v for v in self.vars.values() if v.kind == "l"
                            and self.readable(env, v)]
                if logicals and r < 0.5 and not env.section:
                    v = self.pick(logicals)
                    e = self.array_ref(env, v) if v.is_array else \
                        Expr("var", "l", v.name, (), 1, True)
                    if e is not None:
                        return e
                return self.comparison(env, det=True)
            if r < 0.15:
                if kind == "i4":
                    v = self.int_in(0, 7)
                    return lit(str(v), "i4", v)
                t, v = self.pick(_REAL_LITS[kind])
                return lit(t, kind, v)
            if r < 0.3 and env.loops and kind in ("i4", "r4", "r8"):
                var = self.pick([v for v, _, _ in env.loops])
                e = Expr("var", "i4", var, (), float(SIZE_BOX[1] * 2 + 2), True)
                return e if kind == "i4" else self.convert(e, kind)
            if r < 0.35 and kind == "i4" and not env.in_helper:
                s = self.pick(self.sizes)
                return Expr("var", "i4", s, (), float(SIZE_BOX[1] + 2), True)
            if r < 0.38 and kind == "i4" and not env.in_helper:
                e = self.inquiry(env)
                if e is not None:
                    return e
            if r < 0.45 and kind in ("r4", "r8") and self.functions and not env.in_helper \
                    and not env.section:
                e = self.function_call(env, kind)
                if e is not None and (e.det or not det):
                    return e
            if r < 0.5 and not env.section and not env.in_helper:
                e = self.reduction(env, kind)
                if e is not None and (e.det or not det):
                    return e
            cands = [v for v in self.vars.values() if v.kind == kind and self.readable(env, v)
                     and (v.exact or not det)]
            if not cands:
                cands = [v for v in self.vars.values()
                         if v.kind in ("i4", "r4", "r8") and self.readable(env, v)
                         and (v.exact or not det)]
            if not cands:
                break
            v = self.pick(cands)
            if v.is_array:
                e = None
                if env.section and self.chance(0.7):
                    e = self.section_ref(env, v)
                elif v.role == "data" and "ix" in self.vars and self.chance(0.3):
                    e = self.indirect_ref(env, v)
                if e is None:
                    e = self.array_ref(env, v)
                if e is None:
                    continue
            else:
                e = Expr("var", v.kind, v.name, (), v.bound, v.exact)
            if e.kind != kind:
                if kind == "i4" and e.kind in ("r4", "r8"):
                    continue
                e = self.convert(e, kind)
            return e
        fallback = {"i4": ("1", 1), "r4": ("1.0", 1.0), "r8": ("1.0d0", 1.0),
                    "l": (".true.", 1)}[kind]
        return lit(fallback[0], kind, fallback[1])

    def inquiry(self, env):
        """``size(a, d)``, ``lbound(a, d)`` or ``ubound(a, d)`` of an argument array."""
        arrays = [v for v in self.args if v.is_array]
        if not arrays:
            return None
        v = self.pick(arrays)
        d = self.int_in(1, len(v.dims))
        fn = self.pick(["size", "lbound", "ubound", "size"])
        if fn == "size" and len(v.dims) == 1 and self.chance(0.5):
            return Expr("call", "i4", "size", (Expr("var", v.kind, v.name, (), 0, True),),
                        float(SIZE_BOX[1] + 3), True)
        return Expr("call", "i4", fn, (Expr("var", v.kind, v.name, (), 0, True),
                                       lit(str(d), "i4", d)), float(SIZE_BOX[1] + 3), True)

    def function_call(self, env, kind):
        usable = [h for h in self.functions if h.pure or not env.pure]
        if not usable:
            return None
        h = self.pick(usable)
        args = []
        for a in h.args:
            e = self.expr(env, a.kind, False, 2)
            e = self.same_kind(self.fit(e, a.kind), a.kind)
            if e.kind != a.kind:
                return None
            args.append(e)
        call = Expr("call", h.kind, h.name, tuple(args), CLAMP,
                    h.det and all(x.det for x in args))
        return self.fit(call, kind) if kind != h.kind else call

    def reduction(self, env, kind):
        """``sum``/``product``/``maxval``/``minval``/``dot_product`` of an
        expression over array sections."""
        lengths = [x for x in self.sizes] + ["3", "2"]
        length = self.pick(lengths)
        fn = self.pick(["sum", "maxval", "minval", "sum", "dot_product", "product"])
        env.section = length
        try:
            a = self.expr(env, kind, False, 2)
            b = self.expr(env, kind, False, 2) if fn == "dot_product" else None
        finally:
            env.section = None
        if not any(x.op == "lit" and ":" in x.text for x in a.walk()):
            return None
        if fn == "dot_product":
            if b is None or not any(x.op == "lit" and ":" in x.text for x in b.walk()):
                return None
            b = self.same_kind(b, a.kind)
            if b.kind != a.kind:
                return None
            return Expr("call", a.kind, fn, (a, b), a.bound * b.bound * 20, False)
        if fn == "product":
            if a.bound > 2:
                return None
            return Expr("call", a.kind, fn, (a,), 2.0 ** 18, False)
        bound = a.bound * 20 if fn == "sum" else a.bound
        # maxval/minval of exactly reproducible elements are exact
        return Expr("call", a.kind, fn, (a,), bound, a.det and fn != "sum")

    def section_for(self, env, lb, ub, length):
        """Section text ``start:end`` of *length* elements inside [lb, ub]."""
        cands = [lb, "1", "2", f"{lb} + 1", "0"]
        order = list(self.rng.permutation(len(cands)))
        for k in order:
            start = cands[int(k)]
            try:
                bad = env.domain(f"{length} >= 1 and ({start} < {lb} or "
                                 f"{start} + {length} - 1 > {ub})")
            except isl.Error:
                continue
            if not bad.is_empty():
                continue
            if lb == "1" and ub == length and start == "1" and self.chance(0.5):
                return ":"
            end = length if start == "1" else f"{start} + {length} - 1"
            if self.chance(0.15):
                return f"{end}:{start}:-1"
            return f"{start}:{end}"
        return None

    def section_ref(self, env, var):
        axis = self.int_in(0, len(var.dims) - 1)
        idx = []
        for d, (lb, ub) in enumerate(var.dims):
            if d == axis:
                sec = self.section_for(env, lb, ub, env.section)
            else:
                sec = self.index_for(env, lb, ub)
            if sec is None:
                return None
            idx.append(Expr("lit", "i4", sec, (), 0.0, True))
        return Expr("ref", var.kind, var.name, tuple(idx), var.bound, var.exact)

    def convert(self, e: Expr, kind: str) -> Expr:
        if e.kind == kind:
            return e
        if kind == "r4":
            return Expr("call", "r4", self.pick(["real", "real"] + (["float"] if e.kind == "i4"
                                                                    else ["sngl"])),
                        (e,), e.bound, e.det)
        if kind == "r8":
            return Expr("call", "r8", "dble", (e,), e.bound, e.det)
        if kind == "i4":
            if not e.det:
                raise ValueError("int() of a value that is not exactly reproducible")
            fn = self.pick(["int", "nint", "floor", "ceiling"])
            return Expr("call", "i4", fn, (e,), e.bound + 1, True)
        raise ValueError(kind)

    def expr(self, env, kind: str, det: bool = False, depth: int = 0) -> Expr:
        """A random expression of *kind*; only exactly reproducible
        operations if *det*."""
        if kind == "l":
            return self.logical(env, depth)
        if depth >= 3 or self.chance(0.3 + 0.15 * depth):
            return self.leaf(env, kind, det)
        if kind == "i4":
            return self.int_op(env, depth)
        return self.real_op(env, kind, det, depth)

    def int_op(self, env, depth):
        a = self.expr(env, "i4", True, depth + 1)
        r = self.int_in(0, 13)
        if r <= 3:
            b = self.expr(env, "i4", True, depth + 1)
            op = self.pick(["+", "-", "+", "-", "*"])
            if op == "*" and a.bound * b.bound > 1e5:
                op = "+"
            bound = a.bound * b.bound if op == "*" else a.bound + b.bound
            return Expr("bin", "i4", op, (a, b), bound, True)
        if r == 4:
            c = self.pick([2, 3, -2, 5, 7, -3])
            return Expr("bin", "i4", "/", (a, lit(str(c) if c > 0 else f"({c})", "i4", c)),
                        a.bound, True)
        if r == 5:
            c = self.pick([2, 3, 5, -3])
            fn = self.pick(["mod", "modulo"])
            return Expr("call", "i4", fn, (a, lit(str(c), "i4", c)), abs(c), True)
        if r == 6:
            return Expr("call", "i4", "abs", (a,), a.bound, True)
        if r == 7:
            b = self.expr(env, "i4", True, depth + 1)
            fn = self.pick(["min", "max"])
            return Expr("call", "i4", fn, (a, b), max(a.bound, b.bound), True)
        if r == 8:
            b = self.expr(env, "i4", True, depth + 1)
            return Expr("call", "i4", self.pick(["sign", "dim"]), (a, b),
                        a.bound + b.bound, True)
        if r == 9 and a.bound < 300:
            return Expr("bin", "i4", "**", (a, lit("2", "i4", 2)), a.bound ** 2, True)
        if r == 10:
            x = self.expr(env, self.pick(["r4", "r8"]), True, depth + 1)
            if x.bound < 1e6:
                return self.convert(x, "i4")
        if r == 11:
            # division by a value that is never zero
            b = self.expr(env, "i4", True, depth + 1)
            den = Expr("paren", "i4", "", (Expr("bin", "i4", "+", (
                Expr("call", "i4", "abs", (b,), b.bound, True), lit("1", "i4", 1)),
                b.bound + 1, True),), b.bound + 1, True)
            return Expr("bin", "i4", "/", (a, den), a.bound, True)
        if r == 12:
            return Expr("un", "i4", "-", (Expr("paren", "i4", "", (a,), a.bound, True),),
                        a.bound, True)
        return a

    def real_op(self, env, kind, det, depth):
        r = self.int_in(0, 19)
        sub_kind = kind if self.chance(0.7) else self.pick(["r4", "r8", "i4"])
        if sub_kind == "r8" and kind == "r4" and self.chance(0.5):
            sub_kind = "r4"
        a = self.expr(env, sub_kind, det, depth + 1)
        if a.kind != kind and not (a.kind in ("i4", "r4") and kind == "r8"):
            a = self.convert(a, kind) if a.kind != "i4" or self.chance(0.5) else a
        if r <= 5:
            b = self.expr(env, kind if self.chance(0.8) else "i4", det, depth + 1)
            op = self.pick(["+", "-", "*", "+", "-"])
            bound = a.bound * b.bound if op == "*" else a.bound + b.bound
            res_kind = _wider(a.kind, b.kind)
            if res_kind == "i4":
                res_kind = kind
                a = self.convert(a, kind)
            return self.fit(Expr("bin", res_kind, op, (a, b), bound, a.det and b.det), kind)
        a = self.convert(a, kind) if a.kind == "i4" else a
        if det:
            r = self.pick([6, 7, 8, 9, 10, 11, 12])
        if r == 6:
            return Expr("call", a.kind, "abs", (a,), a.bound, a.det)
        if r == 7:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            return Expr("call", a.kind, self.pick(["min", "max"]), (a, b),
                        max(a.bound, b.bound), a.det and b.det)
        if r == 8:
            # clamp
            c = "1.0" if a.kind == "r4" else "1.0d0"
            return Expr("call", a.kind, "max", (
                Expr("un", a.kind, "-", (lit(c, a.kind, 1),), 1, True),
                Expr("call", a.kind, "min", (lit(c, a.kind, 1), a), 1, a.det)), 1, a.det)
        if r == 9:
            b = self.same_kind(self.expr(env, a.kind, True, depth + 1), a.kind)
            return Expr("call", a.kind, "sign", (a, b), a.bound, a.det and b.det)
        if r == 10:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            return Expr("call", a.kind, "dim", (a, b), a.bound + b.bound, a.det and b.det)
        if r == 11:
            return Expr("un", a.kind, "-", (Expr("paren", a.kind, "", (a,), a.bound, a.det),),
                        a.bound, a.det)
        if r == 12:
            if a.bound < 1e3:
                return Expr("bin", a.kind, "**", (a, lit("2", "i4", 2)), a.bound ** 2, a.det)
            return a
        if r == 13:
            b = self.expr(env, a.kind, False, depth + 1)
            den = Expr("paren", a.kind, "", (Expr("bin", a.kind, "+", (
                lit("1.0" if a.kind == "r4" else "1.0d0", a.kind, 1),
                Expr("call", b.kind, "abs", (b,), b.bound, b.det)), b.bound + 1, False),),
                b.bound + 1, False)
            return Expr("bin", _wider(a.kind, b.kind), "/", (a, den), a.bound, False)
        if r == 14:
            fn = self.pick(["sin", "cos", "tanh", "atan"])
            return Expr("call", a.kind, fn, (a,), 1.6 if fn == "atan" else 1.0, False)
        if r == 15:
            one = "1.0" if a.kind == "r4" else "1.0d0"
            inner = Expr("bin", a.kind, "+", (Expr("call", a.kind, "abs", (a,), a.bound, a.det),
                                              lit(one, a.kind, 1)), a.bound + 1, a.det)
            fn = self.pick(["sqrt", "log", "log10"])
            return Expr("call", a.kind, fn, (inner,), max(1.0, a.bound), False)
        if r == 16 and a.bound <= 8:
            fn = self.pick(["exp", "sinh", "cosh"])
            return Expr("call", a.kind, fn, (a,), float(np.exp(a.bound)) + 1, False)
        if r == 17:
            one = "1.0" if a.kind == "r4" else "1.0d0"
            den = Expr("paren", a.kind, "", (Expr("bin", a.kind, "+", (
                lit(one, a.kind, 1), Expr("call", a.kind, "abs", (a,), a.bound, a.det)),
                a.bound + 1, a.det),), a.bound + 1, a.det)
            frac = Expr("bin", a.kind, "/", (a, den), 1.0, False)
            fn = self.pick(["asin", "acos"])
            return Expr("call", a.kind, fn, (frac,), 3.2, False)
        if r == 18:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            one = "1.0" if a.kind == "r4" else "1.0d0"
            pos = Expr("bin", a.kind, "+", (lit(one, a.kind, 1),
                                             Expr("call", a.kind, "abs", (b,), b.bound, b.det)),
                       b.bound + 1, b.det)
            return Expr("call", a.kind, "atan2", (a, pos), 3.2, False)
        if r == 19:
            if a.bound < 50 and a.det:
                e = "1.5" if a.kind == "r4" else "1.5d0"
                base = Expr("call", a.kind, "abs", (a,), a.bound, a.det)
                return Expr("bin", a.kind, "**", (base, lit(e, a.kind, 1.5)),
                            a.bound ** 1.5 + 1, False)
            return a
        return a

    def same_kind(self, e: Expr, kind: str) -> Expr:
        if e.kind == kind:
            return e
        if e.kind == "i4" or kind in ("r4", "r8"):
            return self.convert(e, kind)
        return e

    def fit(self, e: Expr, kind: str) -> Expr:
        """Make an arithmetic result *kind* (real(...) narrows a double)."""
        if e.kind == kind or (e.kind in ("i4", "r4") and kind == "r8"):
            return e
        if e.kind == "r8" and kind == "r4":
            return Expr("call", "r4", "real", (e,), e.bound, e.det)
        return self.convert(e, kind)

    def comparison(self, env, det=True):
        kind = self.pick(["i4", "i4", "r4", "r8"])
        a = self.expr(env, kind, True, 2)
        b = self.expr(env, kind if self.chance(0.7) else self.pick(["i4", "r4"]), True, 2)
        if a.kind in ("r4", "r8") and b.kind in ("r4", "r8") and a.kind != b.kind and \
                self.chance(0.5):
            b = self.convert(b, a.kind)
        op = self.pick(["<", "<=", ">", ">=", "==", "/=", ".lt.", ".ge.", ".ne."])
        return Expr("bin", "l", op, (a, b), 1, True)

    def logical(self, env, depth):
        r = self.int_in(0, 9)
        if depth >= 2 or r <= 4:
            return self.leaf(env, "l", True)
        if r <= 7:
            a = self.logical(env, depth + 1)
            b = self.logical(env, depth + 1)
            return Expr("bin", "l", self.pick([".and.", ".or.", ".and.", ".eqv.", ".neqv."]),
                        (a, b), 1, True)
        return Expr("un", "l", ".not.", (Expr("paren", "l", "", (self.logical(env, depth + 1),),
                                              1, True),), 1, True)

    # }}}

    # {{{ statements

    def stored(self, target: Expr, value: Expr) -> Assign:
        """``target = value``, clamped to the variable's bound."""
        kind = target.kind
        if kind == "l":
            return Assign(target, value)
        if target.det and not value.det:
            # an exact variable keeps exact values (comparisons may read it)
            value = lit("0" if kind == "i4" else ("0.0d0" if kind == "r8" else "0.0"), kind, 0)
        if kind == "r8" and any(n.kind == "r4" and not n.det for n in value.walk()):
            self.loose64 = True       # single-precision rounding reaches a double
        if kind == "i4" and value.kind != "i4":
            value = self.convert(value, "i4") if value.det else lit("1", "i4", 1)
        if value.bound > CLAMP:
            if kind == "i4":
                c = lit(str(int(CLAMP)), "i4", CLAMP)
            else:
                c = lit("1000.0" if value.kind != "r8" else "1000.0d0", value.kind, CLAMP)
            ck = c.kind if kind != "i4" else "i4"
            v = value if value.kind == ck else self.convert(value, ck)
            value = Expr("call", ck, "max", (
                Expr("un", ck, "-", (c,), CLAMP, True),
                Expr("call", ck, "min", (c, v), CLAMP, v.det)), CLAMP, v.det)
        return Assign(target, value)

    def target(self, env, want_kind=None):
        cands = [v for v in self.vars.values() if v.role in ("out", "local")]
        if want_kind:
            cands = [v for v in cands if v.kind == want_kind] or cands
        for _ in range(5):
            v = self.pick(cands)
            if v.is_array:
                e = self.array_ref(env, v)
                if e is None:
                    continue
                return e
            return Expr("var", v.kind, v.name, (), v.bound, v.exact)
        return None

    def assignment(self, env):
        t = self.target(env)
        if t is None:
            return None
        if t.kind == "l":
            return Assign(t, self.logical(env, 0))
        r = self.rng.random()
        if r < 0.35 and t.kind != "l":
            # accumulate: t = t + e, or max/min
            e = self.expr(env, t.kind if t.kind != "i4" else "i4", t.kind == "i4" or t.det)
            if t.kind == "i4" and e.kind != "i4":
                e = self.convert(e, "i4")
            if self.chance(0.7):
                value = Expr("bin", _wider(t.kind, e.kind), self.pick(["+", "-"]), (t, e),
                             t.bound + e.bound, t.det and e.det)
            else:
                e2 = self.same_kind(e, t.kind)
                value = Expr("call", t.kind, self.pick(["max", "min"]), (t, e2),
                             max(t.bound, e2.bound), e2.det)
            return self.stored(t, self.fit(value, t.kind) if t.kind != "i4" else value)
        e = self.expr(env, t.kind, t.kind == "i4" or t.det)
        return self.stored(t, self.fit(e, t.kind) if t.kind != "i4" else e)

    def loop(self, env, depth):
        self.n_loops += 1
        var = f"i{self.n_loops}"
        outer = [v for v, _, _ in env.loops]
        r = self.int_in(0, 9)
        size = self.pick(self.sizes)
        lo, hi = "1", size
        if r == 0 and outer:
            lo = self.pick(outer)                 # triangular
        elif r == 1 and outer:
            hi = self.pick(outer)
        elif r == 2:
            lo, hi = "1", str(self.int_in(2, 4))
        elif r == 3:
            lo = "2"
            hi = f"{size} - 1"
        elif r == 4:
            lo = "0"
            hi = f"{size} + 1"
        elif r == 5 and len(self.sizes) > 1:
            hi = "min(n, m)"
        step = 1
        if self.chance(0.12):
            step = self.pick([2, 3, -1, -2])
        d = Do(var, lo, hi, step, [], isl_lo=lo, isl_hi=hi)
        if self.chance(0.08) and step == 1:
            d.label = 10 * (self.n_loops + 1)
        elif self.chance(0.1) and not self.fixed_form:
            # (construct names in fixed form: fparser refuses them)
            d.name = f"l{self.n_loops}"
        env.loops.append((var, lo, hi))
        env.names.append(d.name)
        try:
            d.body = self.block(env, depth + 1, self.int_in(1, 4))
        finally:
            env.loops.pop()
            env.names.pop()
        return d

    def csr_loop(self, env, depth):
        """do j = ptr(i), ptr(i+1) - 1 inside a loop over i = 1..n."""
        outer = [v for v, lo, hi in env.loops if lo == "1" and hi == "n"]
        if not outer:
            return None
        i = self.pick(outer)
        self.n_loops += 1
        var = f"i{self.n_loops}"
        d = Do(var, f"ptr({i})", f"ptr({i} + 1) - 1", 1, [], isl_lo="1", isl_hi="m")
        env.loops.append((var, "1", "m"))
        env.names.append(None)
        try:
            d.body = self.block(env, depth + 1, self.int_in(1, 3))
        finally:
            env.loops.pop()
            env.names.pop()
        return d

    def concurrent(self, env, depth):
        """``do concurrent`` writing one element per iteration from inputs only."""
        outs = [v for v in self.vars.values() if v.role == "out" and v.is_array]
        if not outs:
            return None
        target = self.pick(outs)
        n_heads = min(self.int_in(1, 2), len(target.dims))
        axes = list(self.rng.permutation(len(target.dims)))[:n_heads]
        outer_env_loops = list(env.loops)
        heads = []
        idx = [None] * len(target.dims)
        for ax in axes:
            lb, ub = target.dims[int(ax)]
            self.n_loops += 1
            var = f"i{self.n_loops}"
            lo, hi = self.pick([("1", self.pick(self.sizes)), ("2", self.pick(self.sizes)),
                                (lb, ub)])
            env.loops.append((var, lo, hi))
            if not self.in_bounds(env, var, lb, ub):
                env.loops = outer_env_loops
                return None
            heads.append((var, lo, hi))
            idx[int(ax)] = Expr("lit", "i4", var, (), 0.0, True)
        # the other subscripts may not use the heads' variables; giving up
        # leaves the outer loops only (the heads would leak into later statements)
        saved = env.loops
        env.loops = outer_env_loops
        for d, (lb, ub) in enumerate(target.dims):
            if idx[d] is None:
                c = self.index_for(env, lb, ub)
                if c is None:
                    return None
                idx[d] = Expr("lit", "i4", c, (), 0.0, True)
        env.loops = saved
        env.pure = True
        try:
            t = Expr("ref", target.kind, target.name, tuple(idx), target.bound, target.exact)
            value = self.expr(env, target.kind, target.kind == "i4" or target.exact)
            body = [self.stored(t, self.fit(value, t.kind) if t.kind != "i4" else value)]
            mask = self.logical(env, 1) if self.chance(0.4) else None
        finally:
            env.pure = False
            env.loops = outer_env_loops
        return DoConcurrent(heads, mask, body)

    def array_statement(self, env):
        """Array syntax: ``u(2:n) = a(1:n-1) * 2 + ...`` or ``u = scalar``."""
        outs = [v for v in self.vars.values() if v.role == "out" and v.is_array]
        if not outs:
            return None
        v = self.pick(outs)
        if self.chance(0.15):
            value = self.expr(env, v.kind, v.kind == "i4" or v.exact, 1)
            if v.name in value.names():
                return None
            return self.stored(Expr("var", v.kind, v.name, (), v.bound, v.exact),
                               self.fit(value, v.kind) if v.kind != "i4" else value)
        env.section = self.pick(self.sizes + [f"{self.sizes[0]} - 1", "3", "2"])
        try:
            t = self.section_ref(env, v)
            if t is None:
                return None
            value = self.expr(env, v.kind, v.kind == "i4" or v.exact)
        finally:
            env.section = None
        if any(x.op == "ref" and x.text == v.name and not any(":" in i.text for i in x.args)
               for x in value.walk()):
            # an element of the array being assigned: f2loopy asks for a temporary
            return None
        return self.stored(t, self.fit(value, v.kind) if v.kind != "i4" else value)

    def select_statement(self, env, depth):
        sel = self.expr(env, "i4", True, 1)
        values = sorted(set(int(x) for x in self.rng.integers(-3, 9, size=self.int_in(1, 5))))
        k = self.int_in(1, min(3, len(values)))
        cuts = sorted(self.rng.choice(range(1, len(values)), size=k - 1, replace=False)) \
            if k > 1 else []
        groups = [values[a:b] for a, b in zip([0] + list(cuts), list(cuts) + [len(values)])]
        cases = []
        for gi, g in enumerate(groups):
            r = self.int_in(0, 5)
            if gi == 0 and r == 0:
                sel_text = [f":{g[-1]}"]
            elif gi == len(groups) - 1 and r == 1:
                sel_text = [f"{g[0]}:"]
            elif len(g) > 1 and r <= 3:
                sel_text = [f"{g[0]}:{g[-1]}"]
            else:
                sel_text = [str(x) for x in g]
            cases.append((sel_text, self.block(env, depth, self.int_in(1, 2))))
        default = self.block(env, depth, 1) if self.chance(0.5) else None
        return Select(sel, cases, default)

    def call_statement(self, env):
        subs = [h for h in self.helpers if not h.is_function]
        if not subs:
            return None
        h = self.pick(subs)
        t = self.target(env, want_kind=h.kind)
        if t is None or t.kind != h.kind:
            return None
        args = []
        for a in h.args[:-1]:
            e = self.same_kind(self.fit(self.expr(env, a.kind, False, 1), a.kind), a.kind)
            if e.kind != a.kind or t.text in e.names():
                return None          # no aliasing between inputs and the output
            args.append(e)
        if t.det and not (h.det and all(a.det for a in args)):
            return None
        if t.kind == "r8" and (h.kind == "r4" and not h.det):
            self.loose64 = True
        return CallStmt(h.name, (*args, t))

    def if_block(self, env, depth):
        branches = [(self.logical(env, 0), self.block(env, depth, self.int_in(1, 3)))]
        while self.chance(0.3):
            branches.append((self.logical(env, 0), self.block(env, depth, self.int_in(1, 2))))
        els = self.block(env, depth, self.int_in(1, 2)) if self.chance(0.5) else None
        return If(branches, els)

    def statement(self, env, depth):
        r = self.rng.random()
        in_loop = bool(env.loops)
        if r < 0.22 and depth < self.max_depth:
            return self.loop(env, depth)
        if r < 0.27 and self.csr and in_loop and depth < self.max_depth:
            s = self.csr_loop(env, depth)
            if s is not None:
                return s
        if r < 0.37:
            return self.if_block(env, depth)
        if r < 0.42:
            a = self.assignment(env)
            if a is not None:
                return OneLineIf(self.logical(env, 1), a)
        if r < 0.45 and in_loop:
            names = [n for n in env.names if n]
            name = self.pick(names) if names and self.chance(0.5) else None
            return OneLineIf(self.logical(env, 1), Cycle(name))
        if r < 0.46:
            return OneLineIf(self.logical(env, 1), Return())
        if r < 0.51:
            st = self.select_statement(env, depth)
            if st is not None:
                return st
        if r < 0.57:
            st = self.array_statement(env)
            if st is not None:
                return st
        if r < 0.61:
            st = self.call_statement(env)
            if st is not None:
                return st
        if r < 0.64 and depth < self.max_depth:
            st = self.concurrent(env, depth)
            if st is not None:
                return st
        return self.assignment(env)

    def block(self, env, depth, n):
        out = []
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            s = self.statement(env, depth)
            if s is not None:
                out.append(s)
        return out

    # }}}

    def generate(self) -> Program:
        self.fixed_form = self.chance(0.15)
        self.declare()
        env = _Env(self.sizes)
        self.budget = self.int_in(3, self.max_statements)
        body = []
        # most programs start with a loop nest
        while self.budget > 0:
            if not body or self.chance(0.6):
                self.budget -= 1
                body.append(self.loop(env, 0))
            else:
                body.extend(self.block(env, 0, 1))
        prog = Program(f"fz{self.seed}", self.args, self.locals, self.prologue(), body,
                       [f"i{k}" for k in range(1, self.n_loops + 1)], seed=self.seed,
                       helpers=self.helpers, helper_module=self.helper_module,
                       loose64=self.loose64)
        prog.fixed_form = self.fixed_form
        prog.upper = self.chance(0.5 if self.fixed_form else 0.1)
        return prog


def generate_program(seed: int, **options) -> Program:
    """A random program (deterministic in *seed*)."""
    return Generator(seed, **options).generate()


# {{{ transformations

def loops_of(program: Program):
    """``(Do, depth, enclosing Do list)`` for every loop of the body."""
    out = []

    def visit(stmts, outer):
        for s in stmts:
            if isinstance(s, Do):
                out.append((s, len(outer), list(outer)))
                visit(s.body, outer + [s])
            elif isinstance(s, If):
                for b in _children(s):
                    visit(b, outer)
    visit(program.body, [])
    return out


def choose_transformations(program: Program, kernel, rng) -> list:
    """Random transformation script lines for *program*, whose untransformed
    kernel is *kernel* (to know the inames, arrays and temporaries).  They
    are meant to keep the results; the race check and the transformations'
    own checks refuse some, and the fuzzer then drops those."""
    from f2loopy.ir.kernel import ArrayArg
    inames = {n.lower(): n for n in kernel.all_inames()}
    loops = [(d, depth, outer) for d, depth, outer in loops_of(program)
             if d.var.lower() in inames and d.step == 1]
    out = []
    if not loops:
        return out

    def name(var):
        return inames[var.lower()]

    def const(d):
        return d.hi.strip().isdigit() and d.lo.strip().isdigit()

    written = kernel.written_variables()
    arrays2d = [a.name for a in kernel.args if isinstance(a, ArrayArg) and a.ndim >= 2]
    in_arrays = [a.name for a in kernel.args if isinstance(a, ArrayArg) and
                 a.name not in written and np.dtype(a.dtype).kind != "b"]
    out_arrays = [a.name for a in kernel.args if isinstance(a, ArrayArg) and a.name in written
                  and np.dtype(a.dtype).kind != "b"]
    scalar_temps = [t for t, v in kernel.temporaries.items() if not v.shape and t in written
                    and not t.startswith(("cond", "selector"))]
    int_scalars = [a.name for a in kernel.args if not isinstance(a, ArrayArg) and
                   a.name in written and np.dtype(a.dtype).kind == "i"]
    n = int(rng.integers(1, 4))
    used = set()
    for _ in range(n):
        d, depth, outer = loops[int(rng.integers(len(loops)))]
        v = name(d.var)
        if v in used:
            continue
        r = int(rng.integers(0, 19))
        length = int(rng.choice([2, 3, 4, 8]))
        if r <= 2:
            out.append(f'k = split_iname(k, "{v}", {length})')
        elif r == 3:
            out.append(f'k = split_iname(k, "{v}", {length}, inner_tag="unr")')
        elif r <= 5 and depth == 0:
            out.append(f'k = split_iname(k, "{v}", {length}, outer_tag="g.0", '
                       f'inner_tag="l.0")')
        elif r == 6 and depth == 0:
            out.append(f'k = tag_inames(k, "{v}:g.0")')
        elif r == 7 and outer:
            o = outer[-1]
            if o.var.lower() in inames and o.step == 1:
                out.append(f'k = set_loop_priority(k, "{v},{name(o.var)}")')
        elif r == 8 and const(d):
            out.append(f'k = tag_inames(k, "{v}:unr")')
        elif r == 9:
            out.append(f'k = rename_iname(k, "{v}", "{v}_r")')
        elif r == 10 and written:
            # distributing the loop may reverse a dependence: then the
            # transformation is refused (tests/regressions/
            # duplicate_inames_distribution.f90) and the fuzzer drops it
            var = sorted(written)[int(rng.integers(len(written)))]
            out.append(f'k = duplicate_inames(k, "{v}", within="writes:{var}")')
        elif r == 11 and outer:
            o = outer[-1]
            if o.var.lower() in inames and o.step == 1:
                out.append(f'k = join_inames(k, "{name(o.var)},{v}")')
        elif r == 12 and scalar_temps:
            t = scalar_temps[int(rng.integers(len(scalar_temps)))]
            out.append(f'k = privatize_temporaries_with_inames(k, "{v}", '
                       f'only_var_names="{t}")')
        elif r == 13:
            out.append(f'k = tag_inames(k, "{v}:ilp")' if const(d) else
                       f'k = split_iname(k, "{v}", {length}, inner_tag="ilp")')
        elif r == 14 and in_arrays:
            arr = in_arrays[int(rng.integers(len(in_arrays)))]
            out.append(f'k = add_prefetch(k, "{arr}", ["{v}"], default_tag=None)')
        else:
            out.append(f'k = split_iname(k, "{v}", {length}, outer_tag="unr")'
                       if const(d) else f'k = split_iname(k, "{v}", {length})')
        used.add(v)
    if arrays2d and rng.random() < 0.2:
        arr = arrays2d[int(rng.integers(len(arrays2d)))]
        out.append(f'k = tag_array_axes(k, "{arr}", "{rng.choice(["c", "f"])}")')
    if out_arrays and rng.random() < 0.1:
        arr = out_arrays[int(rng.integers(len(out_arrays)))]
        out.append(f'k = buffer_array(k, "{arr}", (), default_tag=None)')
    if scalar_temps and rng.random() < 0.1:
        t = scalar_temps[int(rng.integers(len(scalar_temps)))]
        out.append(f'k = assignment_to_subst(k, "{t}")')
    if int_scalars and rng.random() < 0.1:
        out.append(f'k = accumulation_to_reduction(k, "writes:{int_scalars[0]}")')
    sizes = [a.name for a in program.args if a.role == "size"]
    sizes = [a.name for a in kernel.args if a.name.lower() in {x.lower() for x in sizes}]
    if sizes and rng.random() < 0.2:
        out.append(f'k = assume(k, "{sizes[0]} >= 1")')
    if sizes and rng.random() < 0.15:
        out.append(f"k = fix_parameters(k, {sizes[-1]}={int(rng.integers(1, 10))})")
    return out

# }}}


# {{{ shrinking

def _stmt_lists(program: Program):
    """Every statement list of the body (the body itself and nested ones)."""
    out = [program.body]
    stack = list(program.body)
    while stack:
        s = stack.pop()
        for b in _children(s):
            out.append(b)
            stack.extend(b)
    return out


def shrink_candidates(program: Program):
    """Smaller variants of *program*, most aggressive first."""
    # drop transformations
    for k in range(len(program.transforms)):
        p = program.copy()
        del p.transforms[k]
        yield p
    # delete statements, unwrap loops and ifs
    n_lists = len(_stmt_lists(program))
    for li in range(n_lists):
        lst = _stmt_lists(program)[li]
        for si in range(len(lst)):
            p = program.copy()
            target = _stmt_lists(p)[li]
            del target[si]
            yield p
            s = lst[si]
            if isinstance(s, If):
                for bi in range(len(_children(s))):
                    p = program.copy()
                    target = _stmt_lists(p)[li]
                    kids = _children(target[si])
                    target[si:si + 1] = kids[bi]
                    yield p
                if s.else_body is not None or len(s.branches) > 1:
                    p = program.copy()
                    t = _stmt_lists(p)[li][si]
                    t.else_body = None
                    t.branches = t.branches[:1]
                    yield p
            if isinstance(s, OneLineIf):
                p = program.copy()
                target = _stmt_lists(p)[li]
                target[si] = target[si].stmt
                yield p
    # simplify expressions: replace an assigned value by one of its parts
    for li in range(n_lists):
        lst = _stmt_lists(program)[li]
        for si, s in enumerate(lst):
            if not isinstance(s, Assign):
                continue
            for sub in _sub_candidates(s.value, s.target.kind):
                p = program.copy()
                _stmt_lists(p)[li][si].value = sub
                yield p


def _sub_candidates(e: Expr, kind: str):
    """Parts of *e* that can replace it as the value assigned to a *kind*
    variable (integers only take integer parts: a conversion of a real could
    be discontinuous)."""
    seen = set()
    for sub in e.walk():
        if sub is e or sub.op == "paren":
            continue
        ok = sub.kind == kind or (kind in ("r4", "r8") and sub.kind in ("r4", "r8", "i4"))
        if kind in ("r4", "r8") and sub.op == "lit" and sub.kind == "i4":
            ok = False      # array subscripts are integer literals too
        key = sub.render()
        if ok and key not in seen:
            seen.add(key)
            yield copy.deepcopy(sub)


def shrink(program: Program, still_fails, *, max_steps: int = 400, log=None) -> Program:
    """Greedy shrinking: apply the first candidate that still fails, repeat."""
    steps = 0
    improved = True
    while improved and steps < max_steps:
        improved = False
        for cand in shrink_candidates(program):
            steps += 1
            if steps >= max_steps:
                break
            if len(cand.render()) >= len(program.render()) and \
                    len(cand.transforms) == len(program.transforms):
                continue
            if still_fails(cand):
                program = cand
                improved = True
                if log:
                    log(f"shrunk to {len(program.render())} characters")
                break
    return program

# }}}
