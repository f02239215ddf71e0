"""Queries: what a kernel's loops allow, asked without transforming it.

Transformation scripts ask these as loopy's scripts ask ``loopy``'s
queries; they see them under the names they always used (``plan_auto``,
``lp.loop_dependences``, ``from f2loopy.transform import launch_summary``):
the script's namespace holds :mod:`f2loopy.transform` and this module.
Python code imports them from here (or from the package: ``f2loopy.plan_auto``).

* what may run in parallel and how (:mod:`f2loopy.analysis.loops`):
  :func:`loop_dependences`, :func:`parallel_loops`, :func:`grid_axes`,
  :func:`outermost_loops`, :func:`has_choice_of_second_axis`,
  :func:`reused_tiles`, :func:`accumulated_arrays`, :func:`time_loops`,
  :func:`launch_summary`;
* the automatic recipe's plan (:func:`plan_auto`: the plan it takes and the
  kernel it would make, with the reasons for the plans it refused);
* the single-column recipe's loops (:func:`horizontal_loops`,
  :func:`demotable_temporaries`, :func:`level_caches`: which level
  temporaries k-caching keeps as two values, and why not the others;
  :func:`scc_with_fusion`: the mapping with what its level fusion merged
  and refused, :func:`level_fusion`).
"""

from f2loopy.analysis.loops import (
    LoopVerdict, accumulated_arrays, grid_axes, has_choice_of_second_axis, launch_summary,
    loop_dependences, outermost_loops, parallel_loops, reused_tiles, time_loops)
from f2loopy.transform.auto import PLANS, AutoOutcome, plan_auto
from f2loopy.transform.kcache import level_caches
from f2loopy.transform.level_fusion import level_fusion
from f2loopy.transform.scc import demotable_temporaries, horizontal_loops, scc_with_fusion

__all__ = [
    "accumulated_arrays", "demotable_temporaries", "grid_axes", "has_choice_of_second_axis",
    "horizontal_loops", "launch_summary", "level_caches", "level_fusion", "loop_dependences",
    "outermost_loops", "parallel_loops", "plan_auto", "reused_tiles", "scc_with_fusion",
    "time_loops",
]

#: also importable from here (not names of the script's namespace)
TYPES = (AutoOutcome, LoopVerdict, PLANS)
