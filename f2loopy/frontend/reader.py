"""Running fparser.two on a source file, with its failures turned into
located :class:`~f2loopy.diagnostics.FortranError` s."""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import pickle
import re
import sys

from f2loopy.diagnostics import FortranError
from f2loopy.frontend.source import SourceFile, statement_lines

_LINE_RE = re.compile(r"at line (\d+)")
_parser = None


def _get_parser():
    global _parser
    if _parser is None:
        from fparser.two.parser import ParserFactory
        logger = logging.getLogger("fparser")
        logger.setLevel(logging.ERROR)
        logger.propagate = False
        _parser = ParserFactory().create(std="f2008")
    return _parser


class _ErrorCollector(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


_MARKED_LINE_RE = re.compile(r"^\s*(\d+):.*<==\s*(.*)$", re.M)


class _ParserGaveUp(BaseException):
    """fparser matched more nodes than the budget allows (a BaseException, so
    that fparser's own ``except Exception`` handlers do not swallow it)."""


#: fparser calls per character of source before parsing is abandoned.  Valid
#: code needs a few per character; a syntax error inside nested constructs
#: makes fparser backtrack exponentially in the nesting depth (a 14-deep 'if'
#: around one bad statement took minutes).
PARSE_BUDGET_PER_CHAR = 100
PARSE_BUDGET_MIN = 50_000


@contextlib.contextmanager
def _parse_budget(limit: int):
    from fparser.two import utils
    original = utils.Base.__dict__["__new__"]
    calls = 0

    # fparser's own signature, passed on positionally: packing ``*args,
    # **kwargs`` on each of the ~130 calls per line cost a tenth of the parse
    def counted(cls, string, parent_cls=None, _deepcopy=False):
        nonlocal calls
        calls += 1
        if calls > limit:
            raise _ParserGaveUp
        return original(cls, string, parent_cls, _deepcopy)

    # the wrapper doubles the Python frames per nesting level (not the C stack:
    # Python-to-Python calls do not recurse in C): keep the same depth limit
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(2 * old_limit)
    utils.Base.__new__ = counted
    try:
        yield
    finally:
        utils.Base.__new__ = original
        sys.setrecursionlimit(old_limit)


def _statement_classes():
    from fparser.two import Fortran2003, Fortran2008
    return [c for m in (Fortran2008, Fortran2003) for name, c in vars(m).items()
            if name.endswith("_Stmt") and isinstance(c, type)]


def _first_bad_statement(src: SourceFile):
    """Line number of the first statement that is no Fortran statement on its
    own (None if every one is), found statement by statement."""
    from f2loopy.frontend.fixed_reader import FixedStringReader
    reader = FixedStringReader(reader_text(src), ignore_comments=True)
    reader.set_format(_format(src))
    reader.exit_on_error = False
    classes = _statement_classes()
    for item in reader:
        text = getattr(item, "line", None)
        if text is None:
            continue
        try:
            # a statement that makes fparser backtrack this much is the culprit
            with _parse_budget(PARSE_BUDGET_MIN + PARSE_BUDGET_PER_CHAR * len(text)):
                for cls in classes:
                    try:
                        if cls(text) is not None:
                            break
                    except Exception:  # noqa: BLE001 - no match
                        continue
                else:
                    return item.span[0]
        except _ParserGaveUp:
            return item.span[0]
    return None


def _gave_up_error(src: SourceFile) -> FortranError:
    try:
        line = _first_bad_statement(src)
    except Exception:  # noqa: BLE001 - the reader itself fails on this text
        line = None
    if line is not None:
        from f2loopy.frontend.syntax_hints import syntax_error
        return syntax_error(src.filename, src.lines, line, src.span(line), src.fixed_form)
    return FortranError("syntax error: the statements do not form valid constructs (a "
                        "missing or extra 'end'?)", src.span(1) if src.lines else None)


def parse_tree(src: SourceFile):
    """Parse *src* with fparser.two and return the ``Program`` node.

    fparser reads a main program without a ``program`` statement
    (``Main_Program0``) and drops every other unit of the file, before and
    after it: the program's lines are blanked (line numbers stay) and the
    rest parsed again, its units put back around the program's.
    """
    from fparser.two import Fortran2003 as F
    tree = _parse_tree(src)
    mains = [u for u in tree.children if isinstance(u, F.Main_Program0)]
    if len(mains) != 1:
        return tree
    first, last = _unit_lines(mains[0])
    lines = src.text.split("\n")
    if not first or not any(_is_code(line, src.fixed_form) for k, line in enumerate(lines, 1)
                            if not first <= k <= last):
        return tree
    rest_text = "\n".join("" if first <= k <= last else line
                           for k, line in enumerate(lines, 1))
    rest = _parse_tree(SourceFile(src.filename, rest_text, fixed_form=src.fixed_form))
    if any(isinstance(u, F.Main_Program0) for u in rest.children):
        raise FortranError("a file can have one main program without a 'program' "
                           "statement", src.span(first))
    units = [u for u in rest.children if u is not None] + [mains[0]]
    units.sort(key=lambda u: _unit_lines(u)[0])
    tree.content[:] = units
    return tree


def _unit_lines(unit) -> tuple[int, int]:
    """First and last line of a program unit (0, 0 for a comment)."""
    spans = [s for s in (getattr(getattr(n, "item", None), "span", None)
                         for n in _walk_nodes(unit)) if s]
    if not spans:
        return (0, 0)
    return (min(s[0] for s in spans), max(s[1] for s in spans))


def _walk_nodes(node):
    from fparser.two.utils import walk
    return [node] + list(walk(node))


def _is_code(line: str, fixed_form: bool) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("!") and not (fixed_form and line[:1] in "cC*")


def _parse_tree(src: SourceFile):
    from fparser.two.utils import FortranSyntaxError as FparserSyntaxError

    from f2loopy.frontend.fixed_reader import FixedStringReader

    # fparser would open an include line's file itself, from the current
    # folder: they are expanded before (f2loopy.frontend.includes)
    from f2loopy.frontend.includes import include_name
    for k, line in enumerate(src.lines, 1):
        if include_name(line) is not None:
            raise FortranError(f"include '{include_name(line)}' is not expanded here (the "
                               "file's include lines are read when it is translated)",
                               src.span(k, "include"))
    parser = _get_parser()
    # fparser keeps a global symbol table per program unit name across parses; a
    # unit of an earlier file with a 'use' would change how this one parses
    from fparser.two.symbol_table import SYMBOL_TABLES
    SYMBOL_TABLES.clear()
    text, lead = _with_lead_unit(reader_text(src), src.fixed_form)
    reader = FixedStringReader(text, ignore_comments=True)
    reader.set_format(_format(src))
    reader.exit_on_error = False
    collector = _ErrorCollector()
    logger = logging.getLogger("fparser")
    logger.addHandler(collector)
    captured = io.StringIO()
    gc_was_enabled = gc.isenabled()
    gc.disable()          # fparser allocates a lot and frees little: ~10% faster
    budget = PARSE_BUDGET_MIN + PARSE_BUDGET_PER_CHAR * len(src.text)
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured), \
                _parse_budget(budget):
            tree = parser(reader)
    except _ParserGaveUp:
        raise _gave_up_error(src) from None
    except FparserSyntaxError as exc:
        raise _syntax_error(src, str(exc)) from None
    except SystemExit:
        raise _syntax_error(src, "\n".join(collector.messages)) from None
    except (RecursionError, MemoryError):
        raise FortranError("statement too deeply nested to parse",
                           src.span(1)) from None
    except Exception as exc:  # fparser internal errors on odd input
        raise _syntax_error(src, str(exc)) from None
    finally:
        logger.removeHandler(collector)
        if gc_was_enabled:
            gc.enable()
    for message in collector.messages:
        raise _syntax_error(src, message)
    if tree is not None and lead:
        tree.content[:] = [u for u in tree.content if not _is_lead_unit(u)]
    if tree is None:
        raise FortranError("no Fortran program units found",
                           src.span(1) if src.lines else None)
    return tree


