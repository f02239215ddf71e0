"""One OpenCL device per process: the queue for this MPI rank.

The rules are those of the C runtime (runtime/f2loopy_runtime.c), so that a
program that mixes Python and Fortran ranks puts each on the same device:

- ``F2LOOPY_DEVICE`` (else ``PYOPENCL_CTX``) as ``P:D`` pins the device;
  ``P`` and ``D`` are indices or case-insensitive parts of the platform (or
  vendor) and device names.  ``P`` alone picks the platform only (or, when
  no platform matches, the first device whose name it is part of).
  ``F2LOOPY_DEVICE=gpu`` (``cpu``, ``accelerator``) keeps only the devices
  of that type, then applies the rank rule below to them.
- Otherwise the platform is the first that has devices, and the device is the
  node-local rank modulo the number of devices of that platform.  The rank is
  that of *comm* among the processes of its node (an mpi4py communicator,
  split with ``MPI.COMM_TYPE_SHARED``), else what the MPI launcher put in the
  environment (Open MPI, MPICH/Hydra, PMI, MVAPICH2, Slurm), else 0.
- With ``F2LOOPY_VERBOSE`` set (not ``0``), the choice is printed on standard
  error.

The functions below are also copied verbatim into every generated Python glue
module (which must not depend on f2loopy), so they use only the standard
library and pyopencl.
"""

import functools as _functools
import os
import sys
import threading

_LOCAL_RANK_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                    "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_queues = {}
_queues_lock = threading.Lock()


def _shown(text, limit=60):
    """*text* (from the environment or a driver) made printable and short."""
    out = "".join(c if " " <= c <= "~" else "?" for c in str(text)[:limit])
    return out + ("..." if len(str(text)) > limit else "")


def _local_rank(comm=None):
    """(node-local rank, where it came from), or (None, None) when unknown.

    *comm*: an mpi4py communicator (collective: every process of *comm* must
    call); without it, the launcher's environment variables."""
    if comm is not None:
        from mpi4py import MPI
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            return node.Get_rank(), "the communicator"
        finally:
            node.Free()
    for var in _LOCAL_RANK_VARS:
        value = os.environ.get(var, "")
        if not value:
            continue
        if not (value.isascii() and value.isdigit() and len(value) <= 8):
            raise RuntimeError(f"{var}='{_shown(value)}' is not a node-local rank (a "
                               "non-negative integer)")
        return int(value), var
    return None, None


def _pick(spec, names):
    """Index of the entry *spec* among *names*, None if none: an index when
    *spec* is ASCII digits only (more than 8 match nothing), else the first
    name that contains it, ASCII letters compared without case and every
    other character exactly (the C runtime's rule: one specification)."""
    if spec.isascii() and spec.isdigit():
        # (at most 8 digits: int() of thousands of digits raises ValueError)
        return int(spec) if len(spec) <= 8 and int(spec) < len(names) else None
    needle = spec.encode("utf-8", "surrogateescape").lower()    # bytes: ASCII case only
    for i, name in enumerate(names):
        if needle in name.encode("utf-8", "surrogateescape").lower():
            return i
    return None


def _choose_device(platforms, local_rank, environ):
    """(platform index, device index, description) for the process of node-local
    rank *local_rank* (None: unknown).  *platforms*: a list of (platform name,
    list of device names); *environ*: the environment (F2LOOPY_DEVICE,
    PYOPENCL_CTX).  Raises RuntimeError when the selection matches nothing."""
    listing = "; ".join(f"[{p}] {name}:" + ("".join(f" [{d}] {dev}" for d, dev in enumerate(devs))
                                            or " no devices")
                        for p, (name, devs) in enumerate(platforms))
    if not platforms:
        raise RuntimeError("no OpenCL platform found (install an OpenCL driver, e.g. Debian's "
                           "pocl-opencl-icd, and check /etc/OpenCL/vendors)")
    var = "F2LOOPY_DEVICE"
    spec = environ.get(var, "")
    if not spec:
        var = "PYOPENCL_CTX"
        spec = environ.get(var, "")
    dev = None
    if len(spec.encode("utf-8", "surrogateescape")) > 255:
        raise RuntimeError(f"{var}={_shown(spec)}: longer than 255 bytes")
    if spec:
        pspec, colon, dspec = spec.partition(":")
        plat = _pick(pspec, [name for name, _ in platforms])
        if plat is None and not colon:      # a device's name alone
            for p, (_, devs) in enumerate(platforms):
                dev = _pick(spec, devs) if not spec.isdigit() else None
                if dev is not None:
                    plat = p
                    break
        if plat is None:
            raise RuntimeError(f"{var}={_shown(spec)}: no OpenCL platform '{_shown(pspec)}' "
                               f"(platforms: {listing})")
        if colon and dspec:
            dev = _pick(dspec, platforms[plat][1])
            if dev is None:
                raise RuntimeError(f"{var}={_shown(spec)}: platform {platforms[plat][0]} has "
                                   f"no device '{_shown(dspec)}' ({listing})")
        elif not platforms[plat][1]:
            raise RuntimeError(f"{var}={_shown(spec)}: platform {platforms[plat][0]} has no "
                               "devices")
    else:
        plat = next((p for p, (_, devs) in enumerate(platforms) if devs), None)
        if plat is None:
            raise RuntimeError(f"no OpenCL device found (platforms: {listing})")
    pinned = dev is not None
    count = len(platforms[plat][1])
    if not pinned:
        dev = (local_rank or 0) % count
    return plat, dev, (pinned, var, spec, count)


