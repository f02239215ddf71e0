"""gfortran's kind options on the command line: ``-fdefault-real-8`` and
``-fdefault-double-8`` are taken (the command gets ``default_real_kind``, 4
or 8); the other options that change kinds (``-fdefault-integer-8``,
``-freal-4-real-8``...) are refused with why, never ignored
(:mod:`f2loopy.kind_flags`)."""

from __future__ import annotations

import functools

import click

from f2loopy.kind_flags import REFUSED_KIND_FLAGS, check_kind_flags


def _refuse(ctx, param, value):
    if value:
        flag = param.opts[0]
        raise click.BadParameter(REFUSED_KIND_FLAGS[flag], param_hint=flag)
    return value


def real_kind_option(f):
    """Add ``-fdefault-real-8``/``-fdefault-double-8`` (and the refused kind
    options, hidden) to command *f*, which receives ``default_real_kind``."""
    @functools.wraps(f)
    def command(*args, real8: bool, double8: bool, **kwargs):
        flags = ["-fdefault-real-8"] * real8 + ["-fdefault-double-8"] * double8
        try:
            kind = check_kind_flags(flags)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="-fdefault-real-8") from None
        return f(*args, default_real_kind=kind, **kwargs)
    for flag in REFUSED_KIND_FLAGS:
        command = click.option(flag, f"refused_{flag[2:].replace('-', '_')}", is_flag=True,
                               hidden=True, expose_value=False, callback=_refuse)(command)
    command = click.option(
        "-fdefault-double-8", "double8", is_flag=True,
        help="As gfortran: DOUBLE PRECISION and 1d0 stay kind 8 under -fdefault-real-8 "
             "(alone it changes nothing).")(command)
    return click.option(
        "-fdefault-real-8", "real8", is_flag=True,
        help="As gfortran: default REAL and COMPLEX, real constants without a kind (0.95) "
             "and implicitly typed reals are kind 8 (double), in every file read; needs "
             "-fdefault-double-8 (without it gfortran makes DOUBLE PRECISION REAL(16), "
             "which OpenCL has no type for).")(command)
