! CPU variant (draft)

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
! k_axis = tunable("k_axis", ["local", "loop"])
! j_axis = tunable("j_axis", ["loop", "local"]) if simd == "float8" else "local"
! i_tag = "vec" if simd == "float8" else "l.0"
! j_tag, k_tag = ("l.0", "l.1") if simd == "float8" else ("l.1", "l.2")
! if j_axis == "loop":
!     k_tag = "l.0"
! f = set_loop_priority(f, "k,j")
! f = tag_inames(f, "e:g.0, i:%s" % i_tag + (", j:" + j_tag if j_axis == "local" else "")
!                + (", k:" + k_tag if k_axis == "local" else ""))
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
! comps = ["U1", "U2", "U3", "Rh", "Th", "Q1", "Q2", "Q3"]
! sweep_k, pre_k = (("k",), ("kk",)) if k_axis == "local" else ((), ())
! axes = {"ii": "vec" if simd == "float8" else "N0", "jj": "N0", "kk": "N1"}
! if simd != "float8":
!     axes = {"ii": "N0", "jj": "N1", "kk": "N2"}
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
!         f = tag_data_axes(f, "flux_store_" + comp + ref_ax,
!             {a: t for a, t in axes.items() if a != "kk" or sweep_k})
! f = tag_inames(f, "ii:%s" % i_tag + (", jj:" + j_tag if j_axis == "local" else "")
!                + (", kk:" + k_tag if k_axis == "local" else ""))
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
! if tunable("unroll_n", [True, False]):
!     f = tag_inames(f, ",".join("n_%s:unr" % comp for comp in comps))
! if simd != "float8" and tunable("buffer_rhsq", [True, False]):
!     f = buffer_array(f, "rhsq", (), fetch_bounding_box=True, default_tag="for",
!         init_expression="0", store_expression="base + buffer")
!     f = collect_common_factors_on_increment(f, "rhsq_buf")
! if tunable("fast_math", [False, True]):
!     f = set_options(f, build_options=["-cl-fast-relaxed-math"])
! RESULT = [f]
!$loopy end
