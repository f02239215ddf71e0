"""``man f2loopy``: the manual page, generated from the command line itself.

``python3 -m f2loopy.manpage > man/f2loopy.1`` writes it (the checked-in
``man/f2loopy.1`` must equal this output: ``tests/docs/test_docs.py``); the wheel
installs it as ``share/man/man1/f2loopy.1`` of the environment, where
``man`` finds it beside the environment's ``bin/``.  Every command, its
arguments and options with their help come from the click definitions in
:mod:`f2loopy.cli`, as ``f2loopy COMMAND --help`` prints them, so the page
cannot drift from the program.
"""

from __future__ import annotations

import click

from f2loopy.version import __version__


def _roff(text: str) -> str:
    """*text* (help strings of the program's own options) as roff text:
    backslashes escaped, a line starting with ``.`` or ``'`` guarded."""
    out = []
    for line in text.replace("\\", "\\e").replace("-", "\\-").splitlines():
        out.append("\\&" + line if line[:1] in (".", "'") else line)
    return "\n".join(out)


def _paragraphs(text: str) -> str:
    """Click help text as roff paragraphs (``\\b`` blocks kept as written)."""
    out = []
    for para in (text or "").strip().split("\n\n"):
        if para.startswith("\b\n"):
            out.append(".nf\n" + _roff(para[2:]) + "\n.fi")
        else:
            out.append(_roff(" ".join(line.strip() for line in para.splitlines())))
    return "\n.PP\n".join(out)


def _options(ctx: click.Context, command: click.Command) -> list[str]:
    lines = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines += [".TP", f"\\fB{_roff(names)}\\fR", _roff(help_text or "")]
    return lines


def render(group: click.Group | None = None) -> str:
    """The page for *group* (default: the ``f2loopy`` command)."""
    if group is None:
        from f2loopy.cli import main
        group = main
    ctx = click.Context(group, info_name="f2loopy", **group.context_settings)
    lines = [f'.TH F2LOOPY 1 "" "f2loopy {__version__}" "User Commands"',
             ".SH NAME", "f2loopy \\- translate annotated Fortran subroutines to OpenCL "
             "kernels and host glue",
             ".SH SYNOPSIS", ".B f2loopy", "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
             ".SH DESCRIPTION", _paragraphs(group.help or ""),
             ".SH OPTIONS", *_options(ctx, group), ".SH COMMANDS"]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:     # listed, so it exists
            raise AssertionError(f"the command {name!r} is listed but not found")
        sub = click.Context(command, info_name=name, parent=ctx)
        usage = " ".join(command.collect_usage_pieces(sub))
        lines += [".SS " + _roff(f"f2loopy {name}"), f".B f2loopy {name}",
                  _roff(usage), ".PP", _paragraphs(command.help or ""), *_options(sub, command)]
    lines += [".SH ENVIRONMENT", _paragraphs(group.epilog or ""),
              ".SH EXIT STATUS", "0 success, 1 a translation error or a mismatch (a located "
              "diagnostic is printed), 2 a usage error.",
              ".SH SEE ALSO", "\\fBf2loopyfc\\fR (f2loopyfc \\-\\-help), the documentation "
              "(docs/ of the source tree, built with Sphinx)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - python3 -m f2loopy.manpage
    print(render(), end="")
