"""Fuzzers that keep the translator honest (used by ``scripts/`` and the tests,
never by a translation):

* :mod:`~f2loopy.fuzz.program`, :mod:`~f2loopy.fuzz.progen` and
  :mod:`~f2loopy.fuzz.progen_expressions`: random programs in the translated
  subset; :mod:`~f2loopy.fuzz.shrink` reduces a failing one.
* :mod:`~f2loopy.fuzz.fuzz`: differential fuzzing, each program checked like
  ``f2loopy check`` (``scripts/fuzz_differential.py``).
* :mod:`~f2loopy.fuzz.mutate` and :mod:`~f2loopy.fuzz.hostile`: mutated inputs
  that must end in success or a located diagnostic (``scripts/fuzz_hostile.py``).
"""