def _describe(platforms, plat, dev, how, local_rank, rank_from):
    """The line F2LOOPY_VERBOSE prints (the C runtime prints the same)."""
    pinned, var, spec, count = how
    text = (f"local rank {local_rank} (from {rank_from})" if local_rank is not None
            else "no local rank")
    text += f": device {dev} of {count} of platform '{platforms[plat][0]}'"
    if pinned:
        text += f" (chosen by {var}={_shown(spec)})"
    return f"{text}: {platforms[plat][1][dev]}"


def _rank_queue(comm=None):
    """The OpenCL queue of this process: one context and in-order queue per
    device, made on first use, on the device for this process's node-local rank
    (see the rules above).  *comm*: an mpi4py communicator to take the rank from
    (every process of it must call), else the MPI launcher's environment."""
    import pyopencl as cl
    if comm is None:
        with _queues_lock:
            if "environment" in _queues:   # chosen once: the environment stays
                return _queues["environment"]
    local_rank, rank_from = _local_rank(comm)
    try:
        cl_platforms = cl.get_platforms()
    except cl.Error:            # no ICD loader entry at all (PLATFORM_NOT_FOUND_KHR)
        cl_platforms = []
    # F2LOOPY_DEVICE=gpu, cpu or accelerator: the devices of that type only
    kind = os.environ.get("F2LOOPY_DEVICE", "").strip().lower()
    kind = kind if kind in ("gpu", "cpu", "accelerator") else ""
    device_type = getattr(cl.device_type, kind.upper(), cl.device_type.ALL)
    platforms, cl_devices = [], []
    for p in cl_platforms:
        name = p.name.strip()
        vendor = p.vendor.strip()
        if vendor and vendor.encode("utf-8", "surrogateescape").lower() not in \
                name.encode("utf-8", "surrogateescape").lower():     # (as the C runtime)
            name += f" ({vendor})"
        try:
            devices = p.get_devices(device_type=device_type)
        except cl.Error:
            devices = []
        platforms.append((name, [d.name.strip() for d in devices]))
        cl_devices.append(devices)
    environ = os.environ
    if kind:
        if platforms and not any(devs for _, devs in platforms):
            raise RuntimeError(f"F2LOOPY_DEVICE={kind}: no OpenCL device of type {kind} "
                               f"(platforms: {', '.join(n for n, _ in platforms)})")
        environ = {}            # then the rule without a selection, among those devices
    plat, dev, how = _choose_device(platforms, local_rank, environ)
    device = cl_devices[plat][dev]
    with _queues_lock:
        queue = _queues.get(device.int_ptr)
        if queue is None:
            queue = cl.CommandQueue(cl.Context([device]))
            _queues[device.int_ptr] = queue
            verbose = os.environ.get("F2LOOPY_VERBOSE", "")
            if verbose and verbose != "0":
                print("f2loopy: " + _describe(platforms, plat, dev, how, local_rank, rank_from),
                      file=sys.stderr)
        if comm is None:
            _queues["environment"] = queue
        return queue


rank_queue = _rank_queue
local_rank = _local_rank


@_functools.cache
def source() -> str:
    """The text of the functions above, for the generated glue (read once:
    ``inspect.getsource`` tokenizes the whole module each time)."""
    import inspect
    state = (f"_LOCAL_RANK_VARS = {_LOCAL_RANK_VARS!r}\n_queues = {{}}\n"
             "_queues_lock = threading.Lock()\n\n\n")
    return state + "\n\n".join(inspect.getsource(f) for f in (
        _shown, _local_rank, _pick, _choose_device, _describe, _rank_queue)) + \
        "\n\nrank_queue = _rank_queue\n"
