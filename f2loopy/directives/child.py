"""The sandbox child: check, compile and run the script, report as JSON.

:func:`child_main` runs in the forked process.  It compiles every script block
and recipe (after the static checks of :mod:`~f2loopy.directives.checker`),
locks the process down (:mod:`~f2loopy.directives.lockdown`), runs the blocks
in one shared namespace, collects ``RESULT`` and the checkpoints, and writes
one JSON document to the result pipe:

* success: ``{"ok": true, "table": [kernel, ...], "result": [index, ...],
  "checkpoints": [{"label": ..., "kernels": [index, ...]}], "recipes": [...],
  "output": ..., "layers": {...}}`` (kernels as
  :func:`f2loopy.ir.serialize.encode_kernel` data, each stored once);
* failure: ``{"ok": false, "error": {"sandbox": bool, "message": ...,
  "at": LOCATION, "notes": [{"message": ..., "at": LOCATION}],
  "traceback": ... (only with debug)}, "output": ...}``.

A LOCATION is ``{"unit": "block", "index": i, "line": L, "col": C, "length": N}``
(a line of the Fortran file, where block *i* is), ``{"unit": "recipe",
"name": ..., "line": ..., ...}`` (a line of a recipe file), ``{"unit": "begin",
"index": i}`` (the ``!$loopy begin`` line of block *i*) or ``{"unit": "span",
"filename": ..., "line": ..., ...}`` (a span an f2loopy error carried).  The
parent validates all of it; it never unpickles or evaluates anything.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import json
import os
import re
import signal
import warnings
from collections.abc import Callable
from typing import Any, overload
from dataclasses import dataclass, field

from f2loopy.diagnostics import F2LoopyError
from f2loopy.directives import policy
from f2loopy.directives.attributes import GUARD_NAME, guard_attribute_reads
from f2loopy.directives.checker import check_script
from f2loopy.directives.lockdown import (
    FramePos, Guard, LimitExceeded, Limits, SandboxRefusal, frame_pos, isolate_descriptors,
    lock_down, scrub_environment)
from f2loopy.directives.namespace import ScriptContext, kernels_in
from f2loopy.ir.kernel import TranslationUnit
from f2loopy.ir.serialize import encode_kernel

FORMAT = "f2loopy-sandbox"
VERSION = 1
MAX_MESSAGE = 2000


@dataclass(frozen=True)
class CodeUnit:
    """One piece of Python to run: a script block or a recipe file.

    :attr kind: ``"block"``, ``"recipe"`` or ``"pre"`` (the
        *pre_transform_code* of :func:`~f2loopy.directives.parse_transformed_fortran`,
        run before the blocks in their namespace).
    :attr key: the block's index, or the recipe's name.
    :attr line_map: line ``k`` of *text* is line ``line_map[k-1]`` of its file.
    :attr col_offsets: characters before the code on each of those lines.
    :attr prebound: an old-style ``!$loopy begin transform`` block: the kernels
        are bound to their subroutine names, and are the result unless the
        script sets ``RESULT``.
    """

    kind: str
    key: object
    text: str
    line_map: tuple
    col_offsets: tuple
    prebound: bool = False

    @property
    def code_name(self) -> str:
        if self.kind == "pre":
            return "<f2loopy-pre-transform-code>"
        return f"<f2loopy-script-{self.key}>" if self.kind == "block" \
            else f"<f2loopy-recipe:{self.key}>"

    @property
    def where(self) -> str:
        """How tracebacks and warnings name the unit's file."""
        return "pre_transform_code" if self.kind == "pre" else f"recipe {self.key}"