#: the name of the empty subroutine that stands on the first line of a text
#: with many lines without code before its first statement (see
#: :func:`_with_lead_unit`)
_LEAD_UNIT = "f2l_lead_unit_"
#: the lines without code before the first statement from which it is put there
LEAD_LINES_MIN = 20


def _with_lead_unit(text: str, fixed_form: bool) -> tuple[str, bool]:
    """*text* with its first line replaced by an empty subroutine where at least
    :data:`LEAD_LINES_MIN` lines without code (blank or comment lines)
    precede its first statement, and whether it was.

    Each time a match fails, fparser checks whether every line read so far is
    blank or a comment, from the first line on: with N such lines in front
    (a long licence header, or a main program's lines blanked by
    :func:`parse_tree`, includes expanded) a file took time quadratic in N
    (a seismic code's kernel of 20 lines after an 1,230-line program: two
    minutes).  Comments are not parsed (``ignore_comments``) and the line
    count stays, so every statement keeps its line; the subroutine is taken
    out of the tree again (:func:`_is_lead_unit`).
    """
    lines = text.split("\n")
    lead = next((k for k, line in enumerate(lines) if _is_code(line, fixed_form)), None)
    if lead is None or lead < LEAD_LINES_MIN:
        return text, False
    indent = " " * 6 if fixed_form else ""
    lines[0] = f"{indent}subroutine {_LEAD_UNIT}; end subroutine {_LEAD_UNIT}"
    return "\n".join(lines), True


