! The reference computation of the Loo.py paper (Kloeckner et al., ARRAY 2015),
! section 3: the fluxes of the volume term in the r and s reference directions,
! written "without regard to performance", and the transformation script that
! makes them fast, kept next to them.  Translate with
!
!     f2loopy translate -D Nq=8 samples/paper/ref_flux.f90
!
! The script follows the paper call by call, spelled as the paper spells it
! (old names included).  The steps after optimisation level 1 need
! transformations that f2loopy does not have yet (tag_data_axes,
! add_prefetch, assignment_to_subst, precompute, ...); they are kept as
! comments, in order, until they land.

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
! # -- [Opt. level 2] and beyond, as in the paper, once f2loopy has them:
! # f = tag_data_axes(f, "D", "N0,N1")
! # for name in ["q", "rhsq"]:
! #     f = set_array_dim_names(f, name, "i,j,k,field,e")
! #     f = split_array_dim(
! #         f, (name, 3, "F"), 4, auto_split_inames=False)
! #     f = tag_data_axes(f, name, "N0,N1,N2,vec,N4,N3")
! # checkpoint("level 2")
! # f = add_prefetch(f, "D[:,:]")
! # checkpoint("level 3")
! # local_prep_var_names = set()
! # for insn in find_instructions(f, "tag:local_prep"):
! #     assignee = insn.assignee_name
! #     local_prep_var_names.add(assignee)
! #     f = assignment_to_subst(f, assignee)
! # f = assignment_to_subst(f, "JiD_r")
! # f = assignment_to_subst(f, "JiD_s")
! # checkpoint("level 4")
! # (precompute of the fluxes, alias_temporaries, rename_iname with
! #  within=m.Reads(...), precompute of the degrees of freedom, add_prefetch
! #  of q, buffer_array of rhsq, data layouts of the on-chip copies and
! #  collect_common_factors_on_increment: levels 5 to 8)
!
! RESULT = [f]
!$loopy end
