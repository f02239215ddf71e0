"""Transformations: pure functions ``kernel -> kernel`` with loopy's names."""

from f2loopy.transform.iname import (
    duplicate_inames, join_inames, prioritize_loops, remove_unused_inames, rename_iname,
    set_loop_priority, split_iname, tag_inames, untag_inames)
from f2loopy.transform.match import find_instructions, parse_match
from f2loopy.transform.parameters import assume, fix_parameters

__all__ = [
    "assume", "fix_parameters", "duplicate_inames", "find_instructions", "join_inames", "parse_match", "prioritize_loops",
    "remove_unused_inames", "rename_iname", "set_loop_priority", "split_iname", "tag_inames",
    "untag_inames",
]
