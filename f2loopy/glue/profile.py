"""``F2LOOPY_PROFILE=1``: what each glue function's calls cost, at exit.

Per function of a generated Python glue module: the number of calls, the
wall time of the calls, the time its kernels ran (each launch waited for),
the time and bytes of the copies to and from the device, and the rest, the
glue's own time (argument checks, allocation, layout conversion).  Printed
on standard error when the program ends, with a hint where transfers take
longer than the kernels and most of the time: the arrays should then stay on
the device (pyopencl arrays in Python; ``f2l_upload``/``f2l_download`` in
Fortran, whose runtime prints the same table: ``runtime/f2loopy_runtime.c``).

Profiling waits for every launch and copy, so it measures where the time
goes rather than how fast the program runs without it.

The functions below are copied verbatim into every generated Python glue
module (which must not depend on f2loopy), so they use only the standard
library; without ``F2LOOPY_PROFILE`` they cost one test per call.
"""

import atexit as _atexit
import functools as _functools
import os
import sys
import threading
import time as _time

_PROFILE = os.environ.get("F2LOOPY_PROFILE", "") not in ("", "0")
_profile = {}                       # function -> [calls, total, kernel, transfer, up, down,
                                    #               setup: the first call's own glue time]
_profile_current = threading.local()


def _profile_record():
    """The numbers of the glue function running in this thread (None: none)."""
    return getattr(_profile_current, "record", None)


def _profile_transfer(started, up=0, down=0):
    """Count a copy that began at *started* (``_time.perf_counter()``)."""
    record = _profile_record()
    if record is not None:
        record[3] += _time.perf_counter() - started
        record[4] += up
        record[5] += down


def _profile_kernel(started):
    record = _profile_record()
    if record is not None:
        record[2] += _time.perf_counter() - started


def _profiled(name, function):
    """*function* counting its calls into the table under *name*."""
    def call(*args, **kwargs):
        record = _profile.setdefault(name, [0, 0.0, 0.0, 0.0, 0, 0, 0.0])
        if not any(r[0] for r in _profile.values()):
            _atexit.register(_profile_report)
        outer = _profile_record()
        _profile_current.record = record
        started = _time.perf_counter()
        before = record[2] + record[3]
        try:
            return function(*args, **kwargs)
        finally:
            took = _time.perf_counter() - started
            if record[0] == 0:      # the device chosen, the program built: once
                record[6] = max(0.0, took - (record[2] + record[3] - before))
            record[0] += 1
            record[1] += took
            _profile_current.record = outer
    call.__name__ = getattr(function, "__name__", name)
    call.__doc__ = function.__doc__
    call.__wrapped__ = function
    return call


def _profile_table(table, module):
    """The report's lines for *table* (see :data:`_profile`)."""
    lines = [f"f2loopy profile ({module}, F2LOOPY_PROFILE=1), per kernel:",
             f"{'kernel':32} {'calls':>8} {'total s':>10} {'kernel s':>10} {'transfer s':>11} "
             f"{'glue s':>10} {'MB to device':>13} {'MB from device':>15}"]
    hints = []
    for name, (calls, total, kernel, transfer, up, down, setup) in table.items():
        glue = max(0.0, total - kernel - transfer)
        lines.append(f"{name:32} {calls:8d} {total:10.4f} {kernel:10.4f} {transfer:11.4f} "
                     f"{glue:10.4f} {up / 1e6:13.3f} {down / 1e6:15.3f}")
        # the first call's set-up (choosing the device, building the program) is
        # paid once: it does not make transfers matter less
        steady = max(total - setup, 1e-12)
        if calls and transfer > kernel and transfer > 0.5 * steady:
            hints.append(f"f2loopy profile: {name}: transfers take "
                         f"{100 * transfer / steady:.0f}% of its time after the first call's "
                         "set-up, more than the kernel: keep "
                         "its arrays on the device (pass pyopencl arrays, "
                         "pyopencl.array.to_device(queue, a), and .get() them at the end)")
    return lines + hints


def _profile_report():
    if any(r[0] for r in _profile.values()):
        module = os.path.basename(__file__)
        print("\n".join(_profile_table(_profile, module)), file=sys.stderr)


@_functools.cache
def source() -> str:
    """The text of the functions above, for the generated glue (read once:
    ``inspect.getsource`` tokenizes the whole module each time)."""
    import inspect
    state = ('_PROFILE = os.environ.get("F2LOOPY_PROFILE", "") not in ("", "0")\n'
             "_profile = {}\n_profile_current = threading.local()\n\n\n")
    return state + "\n\n".join(inspect.getsource(f) for f in (
        _profile_record, _profile_transfer, _profile_kernel, _profiled, _profile_table,
        _profile_report))