def _is_lead_unit(unit) -> bool:
    """Whether *unit* is the subroutine :func:`_with_lead_unit` put on line 1
    (no unit of the file can be there: that line had no code)."""
    from fparser.two import Fortran2003 as F
    if not isinstance(unit, F.Subroutine_Subprogram):
        return False
    head = unit.children[0]
    span = getattr(getattr(head, "item", None), "span", None)
    return (str(head.items[1]).lower() == _LEAD_UNIT and span is not None
            and span[0] == 1)


_FIXED_COMMENT_LINE = re.compile(r"[cC*!]|\s*!|\s*$")


def reader_text(src: SourceFile) -> str:
    """The text fparser reads for *src*: in fixed form without the ``!``
    comments that follow code or start after column 1.

    Fortran 90 fixed form allows a ``!`` comment anywhere but in column 6
    (Reference LAPACK has them on indented lines); fparser's strict F77 mode,
    which we need for its column-72 limit, takes them for code.  Lines and
    columns stay where they were (the comment is cut off), so spans still
    point into the file as written.
    """
    if not src.fixed_form or "!" not in src.text:
        return src.text
    out = []
    quote = None                      # the quote of a string open at line end
    for line in src.text.split("\n"):
        if _FIXED_COMMENT_LINE.match(line) and not line.startswith(" " * 5 + "!"):
            out.append("" if line.lstrip().startswith("!") else line)
            continue
        tab = line.find("\t", 0, 6)
        if tab >= 0:                  # tab form: a digit after the tab continues
            start = tab + 1
            continuation = line[start:start + 1] in tuple("123456789")
        else:
            start = 6
            continuation = len(line) > 5 and line[5] not in " 0"
        if not continuation:
            quote = None
        cut, quote = _comment_column(line[:72], start, quote)
        out.append(line if cut is None else line[:cut].rstrip())
    return "\n".join(out)


def _comment_column(line: str, start: int, quote):
    """(column of the ``!`` that starts a comment in *line* or None, the quote
    still open at its end), scanning from *start* with *quote* open."""
    k = start
    while k < len(line):
        ch = line[k]
        if quote is not None:
            if ch == quote:
                if k + 1 < len(line) and line[k + 1] == quote:
                    k += 1            # a doubled quote stands for itself
                else:
                    quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "!":
            return k, None
        k += 1
    return None, quote


