"""The state one kernel's lowering shares between the lowering of its
subroutine and of every procedure inlined into it: every mixin of
:class:`~f2loopy.frontend.lowering.UnitLowering` reaches it as ``self.st``."""

from __future__ import annotations

import islpy as isl

from f2loopy.frontend.loops import LoopScope, Region
from f2loopy.ir.kernel import Temporary


class LoweringState:
    """What one kernel accumulates while its subroutine (and everything
    inlined into it) is lowered.

    :attr errors: a list collecting statement errors (collecting mode), or
        None to raise the first error.
    """

    def __init__(self, *, collect: bool = False):
        self.instructions: list = []
        self.domains: list[isl.Set] = []
        self.extra_temporaries: dict[str, Temporary] = {}
        self.taken_names: set[str] = set()
        self.insn_ids: set[str] = set()
        #: base -> the next suffix to try for fresh names and ids: every
        #: smaller one is taken (linear, not quadratic, in the number of
        #: names of one base; a LAPACK routine inlines thousands of 'i' loops)
        self.next_name_suffix: dict[str, int] = {}
        self.next_id_suffix: dict[str, int] = {}
        self.claimed_inames: set[str] = set()
        self.loops: list[LoopScope] = []
        self.predicates: list = []
        self.regions: list[Region] = []
        self.errors: list | None = [] if collect else None
        self.call_stack: list[str] = []
        self.shared_tables: dict = {}
        self.placeholders: set[str] = set()     # array-syntax positions (integers)
        #: pairs of extents (IR expressions in the kernel's scalar arguments)
        #: that Fortran requires to be equal: conforming array operands
        self.conformance: list = []
        #: (lowering, loop variable) -> the temporary holding the variable's
        #: value outside its loops (see :meth:`UnitLowering.loop_scalar`)
        self.loop_scalars: dict = {}
        #: (array, axis) -> name of the kernel argument holding the extent of
        #: an assumed-shape dummy argument's axis (lower-case array name)
        self.assumed_extents: dict[tuple[str, int], str] = {}
        #: iname -> LoopExit (f2loopy.ir.control)
        self.loop_exits: dict = {}
        #: ids of instructions that run whatever the conditions around them
        #: (the flag ending a 'do while' loop, see ControlFlowMixin)
        self.unguarded: set = set()
        #: ErrorSite s of the kernel (f2loopy.frontend.errors), the output
        #: statements waiting for their stop, the temporary f2l_raise sets
        self.error_sites: list = []
        self.pending_output: list = []
        #: the list-directed output printed with printf (f2loopy.frontend.prints)
        self.prints: list = []
        self.print_temporary: str | None = None
        self.stop_temporary: str | None = None
        #: module variables: origin -> IR name, and origin -> symbol of those
        #: the procedures inlined use (:mod:`f2loopy.frontend.module_data`)
        self.storage_names: dict = {}
        self.storage_used: dict = {}
        self.storage_by_name: dict = {}          # IR name -> symbol
        #: allocatable module arrays: origin -> names of their dope arguments
        #: (:mod:`f2loopy.frontend.allocatables`)
        self.allocatable_dope: dict = {}
        #: optional dummy arguments of the kernel -> names of their presence
        #: flags (:mod:`f2loopy.frontend.optionals`)
        self.presence_flags: dict = {}
        self.dope_names: set = set()             # all those names (int32)
