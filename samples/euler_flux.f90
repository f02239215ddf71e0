! Volume term of a 1-D discontinuous Galerkin (spectral element) solver for the
! Euler equations, written like the refFluxR subroutine of the Loo.py paper:
! per element e and node i, sum over the nodes n of the element the derivative
! matrix D(i, n) times the flux computed from the state at node n.
subroutine euler_volume(ne, np, gamma, d, jinv, q, rhs)
  implicit none
  integer*4 ne, np, e, i, n
  real gamma
  real d(np, np), jinv(np, ne)
  real q(np, 3, ne), rhs(np, 3, ne)
  real rho, mom, en, u, p, f1, f2, f3, jid

  do e = 1, ne
    do i = 1, np
      do n = 1, np
!$loopy begin tagged: local_prep
        rho = q(n, 1, e)
        mom = q(n, 2, e)
        en = q(n, 3, e)
        u = mom / rho
        p = (gamma - 1.0) * (en - 0.5 * rho * u**2)
!$loopy end tagged: local_prep
        jid = jinv(i, e) * d(i, n)
!$loopy begin tagged: compute_fluxes
        f1 = mom
        f2 = mom * u + p
        f3 = (en + p) * u
!$loopy end tagged: compute_fluxes
        rhs(i, 1, e) = rhs(i, 1, e) - jid * f1
        rhs(i, 2, e) = rhs(i, 2, e) - jid * f2
        rhs(i, 3, e) = rhs(i, 3, e) - jid * f3
      end do
    end do
  end do
end subroutine euler_volume
