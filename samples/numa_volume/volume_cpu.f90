! The paper's volume kernel (the same two subroutines as volume.f90) with a
! transformation script for the CPU (PoCL), where volume.f90's script is for
! a GPU.  What makes it fast on PoCL (measured; RESULTS.md, "CPU script"):
!
! * the fluxes are computed once per node (precompute over the n loop, as the
!   paper's level 5 does), not once per (i, n) pair as in the Fortran;
! * simd="float8": the i axis (unit stride, length Nq = 8) is an OpenCL
!   float8 (tag "vec"; q, geo, rhsq and D are read as float8 arrays, the same
!   bytes as Fortran's layout), so the code is explicitly vectorised and
!   (p_R*Th/p_p0)**p_Gamma is one vector pow per 8 nodes: a call of PoCL's
!   scalar pow costs about as much as a call of its float8 pow, and a call to
!   it also keeps PoCL's work-group vectoriser (which vectorises across the
!   work-items of local axis 0) from vectorising the loop around it;
!   simd="work_items" leaves the vectorising to PoCL (i on local axis 0);
! * pow_once: that pow once per node into a private temporary, for the 16
!   flux components that use it (the OpenCL compiler does not merge the calls);
! * j_axis / k_axis: the j and k loops as loops inside a work-item or as
!   local axes; with j a loop, each work-item computes the fluxes of its whole
!   k-plane into private memory and needs no barrier (with j local they go to
!   local memory, with a barrier on each side);
! * unroll_n: the n loops of the contraction unrolled (PoCL's vectoriser only
!   vectorises innermost loops; with float8 it turns the flux reads into
!   constant component reads);
! * fast_math: -cl-fast-relaxed-math.
!
!     f2loopy tune -D Nq=8 --size Ne=6910 --verify-size Ne=5 --min-time 1 samples/numa_volume/volume_cpu.f90
!     f2loopy translate -D Nq=8 samples/numa_volume/volume_cpu.f90   # uses the record
!     python3 benchmarks/paper_cpu.py -D Nq=8 --size Ne=6910         # against gfortran
!

subroutine refFluxR(Ne, Nq, geo, D, q, rhsq, p_p0, &
                    p_Gamma, p_R)
  implicit none
  integer*4 Ne, Nq, e, i, j, k, n
  real geo(Nq,Nq,Nq,11,Ne), D(Nq,Nq)
  real rhsq(Nq,Nq,Nq,8,Ne), q(Nq,Nq,Nq,8,Ne)

  real U1, U2, U3, Rh, Th, P, Q1, Q2, Q3
  real U1flx, U2flx, U3flx, Rhflx, Thflx
  real Q1flx, Q2flx, Q3flx, p_p0, p_Gamma, p_R
  real g11, g21, g31, Jinv, udotGradR, JiD

  do e = 1, Ne
    do k = 1, Nq
      do j = 1, Nq
        do i = 1, Nq
          do n = 1, Nq

!$loopy begin tagged: local_prep
            U1 = q(n,j,k,1,e)
            U2 = q(n,j,k,2,e)
            U3 = q(n,j,k,3,e)
            Rh = q(n,j,k,4,e)
            Th = q(n,j,k,5,e)
            Q1 = q(n,j,k,6,e)
            Q2 = q(n,j,k,7,e)
            Q3 = q(n,j,k,8,e)

            g11 = geo(n,j,k,1,e)
            g21 = geo(n,j,k,2,e)
            g31 = geo(n,j,k,3,e)

            Jinv = geo(i,j,k,10,e)

            P = p_p0*(p_R*Th/p_p0) ** p_Gamma
            udotGradR = (g11*U1 + g21*U2 + g31*U3)/Rh
!$loopy end tagged: local_prep

            JiD = Jinv*D(i,n)

!$loopy begin tagged: compute_fluxes
            U1flx = U1*udotGradR + g11*P
            U2flx = U2*udotGradR + g21*P
            U3flx = U3*udotGradR + g31*P
            Rhflx = Rh*udotGradR
            Thflx = Th*udotGradR
            Q1flx = Q1*udotGradR
            Q2flx = Q2*udotGradR
            Q3flx = Q3*udotGradR
!$loopy end tagged: compute_fluxes

            rhsq(i,j,k,1,e) = rhsq(i,j,k,1,e) - JiD*U1flx
            rhsq(i,j,k,2,e) = rhsq(i,j,k,2,e) - JiD*U2flx
            rhsq(i,j,k,3,e) = rhsq(i,j,k,3,e) - JiD*U3flx
            rhsq(i,j,k,4,e) = rhsq(i,j,k,4,e) - JiD*Rhflx
            rhsq(i,j,k,5,e) = rhsq(i,j,k,5,e) - JiD*Thflx
            rhsq(i,j,k,6,e) = rhsq(i,j,k,6,e) - JiD*Q1flx
            rhsq(i,j,k,7,e) = rhsq(i,j,k,7,e) - JiD*Q2flx
            rhsq(i,j,k,8,e) = rhsq(i,j,k,8,e) - JiD*Q3flx
          end do
        end do
      end do
    end do
  end do
end subroutine refFluxR

subroutine refFluxS(Ne, Nq, geo, D, q, rhsq, p_p0, &
                    p_Gamma, p_R)
  implicit none
  integer*4 Ne, Nq, e, i, j, k, n
  real geo(Nq,Nq,Nq,11,Ne), D(Nq,Nq)
  real rhsq(Nq,Nq,Nq,8,Ne), q(Nq,Nq,Nq,8,Ne)

  real U1, U2, U3, Rh, Th, P, Q1, Q2, Q3
  real U1flx, U2flx, U3flx, Rhflx, Thflx
  real Q1flx, Q2flx, Q3flx, p_p0, p_Gamma, p_R
  real g12, g22, g32, Jinv, udotGradS, JiD

  do e = 1, Ne
    do k = 1, Nq
      do j = 1, Nq
        do i = 1, Nq
          do n = 1, Nq

!$loopy begin tagged: local_prep
            U1 = q(i,n,k,1,e)
            U2 = q(i,n,k,2,e)
            U3 = q(i,n,k,3,e)
            Rh = q(i,n,k,4,e)
            Th = q(i,n,k,5,e)
            Q1 = q(i,n,k,6,e)
            Q2 = q(i,n,k,7,e)
            Q3 = q(i,n,k,8,e)

            g12 = geo(i,n,k,4,e)
            g22 = geo(i,n,k,5,e)
            g32 = geo(i,n,k,6,e)

            Jinv = geo(i,j,k,10,e)

            P = p_p0*(p_R*Th/p_p0) ** p_Gamma
            udotGradS = (g12*U1 + g22*U2 + g32*U3)/Rh
!$loopy end tagged: local_prep

            JiD = Jinv*D(j,n)

!$loopy begin tagged: compute_fluxes
            U1flx = U1*udotGradS + g12*P
            U2flx = U2*udotGradS + g22*P
            U3flx = U3*udotGradS + g32*P
            Rhflx = Rh*udotGradS
            Thflx = Th*udotGradS
            Q1flx = Q1*udotGradS
            Q2flx = Q2*udotGradS
            Q3flx = Q3*udotGradS
!$loopy end tagged: compute_fluxes

            rhsq(i,j,k,1,e) = rhsq(i,j,k,1,e) - JiD*U1flx
            rhsq(i,j,k,2,e) = rhsq(i,j,k,2,e) - JiD*U2flx
            rhsq(i,j,k,3,e) = rhsq(i,j,k,3,e) - JiD*U3flx
            rhsq(i,j,k,4,e) = rhsq(i,j,k,4,e) - JiD*Rhflx
            rhsq(i,j,k,5,e) = rhsq(i,j,k,5,e) - JiD*Thflx
            rhsq(i,j,k,6,e) = rhsq(i,j,k,6,e) - JiD*Q1flx
            rhsq(i,j,k,7,e) = rhsq(i,j,k,7,e) - JiD*Q2flx
            rhsq(i,j,k,8,e) = rhsq(i,j,k,8,e) - JiD*Q3flx
          end do
        end do
      end do
    end do
  end do
end subroutine refFluxS

!$loopy begin
! from loopy import *
! import loopy.match as m
!
! f_r, f_s = parse_fortran(SOURCE, FILENAME,
!                          auto_dependencies=False)
! f = fuse_kernels([f_r, f_s], suffixes=["_r", "_s"])
! f = fix_parameters(f, Nq=Nq)
! f = fix_parameters(f, p_p0=1, p_Gamma=1.4, p_R=1)
! f = assume(f, "Ne >= 1")
!
! simd = tunable("simd", ["float8", "work_items"])
! j_axis = tunable("j_axis", ["loop", "local"])
! k_axis = tunable("k_axis", ["local", "loop"])
! unroll_n = tunable("unroll_n", [True, False])
! fast_math = tunable("fast_math", [False, True])
!
! # i: float8 lanes or local axis 0; then j and k: local axes in order, or loops
! tags = {"i": "vec" if simd == "float8" else "l.0"}
! axis = 0 if simd == "float8" else 1
! for name, where in [("j", j_axis), ("k", k_axis)]:
!     if where == "local":
!         tags[name] = "l.%d" % axis
!         axis += 1
! f = set_loop_priority(f, "k,j")
! f = tag_inames(f, "e:g.0, " + ", ".join(n + ":" + t for n, t in tags.items()))
! if simd == "float8":
!     for name in ["q", "rhsq", "geo"]:
!         f = tag_data_axes(f, name, "vec,N0,N1,N2,N3")
!     f = tag_data_axes(f, "D", "vec,N0")
!
! for insn in find_instructions(f, "tag:local_prep"):
!     f = assignment_to_subst(f, insn.assignee_name)
! f = assignment_to_subst(f, "JiD_r")
! f = assignment_to_subst(f, "JiD_s")
!
! # each flux component once per node of a k-plane (or of the element, with
! # k local): flux_store_<comp><r|s>[ii, jj(, kk)]
! comps = ["U1", "U2", "U3", "Rh", "Th", "Q1", "Q2", "Q3"]
! sweep_k, pre_k = (("k",), ("kk",)) if k_axis == "local" else ((), ())
! for comp in comps:
!     for ref_ax, flux_inames, flux_precomp_inames in [
!             ("r", ("j", "n"), ("jj", "ii")),
!             ("s", ("i", "n"), ("ii", "jj"))]:
!         flux_var = comp + "flx_" + ref_ax
!         f = assignment_to_subst(f, flux_var)
!         f = precompute(f, flux_var + "_subst", flux_inames + sweep_k,
!                 temporary_name="flux_store_" + comp + ref_ax,
!                 precompute_inames=flux_precomp_inames + pre_k,
!                 default_tag=None)
!         f = tag_data_axes(f, "flux_store_" + comp + ref_ax, {
!             n: ("vec" if simd == "float8" and n == "ii" else
!                 "N%d" % (k - (simd == "float8")))
!             for k, n in enumerate(("ii", "jj") + pre_k)})
! f = tag_inames(f, ", ".join(n + n[0] + ":" + t for n, t in tags.items()))
!
! # the pressure p_p0*(p_R*Th/p_p0)**p_Gamma (a pow) once per node for all
! # flux components of both directions (the compiler does not merge the calls)
! if tunable("pow_once", [True, False]):
!     (rule,) = find_rules_matching(f, "P_*")
!     f = precompute(f, rule, ("ii",) if simd == "float8" else (),
!         temporary_name="P_node", precompute_inames=("pii",) if simd == "float8" else (),
!         temporary_address_space="private", default_tag=None)
!     if simd == "float8":
!         f = tag_inames(f, "pii:vec")
!         f = tag_data_axes(f, "P_node", "vec")
!
! # the contraction of each component: its own n loop (and, with float8, its
! # own vector loop over i inside it, so that the loop body is one statement)
! for comp in comps:
!     for ref_ax in ["r", "s"]:
!         f = rename_iname(f, "n", "n_" + comp,
!             within=m.Reads("flux_store_" + comp + ref_ax), existing_ok=True)
!         if simd == "float8":
!             f = rename_iname(f, "i", "i_" + comp,
!                 within=m.Reads("flux_store_" + comp + ref_ax), existing_ok=True)
!     if simd == "float8":
!         f = tag_inames(f, "i_%s:vec" % comp)
!         f = prioritize_loops(f, "n_%s,i_%s" % (comp, comp))
!     if unroll_n:
!         f = tag_inames(f, "n_%s:unr" % comp)
! if simd != "float8":
!     # accumulate in private memory, store once
!     f = buffer_array(f, "rhsq", (), fetch_bounding_box=True, default_tag="for",
!         init_expression="0", store_expression="base + buffer")
!     f = collect_common_factors_on_increment(f, "rhsq_buf")
! if fast_math:
!     f = set_options(f, build_options=["-cl-fast-relaxed-math"])
! RESULT = [f]
!$loopy end