def _format(src: SourceFile):
    from fparser.common.sourceinfo import FortranFormat
    # fixed form is read strictly: text after column 72 is ignored, as compilers do
    return FortranFormat(not src.fixed_form, src.fixed_form)


#: files shorter than this are parsed in one piece (a worker costs more)
PARALLEL_MIN_LINES = 2000


def default_jobs() -> int:
    """Processes for parsing: ``F2LOOPY_PARSE_JOBS``, else the CPUs that are idle
    (the CPU count less the load average, which counts this process): on a busy
    machine a second parser only competes with the first."""
    value = os.environ.get("F2LOOPY_PARSE_JOBS")
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            pass
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        idle = cpus - os.getloadavg()[0]
    except (AttributeError, OSError):
        return cpus
    return max(1, min(cpus, int(idle + 1)))


def parse_units(src: SourceFile, *, jobs: int | None = None) -> list:
    """The top-level program units of *src* (fparser nodes, file order).

    Long files are split at program-unit boundaries and the pieces parsed in
    parallel (forked worker processes); each piece keeps the whole file's line
    numbers.  A module whose procedures land in several pieces appears once
    per piece (each with part of its procedures).
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs > 1 and len(src.lines) >= PARALLEL_MIN_LINES and _can_fork():
        units = _parse_parallel(src, jobs)
        if units is not None:
            return units
    tree = parse_tree(src)
    return [u for u in tree.children if u is not None]


def _can_fork() -> bool:
    """Fork is available and we are not a worker already (``translate -j``
    parallelises over files instead; daemonic workers cannot fork)."""
    import multiprocessing
    return ("fork" in multiprocessing.get_all_start_methods()
            and multiprocessing.parent_process() is None
            and not multiprocessing.current_process().daemon)


def _parse_parallel(src: SourceFile, jobs: int):
    from f2loopy.frontend.prescan import group_text, partition, scan_units, work_items
    units = scan_units(src.lines, src.fixed_form)
    if units is None:
        return None
    items = work_items(units)
    groups = partition(items, jobs)
    if len(groups) < 2:
        return None
    texts = [group_text(src.lines, g) for g in groups]     # (text, line numbers)
    _get_parser()                      # built once, inherited by the workers
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    global _current_src
    _current_src = src
    try:
        with ctx.Pool(len(texts) - 1) as pool:
            pending = pool.map_async(_parse_group, texts[1:])
            results = [_parse_group(texts[0], pickled=False)] + pending.get()
    except (OSError, RuntimeError, AssertionError):
        return None
    finally:
        _current_src = None
    errors = [r for r in results if r[0] == "error"]
    if errors:
        raise min((_rebuild_error(src, e) for e in errors),
                  key=lambda exc: (exc.span.line, exc.span.column) if exc.span else (0, 0))
    trees = [pickle.loads(r[1]) if isinstance(r[1], bytes) else r[1] for r in results]
    out: list = []
    for tree in trees:
        out.extend(u for u in tree.children if u is not None)
    if not _matches(out, units):
        return None
    return out


_current_src: SourceFile | None = None


def _parse_group(piece_text, pickled=True):
    """Parse one piece; its statements get their line numbers in the whole
    file back (in a worker the tree comes back pickled)."""

    from fparser.two.utils import walk
    text, numbers = piece_text
    src = _current_src
    assert src is not None      # set before any piece is parsed (also in a worker)
    piece = SourceFile(src.filename, text, fixed_form=src.fixed_form)

    def original(line):
        return numbers[line - 1] if 0 < line <= len(numbers) else line
    try:
        tree = parse_tree(piece)
    except FortranError as exc:
        s = exc.span
        return ("error", type(exc).__name__, exc.message,
                None if s is None else (original(s.line), s.column, s.length))
    for node in walk(tree):
        item = getattr(node, "item", None)
        span = getattr(item, "span", None)
        if span and item is not None:
            item.span = (original(span[0]), original(span[1]))
    if not pickled:
        return ("ok", tree)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        return ("ok", pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        sys.setrecursionlimit(old)


def _rebuild_error(src: SourceFile, result) -> FortranError:
    from f2loopy import diagnostics
    _, cls_name, message, where = result
    cls = getattr(diagnostics, cls_name, FortranError)
    if where is None:
        return cls(message, None)
    line, column, length = where
    text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
    return cls(message, diagnostics.SourceSpan(src.filename, line, column, length, text))


def _matches(nodes, units) -> bool:
    """Whether the pieces parsed to the units the prescan predicted."""
    from fparser.two import Fortran2003 as F

    from f2loopy.frontend.declarations import statement_lines
    want: set[tuple[str, int]] = set()
    for u in units:
        if u.kind == "module" and u.children:
            want.update((ch.name.lower(), ch.start) for ch in u.children)
        else:
            want.add((u.name.lower(), u.start))
    have = set()
    for node in nodes:
        if isinstance(node, F.Module):
            subs = [c for c in node.children if isinstance(c, F.Module_Subprogram_Part)]
            if not subs:
                have.add((str(node.children[0].items[1]).lower(),
                          statement_lines(node.children[0])[0]))
            for part in subs:
                for proc in part.children:
                    if hasattr(proc, "children") and proc.children:
                        have.add((str(proc.children[0].items[1]).lower(),
                                  statement_lines(proc.children[0])[0]))
        elif isinstance(node, (F.Subroutine_Subprogram, F.Function_Subprogram)):
            have.add((str(node.children[0].items[1]).lower(),
                      statement_lines(node.children[0])[0]))
        else:
            first = statement_lines(node)[0]
            have.update(w for w in want if w[1] == first)
    return have == want


_END_NAME_RE = re.compile(r"expected <([\w-]+)-name> is (\w+) but got (\w+)")


def _marked_message(text: str) -> str:
    m = _END_NAME_RE.search(text)
    if m:
        return (f"END statement names '{m.group(3)}' but the {m.group(1)} is "
                f"called '{m.group(2)}'")
    return text.strip().rstrip(".") or "syntax error"


def _syntax_error(src: SourceFile, text: str) -> FortranError:
    m = _MARKED_LINE_RE.search(text)
    if m:
        line = int(m.group(1))
        got = _END_NAME_RE.search(m.group(2))
        return FortranError(_marked_message(m.group(2)),
                            src.span(line, got.group(3) if got else None))
    m = _LINE_RE.search(text)
    if m:
        from f2loopy.frontend.syntax_hints import syntax_error
        line = int(m.group(1))
        return syntax_error(src.filename, src.lines, line, src.span(line), src.fixed_form)
    first = text.strip().splitlines()[0] if text.strip() else "fparser could not parse the file"
    return FortranError(f"syntax error: {first}", src.span(1) if src.lines else None)


def specification_and_body(src, unit):
    """The specification parts of *unit* and its executable statements.

    fparser reads statement functions as assignments; where declarations
    follow them (as in IFS code, where an included file declares and defines
    statement functions one after the other) the unit alternates
    specification and execution parts.  The statements of the execution parts
    before the last specification part must be statement functions: they
    lead the body, where :func:`f2loopy.frontend.statement_functions.split_statement_functions` takes them."""
    from fparser.two import Fortran2003 as F
    specs, execs = [], []
    for ch in unit.children:
        if isinstance(ch, F.Specification_Part):
            specs.append(ch)
        elif isinstance(ch, F.Execution_Part):
            execs.append(ch)
    body = []
    for k, part in enumerate(execs):
        stmts = [c for c in part.children if c is not None]
        if k < len(execs) - 1 or len(specs) > len(execs):
            for node in stmts:
                if not isinstance(node, (F.Assignment_Stmt, F.Data_Stmt, F.Format_Stmt,
                                         F.Comment)):
                    line, _ = statement_lines(node)
                    raise FortranError("a declaration follows this executable statement "
                                       "(declarations come first)", src.span(line))
        body.extend(stmts)
    return specs, body
