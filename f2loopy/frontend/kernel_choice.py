"""Which procedures of a file become kernels (``--kernel NAME``), and the
note that says, when one fails, which of the others translate.

A module with ten subroutines and one that f2loopy cannot translate writes
nothing (a file is translated whole or not at all); the note names the
units that would translate, so that ``--kernel`` can choose them.  The
procedures not chosen are not lowered (their declarations are still read
where a chosen one uses their module, calls or inlines them).
"""

from __future__ import annotations

from f2loopy.diagnostics import F2LoopyError, FortranError
from f2loopy.escape import is_identifier

#: the most units the note tries to lower after a failure (each costs a translation)
MAX_TRIED = 64


def check_kernel_names(names) -> tuple[str, ...]:
    """*names* (``--kernel`` values) as a tuple of lower-case names, in order,
    each once; a name that is not a Fortran name is an error."""
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not is_identifier(name, 63) or name.startswith("_"):
            raise F2LoopyError(f"--kernel {ascii(name)}: not a Fortran name")
        if name.lower() not in out:
            out.append(name.lower())
    if not out:
        raise F2LoopyError("--kernel: no name given")
    return tuple(out)


def chosen_procedures(src, registry, kernels: tuple[str, ...] | None) -> list:
    """The procedures of *registry* to lower: its kernel procedures, or the
    procedures named *kernels* (a function too, which would otherwise only
    be inlined where it is called), in file order."""
    if kernels is None:
        return registry.kernel_procedures()
    by_name: dict = {}
    for proc in registry.all_procedures:
        by_name.setdefault(proc.name.lower(), proc)
    if not by_name:
        # a file of modules only (named beside the files that use them):
        # nothing of it is chosen, which the caller reports as for any file
        # without a procedure to translate
        return []
    missing = [n for n in kernels if n not in by_name]
    if missing:
        have = ", ".join(sorted(by_name)) or "none"
        raise FortranError(
            f"--kernel {missing[0]}: {src.filename} has no subroutine or function of that "
            f"name (it has: {have})", src.span(1) if src.lines else None)
    return sorted((by_name[n] for n in kernels), key=lambda p: p.line)


def note_units(exc: F2LoopyError, src, registry, procedures: list, failed_at: int | None,
               chosen: tuple[str, ...] | None, failed_kernels=None,
               bindings: tuple = ()) -> None:
    """Add to *exc* a note saying which units of the file translate and which
    do not (the one at index *failed_at* of *procedures* failed; those before
    it translated).  With *failed_at* None (collected errors), *failed_kernels*
    are the kernels that did translate.  Nothing is added for a file of one
    unit."""
    from f2loopy.frontend.units import lower_subroutine
    if len(procedures) < 2:
        return
    names = [p.name for p in procedures]
    if failed_at is not None:
        ok, bad = names[:failed_at], [names[failed_at]]
        rest = procedures[failed_at + 1:]
        if len(rest) > MAX_TRIED:
            return
        for proc in rest:
            try:
                lower_subroutine(src, proc, registry, bindings=bindings)
            except F2LoopyError:
                bad.append(proc.name)
            except Exception:  # noqa: BLE001 - the note is a help, the error stands
                return
            else:
                ok.append(proc.name)
    else:
        done = {k.name.lower() for k in failed_kernels or ()}
        ok = [n for n in names if n.lower() in done]
        bad = [n for n in names if n.lower() not in done]
    if not ok:
        note = (f"none of the {len(names)} {'chosen ' if chosen else ''}units of this file "
                "translates")
    else:
        hint = " ".join(f"--kernel {n}" for n in ok)
        note = (f"of the {len(names)} {'chosen ' if chosen else ''}units of this file, "
                f"{', '.join(ok)} translate{'s' if len(ok) == 1 else ''} and "
                f"{', '.join(bad)} do{'es' if len(bad) == 1 else ''} not; nothing was written "
                f"(translate the others alone with {hint})")
    exc.notes = (*exc.notes, (note, None))
    add_summary_note = getattr(exc, "add_summary_note", None)
    if add_summary_note is not None:        # FortranErrors: said after the list too
        add_summary_note(note)
