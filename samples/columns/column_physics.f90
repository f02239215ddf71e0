! Column physics in the style of the IFS (CLOUDSC and its kin): every routine
! works on a block of KLON columns of KLEV levels, and each horizontal loop
! runs over the columns KIDIA..KFDIA of the block.  Per-column scalars are
! assigned under conditionals, searches leave a loop early, and a per-column
! sort goes through an index array.  `f2loopy translate --transform auto`
! makes every column loop parallel (its scalars private to the column); the
! tests check each routine against gfortran.
!
!   f2loopy check --transform auto --size klon=13 --size kidia=2 --size kfdia=12 \
!     --size klev=9 samples/columns/column_physics.f90

! Scalars assigned in both branches, one assigned and read only under the
! same condition, a logical flag, a condition that changes in the branch.
subroutine cond_scalars(klon, klev, kidia, kfdia, pt, pq, ptend, pflux)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev), pq(klon, klev)
  double precision, intent(inout) :: ptend(klon, klev)
  double precision, intent(out) :: pflux(klon, klev + 1)
  double precision :: zfac, zqadj, zalfa, zdelta
  logical :: llwarm
  integer :: jk, jl

  do jl = kidia, kfdia
    pflux(jl, 1) = 0.0d0
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      if (pt(jl, jk) > 1.0d0) then
        zfac = pt(jl, jk) * 0.5d0
        llwarm = .true.
      else
        zfac = pq(jl, jk) - 0.25d0
        llwarm = .false.
      end if
      if (pq(jl, jk) < 0.75d0) then
        zqadj = pq(jl, jk) * 0.1d0
        ptend(jl, jk) = ptend(jl, jk) + zqadj
      end if
      zalfa = 1.0d0
      if (llwarm) zalfa = zfac * zfac
      zdelta = zalfa - zfac
      if (zdelta > 0.0d0) then
        zdelta = -zdelta
        ptend(jl, jk) = ptend(jl, jk) + zdelta
      end if
      pflux(jl, jk + 1) = pflux(jl, jk) + zalfa * zdelta
    end do
  end do
end subroutine cond_scalars

! A search down each column that stops at the first level over a threshold
! (an exit inside the column), and a sum over the levels below it.
subroutine early_exit(klon, klev, kidia, kfdia, pq, pthr, ktop, pbelow)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pq(klon, klev), pthr
  integer, intent(out) :: ktop(klon)
  double precision, intent(out) :: pbelow(klon)
  double precision :: zsum
  integer :: jk, jl, ik

  do jl = kidia, kfdia
    ik = klev
    do jk = 1, klev
      if (pq(jl, jk) > pthr) then
        ik = jk
        exit
      end if
    end do
    ktop(jl) = ik
    zsum = 0.0d0
    do jk = ik, klev
      zsum = zsum + pq(jl, jk)
    end do
    pbelow(jl) = zsum
  end do
end subroutine early_exit

! A per-column selection sort through an index array, as CLOUDSC orders its
! species: IORDER(JL, JN) is the JN-th smallest ratio's species.
subroutine species_order(klon, kidia, kfdia, pratio, iorder, psorted)
  implicit none
  integer, parameter :: nclv = 5
  integer, intent(in) :: klon, kidia, kfdia
  double precision, intent(in) :: pratio(klon, nclv)
  integer, intent(out) :: iorder(klon, nclv)
  double precision, intent(out) :: psorted(klon, nclv)
  double precision :: zmin(klon)
  logical :: llindex(klon, nclv)
  integer :: jl, jm, jn

  do jm = 1, nclv
    do jl = kidia, kfdia
      iorder(jl, jm) = 1
      llindex(jl, jm) = .true.
    end do
  end do
  do jn = 1, nclv
    do jl = kidia, kfdia
      zmin(jl) = huge(1.0d0)
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        if (llindex(jl, jm) .and. pratio(jl, jm) < zmin(jl)) then
          iorder(jl, jn) = jm
          zmin(jl) = pratio(jl, jm)
        end if
      end do
    end do
    do jl = kidia, kfdia
      llindex(jl, iorder(jl, jn)) = .false.
    end do
  end do
  do jn = 1, nclv
    do jl = kidia, kfdia
      psorted(jl, jn) = pratio(jl, iorder(jl, jn))
    end do
  end do
end subroutine species_order

! An insertion sort of each column's species through the index array, the
! column loop outermost: the inner search leaves its loop early and the
! loop index's value after the loop says where to insert.
subroutine insertion_order(klon, kidia, kfdia, pratio, iorder)
  implicit none
  integer, parameter :: nclv = 5
  integer, intent(in) :: klon, kidia, kfdia
  double precision, intent(in) :: pratio(klon, nclv)
  integer, intent(out) :: iorder(klon, nclv)
  integer :: jl, jm, jn, itmp

  do jl = kidia, kfdia
    do jm = 1, nclv
      iorder(jl, jm) = jm
    end do
    do jm = 2, nclv
      itmp = iorder(jl, jm)
      do jn = jm - 1, 1, -1
        if (pratio(jl, iorder(jl, jn)) <= pratio(jl, itmp)) exit
        iorder(jl, jn + 1) = iorder(jl, jn)
      end do
      iorder(jl, jn + 1) = itmp
    end do
  end do
end subroutine insertion_order

! Whole-extent fills (`A(:) = 0` over all KLON columns) of a temporary and of
! an output argument, then column loops over KIDIA..KFDIA: the fill of the
! temporary runs on the columns' work-items, the argument's columns outside
! the block are still zeroed.
subroutine whole_fills(klon, klev, kidia, kfdia, pq, pflux, psum)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pq(klon, klev)
  double precision, intent(out) :: pflux(klon, klev), psum(klon)
  double precision :: zacc(klon, 3)
  integer :: jk, jl

  zacc(:, :) = 0.0d0
  pflux(:, :) = 0.0d0
  psum(:) = 0.0d0
  do jk = 1, klev
    do jl = kidia, kfdia
      zacc(jl, 1) = zacc(jl, 1) + pq(jl, jk)
      zacc(jl, 2) = max(zacc(jl, 2), pq(jl, jk))
      pflux(jl, jk) = zacc(jl, 1) - zacc(jl, 2)
    end do
  end do
  do jl = kidia, kfdia
    psum(jl) = zacc(jl, 1) + zacc(jl, 3)
  end do
end subroutine whole_fills
