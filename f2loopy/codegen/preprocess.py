"""Checks and normalisations run before code generation."""

from __future__ import annotations

from f2loopy.ir.types import FortranTypeError, kernel_type_inferrer
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import constant_trip_count
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel


def preprocess(kernel: Kernel) -> Kernel:
    """Validate *kernel* for code generation and return it ready to emit:
    reductions become plain instructions."""
    from f2loopy.codegen.reductions import realize_reductions
    kernel = expand_all_rules(kernel)
    check_instructions(kernel)
    kernel = resolve_auto_tags(kernel)
    kernel = realize_reductions(kernel)
    kernel = resolve_address_spaces(kernel)
    kernel = single_lane_global_writes(kernel)
    check_instructions(kernel)
    return kernel


def check_instructions(kernel: Kernel) -> None:
    inames = set(kernel.all_inames())
    types = kernel_type_inferrer(kernel)
    ids = set()
    for insn in kernel.instructions:
        if insn.id in ids:
            raise CodegenError(f"two instructions have the id '{insn.id}'", insn.span)
        ids.add(insn.id)
        unknown = set(insn.within_inames) - inames
        if unknown:
            raise CodegenError(f"instruction '{insn.id}' runs in loop(s) that no domain "
                               f"defines: {', '.join(sorted(unknown))}", insn.span)
        from f2loopy.ir.kernel import BarrierInstruction
        if isinstance(insn, BarrierInstruction) and insn.scope == "global":
            raise CodegenError(f"global barrier '{insn.id}': synchronising all work-groups "
                               "needs the kernel split in two, which f2loopy does not do; "
                               "use a local barrier or separate kernels", insn.span)
        if isinstance(insn, Assignment):
            for expr in (insn.assignee, insn.expression, *insn.predicates):
                try:
                    types(expr)
                except (FortranTypeError, KeyError) as exc:
                    raise CodegenError(f"instruction '{insn.id}': {exc}", insn.span) from None
    for insn in kernel.instructions:
        missing = set(insn.depends_on) - ids
        if missing:
            raise CodegenError(f"instruction '{insn.id}' depends on unknown instruction(s) "
                               f"{', '.join(sorted(missing))}", insn.span)


def expand_all_rules(kernel: Kernel) -> Kernel:
    """Replace every substitution rule call by what it stands for."""
    if not kernel.substitutions:
        return kernel
    from f2loopy.ir.frozen import FrozenMap
    from f2loopy.transform.rules import map_instruction_expressions, expand_rules
    rules = kernel.substitutions
    insns = tuple(map_instruction_expressions(i, lambda e: expand_rules(e, rules)) for i in kernel.instructions)
    return kernel.copy(instructions=insns, substitutions=FrozenMap())


def resolve_auto_tags(kernel: Kernel) -> Kernel:
    """Give ``l.auto`` inames a concrete local axis.

    An ``l.auto`` iname takes a local axis the kernel already uses but the
    instructions in its loop do not (lowest stride in global memory first); a
    loop longer than the work-group along that axis (a tile with its halo) is
    split, its inner part on the axis.  If there is no such axis, or the
    length is not a constant, it becomes a sequential loop (unrolled when
    short).  A kernel without local axes gets none from ``l.auto`` (that
    would replicate every other statement).
    """
    from f2loopy.ir.frozen import FrozenMap
    from f2loopy.ir.tags import AutoLocalAxisTag, LocalAxisTag, SequentialTag, UnrollTag
    from f2loopy.transform.iname import split_iname
    autos = [i for i in kernel.all_inames()
             if isinstance(kernel.iname_tag(i), AutoLocalAxisTag)]
    if not autos:
        return kernel
    sizes = _local_axis_sizes(kernel)
    for x in sorted(autos, key=lambda i: _stride_rank(kernel, i)):
        tags = dict(kernel.iname_tags)
        users = [insn for insn in kernel.instructions if x in insn.within_inames]
        taken = set()
        for insn in users:
            for i in insn.within_inames:
                t = tags.get(i)
                if isinstance(t, LocalAxisTag):
                    taken.add(t.axis)
        length = constant_trip_count(kernel, x)
        free = [axis for axis in sorted(sizes) if axis not in taken]
        if free and length is not None and length > sizes[free[0]] and \
                not any(length <= sizes[a] for a in free):
            kernel = split_iname(kernel, x, sizes[free[0]], inner_tag=LocalAxisTag(free[0]),
                                 outer_tag=None)
            continue
        choice = next((a for a in free if length is not None and length <= sizes[a]), None)
        if choice is not None:
            tags[x] = LocalAxisTag(choice)
        elif length is not None and length <= 16:
            tags[x] = UnrollTag()
        else:
            tags[x] = SequentialTag()
        kernel = kernel.copy(iname_tags=FrozenMap((k, v) for k, v in tags.items()
                                                  if not isinstance(v, SequentialTag)))
    return kernel


def _local_axis_sizes(kernel) -> dict:
    from f2loopy.ir.tags import LocalAxisTag
    sizes: dict = {}
    for i, t in kernel.iname_tags.items():
        if isinstance(t, LocalAxisTag):
            n = constant_trip_count(kernel, i)
            if n is not None:
                sizes[t.axis] = max(sizes.get(t.axis, 0), n)
    return sizes


