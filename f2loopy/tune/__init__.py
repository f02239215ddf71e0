"""Empirical tuning (``f2loopy tune``): scripts declare ``tunable(...)`` choices,
:mod:`.search` times the variants on an OpenCL device and checks each against
the untransformed kernel, :mod:`.record` keeps the winner beside the source for
``f2loopy translate``.

Only :mod:`.record` is needed by a translation; the rest loads pyopencl and is
imported by the ``tune`` command alone.
"""