@dataclass(frozen=True)
class Job:
    """Everything the child needs (inherited through fork, never serialized)."""

    source: str
    filename: str
    defines: dict
    blocks: tuple                      # CodeUnit per script block, in file order
    recipes: dict                      # name -> CodeUnit
    kernels: tuple                     # the frontend's kernels
    cli_recipe: str | None = None
    debug: bool = False
    pre_code: CodeUnit | None = None   # run before the blocks, in their namespace
    #: tunable name -> value for ``tunable(...)`` (checked by the parent)
    tunables: dict = field(default_factory=dict)
    #: the default REAL kind of the translation (8: ``-fdefault-real-8``)
    default_real_kind: int = 4
    #: send the ``checkpoint(...)`` kernels back (``translate`` drops them; the
    #: paper's eight were 8/9 of the answer, encoded, sent and decoded for nothing)
    checkpoints: bool = True
    #: kernels -> their code as answer data
    #: (:func:`~f2loopy.directives.child_codegen.lower_all`), to send the
    #: code of the result (and checkpoint) kernels with them; given only
    #: where no script code runs in this child (no block, no
    #: pre_transform_code, only f2loopy's own recipes), which is then as
    #: clean as the second child of :mod:`~f2loopy.directives.child_codegen`
    #: and has usually generated that code already (the recipe's check: one
    #: code generation, not two); None: the parent has it made elsewhere
    code: Callable[[list], list] | None = None
    #: sandbox layers; tests switch single ones off to check the others alone
    layers: dict = field(default_factory=lambda: {
        "checks": True, "builtins": True, "audit": True, "seccomp": True})


class _UnitError(Exception):
    """A script or recipe cannot be compiled (syntax error or refused construct)."""

    def __init__(self, message, unit, line, col_chars, length, sandbox, note=None):
        super().__init__(message)
        self.message, self.unit, self.line = message, unit, line
        self.col_chars, self.length, self.sandbox, self.note = col_chars, length, sandbox, note


class _ResultError(Exception):
    """RESULT is missing or not made of kernels."""


# {{{ locations

def _code_line(unit: CodeUnit, line: int) -> str:
    lines = unit.text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


@overload
def _chars(text: str, byte_col: int) -> int: ...


@overload
def _chars(text: str, byte_col: int | None) -> int | None: ...


def _chars(text: str, byte_col: int | None) -> int | None:
    """The character column of byte column *byte_col* of *text*."""
    if byte_col is None:
        return None
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def unit_location(unit: CodeUnit, line: int, col_chars: int | None, length: int | None) -> dict:
    """Location in the unit's file of code line *line*, 0-based char column."""
    idx = line - 1
    file_line = unit.line_map[idx] if 0 <= idx < len(unit.line_map) else \
        (unit.line_map[-1] if unit.line_map else 1)
    text = _code_line(unit, line)
    if col_chars is None:
        stripped = text.lstrip()
        col_chars = len(text) - len(stripped)
        length = len(stripped.rstrip()) or 1
    offset = unit.col_offsets[idx] if 0 <= idx < len(unit.col_offsets) else 0
    loc = {"unit": unit.kind, "line": file_line, "col": offset + col_chars + 1,
           "length": max(1, length or 1)}
    if unit.kind == "block":
        loc["index"] = unit.key
    else:
        loc["name"] = unit.key
    return loc


def _pos_location(unit: CodeUnit, pos: FramePos) -> dict:
    text = _code_line(unit, pos.line)
    col = _chars(text, pos.col)
    length = None
    if col is not None and pos.end_col is not None and pos.end_line == pos.line:
        length = max(1, _chars(text, pos.end_col) - col)
    elif col is not None:
        length = max(1, len(text.rstrip()) - col)
    return unit_location(unit, pos.line, col, length)


def _span_location(span) -> dict | None:
    if span is None:
        return None
    return {"unit": "span", "filename": str(span.filename), "line": span.line,
            "col": span.column, "length": span.length}

# }}}


