"""Early exits in the random programs of the differential fuzzer: ``exit``
(also named), forward ``goto`` out of loops and blocks, ``goto`` to the
terminal statement of a labelled ``do``, computed ``goto``, arithmetic
``if``, backward ``goto`` (a bounded repetition), loops with a step known
only at run time (either sign, zero-trip ones included), and reads of loop
variables after every way out of their loops (issue 26).

Every program stays deterministic and terminating:

* every loop variable is set in the prologue, so reading one after a loop
  that never ran reads a defined value;
* a backward ``goto`` is taken only while the counter ``ng`` (which nothing
  else writes) is below :data:`BACK_LIMIT`, and increments it, so the
  program repeats statements at most that many times in all;
* the expression of an arithmetic ``if`` and the index of a computed
  ``goto`` are computed bit for bit by both compilers.
"""

from __future__ import annotations

from f2loopy.fuzz.progen_base import GeneratorBase
from f2loopy.fuzz.program import (
    ArithmeticIf, Assign, ComputedGoto, Continue, Do, Exit, Expr, Goto, If, OneLineIf,
    Variable, _children, lit)

#: how often a backward goto may be taken in one run of a program
BACK_LIMIT = 3
#: the counter of backward gotos taken
COUNTER = "ng"
#: run-time steps: (text, sign); *kk* is an integer input in [-9, 9]
RUNTIME_STEPS = (("(1 + mod(abs(kk), 3))", 1), ("(-1 - mod(abs(kk), 2))", -1),
                 ("sign(2, kk)", 0), ("sign(1, kk - 1)", 0))


class ControlMixin(GeneratorBase):
    """The statements and block structure of early exits (mixed into
    :class:`f2loopy.fuzz.progen.Generator`)."""

    def init_control(self) -> None:
        self.next_label = 500
        self.used_labels: set = set()

    def new_label(self) -> int:
        self.next_label += 10
        return self.next_label

    def counter_variable(self) -> Variable:
        return Variable(COUNTER, "i4", role="counter", bound=CLAMP_COUNTER)

    def runtime_step(self):
        """``(text, sign)`` of a run-time step, or None (no ``kk`` input)."""
        if "kk" not in self.vars:
            return None
        return self.pick(RUNTIME_STEPS)

    def control_statement(self, env):
        """An early exit from where *env* is, or None."""
        kinds = []
        if env.loops:
            kinds += ["exit", "exit"]
        if env.labels:
            kinds += ["goto", "goto", "goto", "computed", "arithmetic"]
        if env.back_labels:
            kinds += ["back"]
        if env.do_labels:
            kinds += ["terminal"]
        if not kinds:
            return None
        kind = self.pick(kinds)
        if kind == "exit":
            names = [n for n in env.names if n]
            name = self.pick(names) if names and self.chance(0.5) else None
            return OneLineIf(self.logical(env, 1), Exit(name))
        if kind in ("goto", "terminal"):
            label = self.pick(env.labels if kind == "goto" else env.do_labels)
            self.used_labels.add(label)
            return OneLineIf(self.logical(env, 1),
                             Goto(label, self.pick(["goto", "go to", "goto"])))
        if kind == "computed":
            labels = tuple(self.pick(env.labels) for _ in range(self.int_in(1, 3)))
            self.used_labels.update(labels)
            return ComputedGoto(labels, self.expr(env, "i4", True, 1))
        if kind == "arithmetic":
            labels = tuple(self.pick(env.labels) for _ in range(3))
            value = self.expr(env, self.pick(["i4", "r4", "r8"]), True, 1)
            if not value.det:
                return None
            self.used_labels.update(labels)
            return ArithmeticIf(value, labels)
        label = self.pick(env.back_labels)
        self.used_labels.add(label)
        ng = Expr("var", "i4", COUNTER, (), CLAMP_COUNTER, True)
        below = Expr("bin", "l", "<", (ng, lit(str(BACK_LIMIT), "i4", BACK_LIMIT)), 1, True)
        cond = Expr("bin", "l", ".and.", (below, self.logical(env, 1)), 1, True)
        step = Assign(ng, Expr("bin", "i4", "+", (ng, lit("1", "i4", 1)), CLAMP_COUNTER, True))
        return If([(cond, [step, Goto(label)])])

    def open_labels(self, env, out: list) -> tuple:
        """Labels of a block being generated: a forward one (statements in
        the block may jump to its end) and a backward one (its statement
        comes first; statements after it may jump back to it)."""
        forward = self.new_label() if self.chance(0.3) else None
        back = self.new_label() if self.chance(0.06) else None
        if forward is not None:
            env.labels.append(forward)
        if back is not None:
            env.back_labels.append(back)
            out.append(Continue(back))
        return forward, back

    def close_labels(self, env, out: list, forward, back) -> None:
        """End a block opened by :meth:`open_labels`: the forward label's
        statement if something jumps to it, then reads of the variables of
        the loops that a jump may have left."""
        if back is not None:
            env.back_labels.remove(back)
            if back not in self.used_labels:
                out.remove(next(s for s in out if isinstance(s, Continue) and s.label == back))
        if forward is None:
            return
        env.labels.remove(forward)
        if forward not in self.used_labels:
            return
        out.append(Continue(forward))
        loops = [v for s in out for v in loop_variables(s)]
        for _ in range(min(2, len(loops))):
            self.read_loop_variable(env, out, self.pick(loops))

    def read_loop_variable(self, env, out: list, var: str) -> None:
        """``t = var`` for an integer *t* the program writes (an output)."""
        t = self.target(env, want_kind="i4")
        if t is not None and t.kind == "i4":
            out.append(self.stored(t, Expr("var", "i4", var, (), 64, True)))


#: the bound of the backward-goto counter's values
CLAMP_COUNTER = 8.0


def loop_variables(stmt) -> list:
    """Variables of the ``do`` loops in *stmt* (itself and nested ones)."""
    out = []
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, Do):
            out.append(s.var)
        stack.extend(x for b in _children(s) for x in b)
    return out
