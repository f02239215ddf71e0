"""Transformations: pure functions ``kernel -> kernel`` with loopy's names.

Queries (what a kernel's loops allow: ``plan_auto``, ``loop_dependences``,
``launch_summary``, ...) are not here: they are in :mod:`f2loopy.query`
(scripts see both under the names they always used)."""

from f2loopy.transform.iname import (
    duplicate_inames, join_inames, prioritize_loops, remove_unused_inames, rename_iname,
    set_loop_priority, split_iname, tag_inames, untag_inames)
from f2loopy.transform.compat import (
    add_and_infer_dtypes, add_dtypes, chunk_iname, rename_inames, split_arg_axis,
    temporary_to_subst)
from f2loopy.transform.auto import auto_parallelize
from f2loopy.transform.buffer import (
    alias_temporaries, buffer_array, collect_common_factors_on_increment)
from f2loopy.transform.data import (
    privatize_temporaries_with_inames, set_array_axis_names, set_array_dim_names,
    set_temporary_address_space, set_temporary_scope, split_array_axis, split_array_dim,
    tag_array_axes, tag_data_axes)
from f2loopy.transform.fusion import fuse_kernels
from f2loopy.transform.instructions import (
    add_barrier, add_dependency, add_nosync, remove_instructions, set_options, tag_instructions)
from f2loopy.transform.launches import add_global_barrier, add_global_barriers_between_nests
from f2loopy.transform.auto_launches import split_for_auto
from f2loopy.transform.match import find_instructions, parse_match
from f2loopy.transform.parameters import (
    assume, fix_parameters, parse_fixed_values, specialize_parameters)
from f2loopy.transform.precompute import add_prefetch, precompute
from f2loopy.transform.reduction import accumulation_to_reduction, make_reduction_inames_unique
from f2loopy.transform.rules import find_one_rule_matching, find_rules_matching
from f2loopy.transform.dead_code import remove_dead_stores
from f2loopy.transform.kcache import cache_levels
from f2loopy.transform.level_fusion import fuse_level_loops
from f2loopy.transform.scc import demote_temporaries, scc
from f2loopy.transform.subst import assignment_to_subst, expand_subst, extract_subst
from f2loopy.transform.versioning import version_indices
from f2loopy.transform.block_versioning import version_blocks

__all__ = [
    "alias_temporaries", "buffer_array", "collect_common_factors_on_increment",
    "privatize_temporaries_with_inames", "set_array_axis_names", "set_array_dim_names",
    "set_temporary_address_space", "set_temporary_scope", "split_array_axis",
    "split_array_dim", "tag_array_axes", "tag_data_axes", "add_prefetch", "precompute", "assignment_to_subst", "expand_subst", "extract_subst", "find_one_rule_matching",
    "find_rules_matching", "accumulation_to_reduction", "make_reduction_inames_unique", "add_barrier", "add_dependency", "add_nosync", "fuse_kernels", "remove_instructions",
    "set_options", "tag_instructions", "assume", "fix_parameters", "parse_fixed_values", "specialize_parameters", "duplicate_inames", "find_instructions", "join_inames", "parse_match", "prioritize_loops",
    "remove_unused_inames", "rename_iname", "set_loop_priority", "split_iname", "tag_inames",
    "untag_inames", "add_dtypes", "add_and_infer_dtypes", "chunk_iname", "rename_inames",
    "temporary_to_subst", "split_arg_axis",
    "auto_parallelize",
    "add_global_barrier", "add_global_barriers_between_nests", "split_for_auto",
    "demote_temporaries", "scc", "fuse_level_loops", "cache_levels", "version_indices", "version_blocks", "remove_dead_stores",
]
