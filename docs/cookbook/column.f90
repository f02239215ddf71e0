! Cookbook: column physics.  Columns (jl) are independent; the vertical loop
! (jk) carries a recurrence (each level needs the one above), so it stays
! sequential inside each work-item: only jl is parallel.
subroutine precip(klon, klev, dt, q, flux)
  integer, intent(in) :: klon, klev
  double precision, intent(in) :: dt
  double precision, intent(inout) :: q(klon, klev)
  double precision, intent(out) :: flux(klon, klev + 1)
  integer :: jl, jk
  double precision :: fall
  do jl = 1, klon
    flux(jl, 1) = 0
  end do
  do jk = 1, klev
    do jl = 1, klon
      fall = min(q(jl, jk), dt * 0.1d0 * q(jl, jk))
      q(jl, jk) = q(jl, jk) - fall + flux(jl, jk)
      flux(jl, jk + 1) = fall
    end do
  end do
end subroutine precip

!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! # one work-item per column, in both nests (the second one's jl is jl_1): the
! # top of a column and its levels are then computed by the same work-item
! k = split_iname(k, "jl", 32, outer_tag="g.0", inner_tag="l.0")
! RESULT = split_iname(k, "jl_1", 32, outer_tag="g.0", inner_tag="l.0")
!$loopy end