class _Runner:
    def __init__(self, job: Job, limits: Limits):
        self.job = job
        self.limits = limits
        units = list(job.blocks) + list(job.recipes.values()) + \
            ([job.pre_code] if job.pre_code is not None else [])
        self.units = {u.code_name: u for u in units}
        self.guard = Guard(self.units)
        self.compiled: dict = {}          # code name -> code object
        self.broken: dict = {}            # recipe name -> _UnitError
        self.layers: dict = {}
        self.ctx: ScriptContext | None = None

    @property
    def context(self) -> ScriptContext:
        """The scripts' context (:meth:`make_context`, made when the job runs)."""
        if self.ctx is None:
            raise RuntimeError("the script context is made when the job runs")
        return self.ctx

    # {{{ compiling

    def compile_unit(self, unit: CodeUnit):
        try:
            tree = ast.parse(unit.text, unit.code_name, "exec")
        except SyntaxError as exc:
            line = exc.lineno or 1
            col = (exc.offset - 1) if exc.offset else None
            length = (exc.end_offset - exc.offset) if exc.end_offset and exc.offset and \
                exc.end_lineno == exc.lineno and exc.end_offset > exc.offset else 1
            raise _UnitError(f"{type(exc).__name__}: {exc.msg}", unit, line, col, length,
                             False) from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise _UnitError(f"the transformation script cannot be parsed: {exc}", unit, 1,
                             None, None, False) from None
        if self.job.layers.get("checks", True):
            refusals = check_script(tree)
            if refusals:
                r = refusals[0]
                text = _code_line(unit, r.line)
                start = _chars(text, r.col)
                span = (_chars(text, r.end_col) - start) \
                    if r.end_col is not None and start is not None else None
                raise _UnitError(r.message, unit, r.line, start, span, True, r.note)
            return compile(guard_attribute_reads(tree), unit.code_name, "exec",
                           dont_inherit=True)
        return compile(tree, unit.code_name, "exec", dont_inherit=True)

    def compile_all(self):
        if self.job.pre_code is not None:
            self.compiled[self.job.pre_code.code_name] = self.compile_unit(self.job.pre_code)
        for unit in self.job.blocks:
            self.compiled[unit.code_name] = self.compile_unit(unit)
        for name, unit in self.job.recipes.items():
            try:
                self.compiled[unit.code_name] = self.compile_unit(unit)
            except _UnitError as exc:
                self.broken[name] = exc

    # }}}

    def run_code(self, unit_or_code, g):
        if isinstance(unit_or_code, CodeUnit):
            if unit_or_code.kind == "recipe" and unit_or_code.key in self.broken:
                raise self.broken[unit_or_code.key]
            code = self.compiled[unit_or_code.code_name]
        else:
            code = unit_or_code
        exec(code, g)  # noqa: S102 - checked, compiled script code in the locked-down child

    def make_context(self) -> ScriptContext:
        job = self.job
        base = TranslationUnit(list(job.kernels), job.filename, job.source)
        ctx = ScriptContext(self.guard, source=job.source, filename=job.filename,
                            defines=job.defines, recipes=job.recipes, base_unit=base,
                            run_code=self.run_code, tunables=job.tunables,
                            default_real_kind=job.default_real_kind)
        return ctx

    def globals_for_blocks(self) -> dict:
        g = self.context.make_globals()
        if not self.job.layers.get("builtins", True):
            import builtins
            b = dict(vars(builtins))
            b["print"] = g["__builtins__"]["print"]
            b[GUARD_NAME] = g["__builtins__"][GUARD_NAME]
            if self.job.layers.get("trusted", False):
                b["__import__"] = self.trusted_import
            g["__builtins__"] = b
        return g

    def trusted_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        """``--trust-scripts``: the script's modules (``loopy``) as in the
        sandbox, any other module for real."""
        import builtins
        if level == 0 and isinstance(name, str) and name in self.context.modules:
            return self.context.modules[name] if fromlist else self.context.modules[name.split(".")[0]]
        return builtins.__import__(name, globals, locals, fromlist, level)

    def show_warning(self, message, category, filename, lineno, file=None, line=None):
        """Warnings go to the script's output (showing them the usual way would
        read source files, which the sandbox refuses)."""
        unit = self.units.get(filename)
        if unit is not None:
            where = self.job.filename if unit.kind == "block" else unit.where
            lineno = unit_location(unit, lineno, None, None)["line"]
        else:
            where = os.path.basename(str(filename))
        self.context.write_output(f"{where}:{lineno}: {category.__name__}: {message}\n")

    # {{{ running

    def run(self) -> dict:
        job = self.job
        self.compile_all()
        self.ctx = self.make_context()
        warnings.showwarning = self.show_warning
        self.guard.allowed_code = list(self.compiled.values())
        if not job.layers.get("trusted", False):
            scrub_environment()
        # the frontend parses long files in forked workers; here it must not
        os.environ["F2LOOPY_PARSE_JOBS"] = "1"
        self.layers = lock_down(self.guard, self.limits,
                                use_seccomp=job.layers.get("seccomp", True),
                                use_audit=job.layers.get("audit", True),
                                trusted=job.layers.get("trusted", False))
        if job.layers.get("seccomp", True) and not self.layers["seccomp"]:
            raise SandboxRefusal("the transformation sandbox could not install its seccomp "
                                 "filter (the kernel refused it); pass --trust-scripts to run "
                                 "the script without the sandbox if you trust whoever wrote it")
        self.layers["checks"] = job.layers.get("checks", True)
        self.layers["builtins"] = job.layers.get("builtins", True)
        g = self.globals_for_blocks()
        prebound = any(u.prebound for u in job.blocks)
        if prebound:
            g.update({k.name: k for k in job.kernels})
        if job.pre_code is not None:
            self.run_code(self.compiled[job.pre_code.code_name], g)
        if job.blocks:
            for unit in job.blocks:
                self.run_code(self.compiled[unit.code_name], g)
            if "RESULT" not in g and prebound:
                g["RESULT"] = [g.get(k.name) for k in job.kernels]
            if "RESULT" not in g:
                raise _ResultError("the transformation script did not set RESULT (assign the "
                                   "kernels to generate, e.g. RESULT = [knl])")
            try:
                kernels = kernels_in(g["RESULT"], "RESULT")
            except TypeError as exc:
                raise _ResultError(str(exc)) from None
        else:
            kernels = list(job.kernels)
        if job.cli_recipe is not None:
            options = self.ctx.recipe_options(job.cli_recipe, job.defines)
            kernels = kernels_in(self.ctx.apply_recipe(job.cli_recipe, kernels, **options),
                                 f"recipe '{job.cli_recipe}'")
        if not kernels:
            raise _ResultError("RESULT holds no kernels")
        names = [k.name for k in kernels]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise _ResultError(f"RESULT holds two kernels named '{dup[0]}' (each output "
                               "kernel needs its own name)")
        return self.success(kernels)

    def success(self, kernels) -> dict:
        table: list = []
        objects: list = []          # the kernel of each table entry
        index: dict = {}

        def ref(k):
            if id(k) not in index:
                index[id(k)] = len(table)
                table.append(encode_kernel(k))
                objects.append(k)
            return index[id(k)]

        result = [ref(k) for k in kernels]
        checkpoints = [{"label": label, "kernels": [ref(k) for k in ks]}
                       for label, ks in self.context.checkpoints] if self.job.checkpoints else []
        answer = {"ok": True, "table": table, "result": result, "checkpoints": checkpoints,
                  "recipes": list(self.context.used_recipes),
                  "tunables": self.context.tunables.declarations()}
        if self.job.code is not None:
            # the code of each table kernel, in table order (the recipe's own
            # check usually generated it: generate_code remembers it by identity)
            answer["code"] = self.job.code(objects)
        return answer

    # }}}

    # {{{ errors

    def begin_location(self) -> dict | None:
        if not self.job.blocks:
            return None
        return {"unit": "begin", "index": self.job.blocks[-1].key}

    def traceback_positions(self, tb) -> list:
        """(unit, FramePos) of the script and recipe frames, outermost first."""
        out = []
        while tb is not None:
            code = tb.tb_frame.f_code
            unit = self.units.get(code.co_filename)
            if unit is not None:
                out.append((unit, frame_pos(code, tb.tb_lineno, tb.tb_lasti)))
            tb = tb.tb_next
        return out

    def locate(self, positions) -> tuple[dict | None, list]:
        """Primary location and notes for script/recipe frame positions."""
        if not positions:
            return self.begin_location(), []
        unit, pos = positions[-1]
        at = _pos_location(unit, pos)
        notes: list[dict[str, Any]] = []
        if unit.kind == "recipe":
            outer = [(u, p) for u, p in positions if u.kind == "block"]
            if outer:
                notes.append({"message": f"in recipe '{unit.key}', applied here",
                              "at": _pos_location(*outer[-1])})
            elif self.job.cli_recipe is not None:
                notes.append({"message": f"in recipe '{unit.key}', applied with --transform",
                              "at": None})
        return at, notes

    def exception_message(self, exc: BaseException, g=None) -> tuple[str, bool, list]:
        """Message, whether it is a sandbox refusal, extra notes."""
        notes: list[dict[str, Any]] = []
        if isinstance(exc, (SandboxRefusal, LimitExceeded)):
            if isinstance(exc, SandboxRefusal) and exc.note:
                notes.append({"message": exc.note, "at": None})
            return exc.message, True, notes
        if isinstance(exc, MemoryError):
            return (f"the transformation script ran out of memory (the sandbox allows "
                    f"{self.limits.memory_mb} MiB)"), True, notes
        if isinstance(exc, F2LoopyError):
            if exc.span is not None:
                notes.append({"message": "the statement concerned",
                              "at": _span_location(exc.span)})
            for message, span in exc.notes:
                notes.append({"message": str(message), "at": _span_location(span)})
            return exc.message, False, notes
        name = getattr(exc, "name", None) if isinstance(exc, NameError) else None
        if name:
            return self.name_error(name), False, notes
        text = str(exc)
        if isinstance(exc, TypeError):
            text += self.keyword_hint(text)
        elif isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None),
                                                            type(json)):
            text += self.member_hint(exc.obj, getattr(exc, "name", None))
        return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__), False, notes

    def name_error(self, name: str) -> str:
        known = set(self.ctx.make_globals()) if self.ctx else set()
        known |= set(policy.SAFE_BUILTINS)
        known = {k for k in known if not k.startswith("_")}
        close = difflib.get_close_matches(name, sorted(known), n=2)
        msg = f"name '{name}' is not defined"
        if close:
            return msg + f" (did you mean {' or '.join(repr(c) for c in close)}?)"
        return msg + f" (a value from the command line? give it with -D {name}=VALUE)"

    def keyword_hint(self, text: str) -> str:
        """For ``f() got an unexpected keyword argument 'k'`` from a function of
        the API: the keyword it has that is closest, or all of them."""
        m = re.fullmatch(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'", text)
        if m is None or self.ctx is None:
            return ""
        func = getattr(self.context.modules["loopy"], m.group(1), None)
        if not callable(func):
            return ""
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            return ""
        names = [q.name for q in params if q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)
                 and not q.name.startswith("_") and q.name != "kernel"]
        close = difflib.get_close_matches(m.group(2), names, n=2, cutoff=0.8)
        if close:
            return f" (did you mean {' or '.join(repr(c) for c in close)}?)"
        return f" (its keyword arguments: {', '.join(names)})" if names else ""

    def member_hint(self, module, name) -> str:
        """For a name a script module proxy (``lp``, ``np``) does not have."""
        members = getattr(module, "__all__", None)
        if not isinstance(name, str) or not isinstance(members, list):
            return ""
        close = difflib.get_close_matches(name, members, n=2, cutoff=0.8)
        if close:
            return f" (did you mean {' or '.join(repr(c) for c in close)}?)"
        if getattr(module, "__name__", "") in ("loopy", "f2loopy"):
            return " (f2loopy does not provide it; docs/guide/usage.md lists the transformations it has)"
        return ""

    def format_traceback(self, exc) -> str:
        lines = ["Traceback (most recent call last, script lines are lines of their files):"]
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            unit = self.units.get(code.co_filename)
            if unit is not None:
                loc = unit_location(unit, tb.tb_lineno, None, None)
                where = self.job.filename if unit.kind == "block" else unit.where
                lines.append(f"  {where}:{loc['line']}: {_code_line(unit, tb.tb_lineno).strip()}")
            else:
                lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in '
                             f"{code.co_name}")
            tb = tb.tb_next
        lines.append(f"{type(exc).__name__}: {exc}")
        return "\n".join(lines)

    def failure(self, message, sandbox, at, notes=(), traceback=None) -> dict:
        return {"ok": False, "error": {"sandbox": bool(sandbox), "message": message[:MAX_MESSAGE],
                                       "at": at, "notes": list(notes), "traceback": traceback}}

    def from_exception(self, exc: BaseException) -> dict:
        if isinstance(exc, _UnitError):
            at: dict | None = unit_location(exc.unit, exc.line, exc.col_chars, exc.length)
            notes: list[dict[str, Any]] = [{"message": exc.note, "at": None}] if exc.note else []
            if exc.unit.kind == "recipe" and self.ctx is not None:
                # a broken recipe, reached through apply_recipe
                _, outer = self.locate(self.traceback_positions(exc.__traceback__))
                notes = outer + notes
            return self.failure(exc.message, exc.sandbox, at, notes)
        if isinstance(exc, _ResultError):
            return self.failure(str(exc), False, self.begin_location())
        message, sandbox, extra = self.exception_message(exc)
        at, notes = self.locate(self.traceback_positions(exc.__traceback__))
        tb = self.format_traceback(exc) if self.job.debug else None
        return self.failure(message, sandbox, at, notes + extra, tb)

    def from_violation(self) -> dict:
        v = self.guard.violations[0]
        positions = [(self.units[p.code_name], p) for p in v.frames if p.code_name in self.units]
        at, notes = self.locate(positions)
        if v.note:
            notes.append({"message": v.note, "at": None})
        return self.failure(v.message, True, at, notes)

    # }}}


