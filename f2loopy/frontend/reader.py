"""Running fparser.two on a source file, with its failures turned into
located :class:`~f2loopy.diagnostics.FortranError` s."""

from __future__ import annotations

import contextlib
import io
import logging
import re

from f2loopy.diagnostics import FortranError
from f2loopy.frontend.source import SourceFile

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


def parse_tree(src: SourceFile):
    """Parse *src* with fparser.two and return the ``Program`` node."""
    from fparser.common.readfortran import FortranStringReader
    from fparser.two.utils import FortranSyntaxError as FparserSyntaxError

    parser = _get_parser()
    reader = FortranStringReader(src.text, ignore_comments=True)
    reader.set_format(_format(src))
    reader.exit_on_error = False
    collector = _ErrorCollector()
    logger = logging.getLogger("fparser")
    logger.addHandler(collector)
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            tree = parser(reader)
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
    for message in collector.messages:
        raise _syntax_error(src, message)
    if tree is None:
        raise FortranError("no Fortran program units found",
                           src.span(1) if src.lines else None)
    return tree


def _format(src: SourceFile):
    from fparser.common.sourceinfo import FortranFormat
    # fixed form is read strictly: text after column 72 is ignored, as compilers do
    return FortranFormat(not src.fixed_form, src.fixed_form)


def parse_units(src: SourceFile, *, jobs: int | None = None) -> list:
    """The top-level program units of *src* (fparser nodes, file order)."""
    tree = parse_tree(src)
    return [u for u in tree.children if u is not None]


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
        return FortranError("syntax error", src.span(int(m.group(1))))
    first = text.strip().splitlines()[0] if text.strip() else "fparser could not parse the file"
    return FortranError(f"syntax error: {first}", src.span(1) if src.lines else None)
