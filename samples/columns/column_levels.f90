! Column temporaries dimensioned by the number of levels, as CLOUDSC's
! ZQX(KLON, KLEV, NCLV), ZFOEALFA(KLON, KLEV + 1) and ZLNEG(KLON, KLEV, NCLV):
! each column fills and reads only its own part, but KLEV is a run-time size:
! --transform auto compiles the kernel per value of KLEV (runtime
! specialisation) or, with -D fix=KLEV=9, for that value only, and the
! temporaries become private arrays of each work-item (with
! -D specialize=false they stay global buffers of the whole block).  A level recurrence (reads of level JK-1), a species loop,
! a conditional update and a bottom-up sweep exercise the private copies.
!
!   f2loopy check --transform auto -D fix=klev=9 --size klon=13 --size kidia=2 \
!     --size kfdia=12 --size klev=9 samples/columns/column_levels.f90

subroutine level_temps(klon, klev, kidia, kfdia, pt, pq, paph, ptend, pflux)
  implicit none
  integer, parameter :: nclv = 3
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev), pq(klon, klev, nclv), paph(klon, klev + 1)
  double precision, intent(inout) :: ptend(klon, klev, nclv)
  double precision, intent(out) :: pflux(klon, klev + 1)
  double precision :: zqx(klon, klev, nclv), zdp(klon, klev), zfall(klon, klev + 1)
  double precision :: zneg(klon, nclv), zsum
  integer :: jk, jl, jm

  do jm = 1, nclv
    do jk = 1, klev
      do jl = kidia, kfdia
        zqx(jl, jk, jm) = pq(jl, jk, jm) * pt(jl, jk)
      end do
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      zdp(jl, jk) = paph(jl, jk + 1) - paph(jl, jk)
    end do
  end do
  zneg(kidia:kfdia, :) = 0.0d0
  zfall(kidia:kfdia, 1) = 0.0d0
  do jk = 2, klev
    do jm = 1, nclv
      do jl = kidia, kfdia
        if (zqx(jl, jk, jm) < 0.5d0) then
          zneg(jl, jm) = zneg(jl, jm) + zqx(jl, jk, jm)
          zqx(jl, jk, jm) = zqx(jl, jk - 1, jm) * 0.5d0
        end if
      end do
    end do
    do jl = kidia, kfdia
      zfall(jl, jk) = zfall(jl, jk - 1) + zdp(jl, jk) * zqx(jl, jk, 1)
    end do
  end do
  do jl = kidia, kfdia
    zfall(jl, klev + 1) = zfall(jl, klev) + zneg(jl, 2)
  end do
  do jk = klev, 1, -1
    do jl = kidia, kfdia
      zsum = 0.0d0
      do jm = 1, nclv
        zsum = zsum + zqx(jl, jk, jm)
        ptend(jl, jk, jm) = ptend(jl, jk, jm) + zqx(jl, jk, jm) - zneg(jl, jm)
      end do
      pflux(jl, jk + 1) = zfall(jl, jk + 1) + zsum
    end do
  end do
  do jl = kidia, kfdia
    pflux(jl, 1) = zfall(jl, 1)
  end do
end subroutine level_temps