def _stride_rank(kernel, iname):
    """How fast global memory moves with *iname* (smaller is faster)."""
    from f2loopy.ir.expressions import accesses, variables_read
    from f2loopy.ir.kernel import ArrayArg
    best = (10**9, iname)
    for insn in kernel.instructions:
        if iname not in insn.within_inames:
            continue
        for e in insn.read_expressions() + ((insn.assignee,) if isinstance(insn, Assignment)
                                            else ()):
            for name, idx in accesses(e):
                if idx is None or not kernel.has_variable(name):
                    continue
                var = kernel.variable(name)
                if not isinstance(var, ArrayArg):
                    continue
                for axis, ix in enumerate(idx):
                    if iname in variables_read(ix):
                        order = var.axis_tags[axis].order if var.axis_tags[axis].kind == "nest" \
                            else -1
                        best = min(best, (order, iname))
    return best


def resolve_address_spaces(kernel: Kernel) -> Kernel:
    """Temporaries with no address space become local if some work-items of
    a group write them at places that depend on their local ids, else
    private."""
    from f2loopy.ir.expressions import index_tuple, variables_read
    from f2loopy.ir.frozen import FrozenMap
    from f2loopy.ir.tags import LocalAxisTag
    local_inames = {i for i, t in kernel.iname_tags.items() if isinstance(t, LocalAxisTag)}
    temps = dict(kernel.temporaries)
    changed = False
    for name, t in kernel.temporaries.items():
        if t.address_space is not None:
            continue
        space = AddressSpace.PRIVATE
        for insn in kernel.instructions:
            if not isinstance(insn, Assignment) or insn.assignee_name != name:
                continue
            if hasattr(insn.assignee, "aggregate"):
                used = variables_read(*index_tuple(insn.assignee)) & local_inames
                if used & set(insn.within_inames):
                    space = AddressSpace.LOCAL
        temps[name] = t.copy(address_space=space)
        changed = True
    return kernel.copy(temporaries=FrozenMap(temps)) if changed else kernel


def single_lane_global_writes(kernel: Kernel) -> Kernel:
    """An assignment to global memory outside some of the kernel's parallel
    loops runs in the first work-item along those axes only.

    Otherwise every work-item would run it and write the same element
    (``s = s + sum(...)`` after a parallel reduction, ``t = 0`` before a
    parallel loop): a race, and a wrong result for an update.  Such a
    statement gets, per missing axis, a loop of one iteration (index 0)
    tagged with that axis: for a local axis ``l.N`` always (the race and
    barrier analysis then sees the lane like any other: a work-item reading
    the value needs a barrier, which is inserted); for a group axis ``g.N``
    only when no statement inside a loop on that axis touches the variable
    (work-groups cannot wait for each other), else the race is reported.
    """
    from f2loopy.ir.expressions import accesses
    from f2loopy.ir.frozen import FrozenMap
    from f2loopy.ir.isl_tools import lazy_affs, make_space
    from f2loopy.ir.kernel import ArrayArg, ScalarArg
    from f2loopy.ir.tags import GroupAxisTag, LocalAxisTag
    kinds = {}
    for t in kernel.iname_tags.values():
        if isinstance(t, (LocalAxisTag, GroupAxisTag)):
            kinds[("l" if isinstance(t, LocalAxisTag) else "g", t.axis)] = type(t)
    if not kinds:
        return kernel

    def axes_of(insn) -> set:
        return {("l" if isinstance(t, LocalAxisTag) else "g", t.axis)
                for i in insn.within_inames
                if isinstance(t := kernel.iname_tag(i), (LocalAxisTag, GroupAxisTag))}

    def is_global(name):
        if not kernel.has_variable(name):
            return False
        if isinstance(kernel.variable(name), (ArrayArg, ScalarArg)):
            return True      # a written scalar argument is a one-element buffer
        t = kernel.temporaries.get(name)
        return t is not None and t.address_space == AddressSpace.GLOBAL

    # group axes along which some statement touches each variable
    spread: dict = {}
    for insn in kernel.instructions:
        names = {n for e in insn.read_expressions() for n, _ in accesses(e)}
        names.update(insn.assignee_names())
        group = {a for a in axes_of(insn) if a[0] == "g"}
        for n in names:
            spread.setdefault(n, set()).update(group)

    taken = set(kernel.all_variable_names()) | {i.id for i in kernel.instructions}
    domains, tags, lanes, insns = list(kernel.domains), dict(kernel.iname_tags), {}, []
    for insn in kernel.instructions:
        if isinstance(insn, Assignment) and is_global(insn.assignee_name):
            missing = set(kinds) - axes_of(insn)
            missing = {a for a in missing
                       if a[0] == "l" or a not in spread.get(insn.assignee_name, ())}
            # one lane iname per loop nest the statements are in: an iname
            # is one loop, and statements in different nests need their own
            # (the sequential reference order of the race checks has them)
            nest = insn.within_inames
            for kind, axis in sorted(missing):
                if (kind, axis, nest) not in lanes:
                    base = f"{'lane' if kind == 'l' else 'group'}0_{kind}{axis}"
                    name, k = base, 0
                    while name in taken:
                        k += 1
                        name = f"{base}_{k}"
                    taken.add(name)
                    affs = lazy_affs(make_space([name], []))
                    domains.append(affs[name].eq_set(affs[0]))
                    tags[name] = kinds[(kind, axis)](axis)
                    lanes[(kind, axis, nest)] = name
            if missing:
                insn = insn.copy(within_inames=insn.within_inames
                                 | {lanes[(a[0], a[1], nest)] for a in missing})
        insns.append(insn)
    if not lanes:
        return kernel
    return kernel.copy(instructions=tuple(insns), domains=tuple(domains),
                       iname_tags=FrozenMap(tags))


def address_spaces(kernel: Kernel) -> dict:
    """The address space of every temporary (private where none is set)."""
    out = {}
    for name, t in kernel.temporaries.items():
        out[name] = t.address_space or AddressSpace.PRIVATE
    return out
