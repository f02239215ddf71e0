"""Transformations of instructions: tags, removal, dependencies, barriers,
nosync, and kernel options."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from f2loopy.diagnostics import TransformError, UnsupportedArgumentError
from f2loopy.ir.build_options import BuildOptionError, check_build_options
from f2loopy.ir.kernel import BarrierInstruction, Kernel, KernelOptions
from f2loopy.transform.match import find_instructions, parse_match
from f2loopy.transform.util import NameNotFoundError, MatchSpec, for_each_kernel, unique_name


def _matched(kernel, match, what):
    insns = find_instructions(kernel, match)
    if not insns:
        raise NameNotFoundError(f"{what}: no instruction matches {match!r} in kernel "
                             f"'{kernel.name}'")
    return insns


@for_each_kernel
def tag_instructions(kernel: Kernel, new_tag: str, within: MatchSpec = None) -> Kernel:
    """Add tag *new_tag* to the instructions *within* selects (all by default)."""
    if not isinstance(new_tag, str) or not new_tag.isidentifier():
        raise TransformError(f"tag_instructions: invalid tag {new_tag!r}")
    ids = {i.id for i in _matched(kernel, within, "tag_instructions")}
    return kernel.copy(instructions=tuple(
        i.copy(tags=i.tags | {new_tag}) if i.id in ids else i for i in kernel.instructions))


@for_each_kernel
def remove_instructions(kernel: Kernel, insn_ids: str | Iterable[str]) -> Kernel:
    """Remove instructions (ids, or a match expression); instructions that
    depended on them inherit their dependencies, so ordering is kept."""
    if isinstance(insn_ids, str):
        remove = {i.id for i in _matched(kernel, insn_ids, "remove_instructions")}
    else:
        remove = set(insn_ids)
        unknown = remove - set(kernel.id_to_insn)
        if unknown:
            raise TransformError(f"remove_instructions: no instruction(s) "
                                 f"{', '.join(sorted(unknown))}")
    by_id = kernel.id_to_insn

    def resolved_deps(deps, seen=()):
        out = set()
        for d in deps:
            if d in remove:
                if d not in seen:
                    out |= resolved_deps(by_id[d].depends_on, seen + (d,))
            else:
                out.add(d)
        return out

    insns = tuple(i.copy(depends_on=frozenset(resolved_deps(i.depends_on)))
                  for i in kernel.instructions if i.id not in remove)
    return kernel.copy(instructions=insns)


@for_each_kernel
def add_dependency(kernel: Kernel, insn_match: MatchSpec, depends_on: MatchSpec) -> Kernel:
    """Make the instructions *insn_match* selects depend on *depends_on* (an
    instruction id or a match expression)."""
    targets = {i.id for i in _matched(kernel, insn_match, "add_dependency")}
    prereqs = {i.id for i in _matched(kernel, depends_on, "add_dependency")}
    if targets & prereqs:
        raise TransformError("add_dependency: an instruction cannot depend on itself")
    return kernel.copy(instructions=tuple(
        i.copy(depends_on=i.depends_on | prereqs) if i.id in targets else i
        for i in kernel.instructions))


@for_each_kernel
def add_barrier(kernel: Kernel, insn_before: MatchSpec, insn_after: MatchSpec,
                id_based_on: str | None = None, tags: Iterable[str] | None = None,
                synchronization_kind: str = "local", mem_kind: str | None = None,
                within_inames: Iterable[str] | None = None) -> Kernel:
    """Add a barrier after the instructions *insn_before* selects and before
    those *insn_after* selects.

    *synchronization_kind* ``"local"`` synchronises the work-items of a group
    (OpenCL ``barrier``); ``"global"`` would need the kernel to be split in
    two and is refused at code generation.  The barrier runs inside
    *within_inames* (default: the sequential loops both sides share).
    """
    if synchronization_kind not in ("local", "global"):
        raise TransformError("add_barrier: synchronization_kind must be 'local' or 'global'")
    if mem_kind not in (None, synchronization_kind):
        raise UnsupportedArgumentError(
            "add_barrier", "mem_kind", mem_kind,
            f"a {synchronization_kind} barrier fences {synchronization_kind} memory")
    before = _matched(kernel, insn_before, "add_barrier")
    after = _matched(kernel, insn_after, "add_barrier")
    if within_inames is None:
        hw = kernel.hardware_inames()
        common = None
        for i in before + after:
            loops = set(i.within_inames) - hw
            common = loops if common is None else common & loops
        within_inames = frozenset(common or ())
    else:
        within_inames = frozenset(within_inames)
    bid = unique_name(kernel, id_based_on or "barrier")
    barrier = BarrierInstruction(
        id=bid, within_inames=within_inames,
        scope="local" if synchronization_kind == "local" else "global",
        depends_on=frozenset(i.id for i in before), tags=frozenset(tags or ()),
        span=after[0].span)
    after_ids = {i.id for i in after}
    insns = []
    for i in kernel.instructions:
        if i.id in after_ids:
            i = i.copy(depends_on=i.depends_on | {bid})
        insns.append(i)
    pos = max(k for k, i in enumerate(kernel.instructions) if i.id in {b.id for b in before})
    insns.insert(pos + 1, barrier)
    return kernel.copy(instructions=tuple(insns))


@for_each_kernel
def add_nosync(kernel: Kernel, scope: str, source: MatchSpec, sink: MatchSpec,
               bidirectional: bool = False,
               force: bool = False, empty_ok: bool = False) -> Kernel:
    """State that instructions *sink* need no synchronisation (barrier, race
    check) with instructions *source*, in *scope* ``"local"``, ``"global"`` or
    ``"any"``: the user asserts their accesses never collide."""
    if scope not in ("local", "global", "any"):
        raise TransformError("add_nosync: scope must be 'local', 'global' or 'any'")
    src = find_instructions(kernel, source)
    snk = find_instructions(kernel, sink)
    if not (src and snk):
        if empty_ok:
            return kernel
        raise TransformError(f"add_nosync: no instruction matches "
                             f"{source if not src else sink!r}")
    src_ids = {i.id for i in src}
    snk_ids = {i.id for i in snk}
    insns = []
    for i in kernel.instructions:
        extra = set()
        if i.id in snk_ids:
            extra |= {(s, scope) for s in src_ids}
        if bidirectional and i.id in src_ids:
            extra |= {(s, scope) for s in snk_ids}
        insns.append(i.copy(no_sync_with=i.no_sync_with | extra) if extra else i)
    return kernel.copy(instructions=tuple(insns))


_OPTION_FIELDS = {f.name for f in dataclasses.fields(KernelOptions)}


@for_each_kernel
def set_options(kernel: Kernel, *args: str | Mapping[str, Any], **kwargs: Any) -> Kernel:
    """Set code generation options: ``set_options(knl, "write_code")`` (also
    loopy's ``write_cl``: translating shows the generated code),
    ``set_options(knl, build_options=["-cl-fast-relaxed-math"])`` (only the options of
    :data:`~f2loopy.ir.build_options.ALLOWED_BUILD_OPTIONS`),
    ``set_options(knl, fp_contract=True, check_races=False)``.  loopy's
    options about its Python wrapper and terminal output are accepted and
    have no effect; any other name is an error."""
    changes: dict[str, Any] = {}
    for a in args:
        if isinstance(a, dict):
            kwargs = {**a, **kwargs}
            continue
        for word in str(a).split(","):
            word = word.strip()
            if not word:
                continue
            if "=" in word:
                key, val = word.split("=", 1)
                changes[key.strip()] = val.strip().lower() in ("1", "true", "yes", "on")
            else:
                changes[word[3:] if word.startswith("no_") else word] = \
                    not word.startswith("no_")
    changes.update(kwargs)
    if "write_cl" in changes:          # loopy's older name
        changes["write_code"] = changes.pop("write_cl")
    # loopy options about its own Python wrapper and terminal: nothing to do here
    unknown = set(changes) - _OPTION_FIELDS - {
        "allow_terminal_colors", "write_wrapper", "return_dict", "no_numpy",
        "enforce_variable_access_ordered", "highlight_cl", "highlight_wrapper",
        "skip_arg_checks"}
    if unknown:
        raise TransformError(f"set_options: unknown option(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(_OPTION_FIELDS))})")
    changes = {k: v for k, v in changes.items() if k in _OPTION_FIELDS}
    if "build_options" in changes:
        bo = changes["build_options"]
        try:
            changes["build_options"] = check_build_options(bo.split() if isinstance(bo, str)
                                                           else bo)
        except BuildOptionError as exc:
            raise TransformError(f"set_options: {exc}") from None
    return kernel.copy(options=kernel.options.copy(**changes))


__all__ = ["tag_instructions", "remove_instructions", "add_dependency", "add_barrier",
           "add_nosync", "set_options", "parse_match"]