def run_job(job: Job, limits: Limits) -> dict:
    """Run *job* in this process (which must be the disposable child)."""
    runner = _Runner(job, limits)
    try:
        payload = runner.run()
    except BaseException as exc:  # noqa: BLE001 - everything the script does is reported
        payload = runner.from_exception(exc) if not isinstance(exc, SystemExit) else \
            runner.failure("the transformation script tried to exit", True,
                           runner.begin_location())
    signal.setitimer(signal.ITIMER_REAL, 0)
    if runner.guard.violations and (payload.get("ok") or not payload["error"]["sandbox"]):
        # a refusal the script caught (or that surfaced as another error) still fails it
        payload = runner.from_violation()
    payload["output"] = runner.ctx.output if runner.ctx is not None else ""
    payload["layers"] = runner.layers
    return payload


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def child_main(job: Job, limits: Limits, result_fd: int) -> None:
    """The whole life of the child process; never returns."""
    status = 0
    fd = result_fd
    try:
        fd = isolate_descriptors(result_fd)
        payload = run_job(job, limits)
        payload.update(format=FORMAT, version=VERSION)
        data = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except BaseException as exc:  # noqa: BLE001 - an f2loopy bug: say so, as data
        try:
            data = json.dumps({"format": FORMAT, "version": VERSION, "ok": False,
                               "internal": f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE]}
                              ).encode("utf-8")
        except BaseException:  # noqa: BLE001
            data = b""
            status = 2
    try:
        _write_all(fd, data)
    except BaseException:  # noqa: BLE001
        status = 3
    os._exit(status)
