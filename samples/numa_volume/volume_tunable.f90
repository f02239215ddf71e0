! The paper's volume kernel (the same two subroutines as volume.f90) with the
! paper's script through level 8, where four of its choices are left to
! measurement with tunable(...): whether the flux stores share local memory
! (alias_temporaries), whether q is prefetched, the k loop unrolled, and the
! OpenCL fast-math build option.  The first choice of each is the paper's, so
! until tuned this translates exactly as volume.f90's level 8.
!
!     f2loopy tune -D Nq=8 --size Ne=6910 --verify-size Ne=4 samples/numa_volume/volume_tunable.f90
!     f2loopy translate -D Nq=8 samples/numa_volume/volume_tunable.f90   # uses the record
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
!
! f = fuse_kernels([f_r, f_s], suffixes=["_r", "_s"])
!
! f = fix_parameters(f, Nq=Nq)
! f = fix_parameters(f, p_p0=1, p_Gamma=1.4, p_R=1)
! f = assume(f, "Ne >= 1")
!
! f = set_loop_priority(f, "k")
! f = tag_inames(f, "e:g.0, i:l.0, j:l.1")
! checkpoint("level 1")
!
! f = tag_data_axes(f, "D", "N0,N1")
! for name in ["q", "rhsq"]:
!     f = set_array_dim_names(f, name, "i,j,k,field,e")
!     f = split_array_dim(
!         f, (name, 3, "F"), 4, auto_split_inames=False)
!     f = tag_data_axes(f, name, "N0,N1,N2,vec,N4,N3")
! checkpoint("level 2")
!
! f = add_prefetch(f, "D[:,:]")
! checkpoint("level 3")
!
! local_prep_var_names = set()
! for insn in find_instructions(f, "tag:local_prep"):
!     assignee = insn.assignee_name
!     local_prep_var_names.add(assignee)
!     f = assignment_to_subst(f, assignee)
!
! f = assignment_to_subst(f, "JiD_r")
! f = assignment_to_subst(f, "JiD_s")
! checkpoint("level 4")
!
! comps = ["U1", "U2", "U3", "Rh", "Th", "Q1", "Q2", "Q3"]
! for comp in comps:
!     for ref_ax, flux_inames, flux_precomp_inames in [
!             ("r", ("j", "n",), ("jj", "ii",)),
!             ("s", ("i", "n",), ("ii", "jj",)),
!             ]:
!         flux_var = comp+"flx_"+ref_ax
!         f = assignment_to_subst(f, flux_var)
!         flux_store_name = "flux_store_" + comp + ref_ax
!         f = precompute(f, flux_var+"_subst", flux_inames,
!                 temporary_name=flux_store_name,
!                 precompute_inames=flux_precomp_inames,
!                 default_tag=None)
!         f = tag_data_axes(
!             f, flux_store_name, {"ii": "N0", "jj": "N1"})
!
! f = tag_inames(f, "ii:l.0,jj:l.1")
! if tunable("alias", [True, False]):
!     for ref_ax in ["r", "s"]:
!         f = alias_temporaries(f,
!             ["flux_store_" + comp + ref_ax for comp in comps])
!
! for comp in comps:
!     for ref_ax in ["r", "s"]:
!         flux_store_name = "flux_store_" + comp + ref_ax
!         f = rename_iname(f, "n", "n_"+comp,
!             within=m.Reads(flux_store_name), existing_ok=True)
! checkpoint("level 5")
!
! for prep_vname in local_prep_var_names:
!     if prep_vname.startswith("Jinv") or "_s" in prep_vname:
!         continue
!     f = precompute(f,
!         find_one_rule_matching(f, prep_vname+"_*subst*"))
! checkpoint("level 6")
!
! prefetch_q = tunable("prefetch_q", [True, False])
! if prefetch_q:
!     f = add_prefetch(f, "q[ii,jj,k,:,:,e]")
!
! f = buffer_array(f, "rhsq", (),
!     fetch_bounding_box=True, default_tag="for",
!     init_expression="0",
!     store_expression="base + buffer")
! checkpoint("level 7")
!
! f = tag_data_axes(f, "rhsq_buf", "vec,N0")
! f = tag_data_axes(f, "D_fetch", "N0,N1")
! f = tag_inames(f,
!     "rhsq_init_field_inner:vec,rhsq_store_field_inner:vec,"
!     "rhsq_init_field_outer:unr,rhsq_store_field_outer:unr")
! if prefetch_q:
!     f = tag_data_axes(f, "q_fetch", "vec,N0")
!     f = tag_inames(f, "q_dim_field_outer:unr,q_dim_field_inner:vec")
!
! f = collect_common_factors_on_increment(f, "rhsq_buf")
! if tunable("unroll_k", [False, True]):
!     f = tag_inames(f, "k:unr")
! if tunable("fast_math", [False, True]):
!     f = set_options(f, build_options=["-cl-fast-relaxed-math"])
! checkpoint("level 8 tuned")
!
! RESULT = [f]
!$loopy end
