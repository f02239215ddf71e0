! Kernels of a 2-D staggered-grid hydrodynamics step in the style of
! CloverLeaf (cell-centred density, energy, pressure; node-centred
! velocities; halo-padded arrays): an artificial viscosity whose limiter
! sets scalars under conditions, a PdV update whose fluxes depend on a
! predictor flag, and a field summary that accumulates totals.  Each
! `do k; do j` nest is one that an OpenMP version runs in parallel;
! `--transform auto` maps them to the grid (sums: see RESULTS.md).
!
!   f2loopy check --transform auto --size x_min=1 --size x_max=11 \
!     --size y_min=1 --size y_max=7 samples/hydro2d/hydro_kernels.f90

subroutine viscosity(x_min, x_max, y_min, y_max, celldx, celldy, density0, pressure, &
                     viscosity_out, xvel0, yvel0)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: celldx(x_min-2:x_max+2), celldy(y_min-2:y_max+2)
  double precision, intent(in) :: density0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: pressure(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: viscosity_out(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision :: ugrad, vgrad, grad2, pgradx, pgrady, pgradx2, pgrady2, grad
  double precision :: ygrad, xgrad, div, strain2, limiter, pgrad, dirx, diry
  integer :: j, k

  do k = y_min, y_max
    do j = x_min, x_max
      ugrad = (xvel0(j+1, k) + xvel0(j+1, k+1)) - (xvel0(j, k) + xvel0(j, k+1))
      vgrad = (yvel0(j, k+1) + yvel0(j+1, k+1)) - (yvel0(j, k) + yvel0(j+1, k))
      div = (celldx(j) * ugrad) + (celldy(k) * vgrad)
      strain2 = 0.5d0 * (xvel0(j, k+1) + xvel0(j+1, k+1) - xvel0(j, k) - xvel0(j+1, k)) &
                / celldy(k) + 0.5d0 * (yvel0(j+1, k) + yvel0(j+1, k+1) - yvel0(j, k) &
                - yvel0(j, k+1)) / celldx(j)
      pgradx = (pressure(j+1, k) - pressure(j-1, k)) / (celldx(j) + celldx(j+1))
      pgrady = (pressure(j, k+1) - pressure(j, k-1)) / (celldy(k) + celldy(k+1))
      pgradx2 = pgradx * pgradx
      pgrady2 = pgrady * pgrady
      limiter = ((0.5d0 * ugrad / celldx(j)) * pgradx2 + (0.5d0 * vgrad / celldy(k)) * pgrady2 &
                 + strain2 * pgradx * pgrady) / max(pgradx2 + pgrady2, 1.0d-16)
      if (limiter > 0.0d0 .or. div >= 0.0d0) then
        viscosity_out(j, k) = 0.0d0
      else
        dirx = 1.0d0
        if (pgradx < 0.0d0) dirx = -1.0d0
        pgradx = dirx * max(1.0d-16, abs(pgradx))
        diry = 1.0d0
        if (pgrady < 0.0d0) diry = -1.0d0
        pgrady = diry * max(1.0d-16, abs(pgrady))
        pgrad = sqrt(pgradx * pgradx + pgrady * pgrady)
        xgrad = abs(celldx(j) * pgrad / pgradx)
        ygrad = abs(celldy(k) * pgrad / pgrady)
        grad = min(xgrad, ygrad)
        grad2 = grad * grad
        viscosity_out(j, k) = 2.0d0 * density0(j, k) * grad2 * limiter * limiter
      end if
    end do
  end do
end subroutine viscosity

subroutine pdv(predict, dt, x_min, x_max, y_min, y_max, xarea, yarea, volume, density0, &
               density1, energy0, energy1, pressure, viscosity, xvel0, xvel1, yvel0, yvel1, &
               volume_change)
  implicit none
  integer, intent(in) :: predict
  double precision, intent(in) :: dt
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: xarea(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(in) :: yarea(x_min-2:x_max+2, y_min-2:y_max+3)
  double precision, intent(in) :: volume(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: density0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: density1(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: energy0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: energy1(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: pressure(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: viscosity(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: xvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: volume_change(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision :: recip_volume, energy_change, right_flux, left_flux, top_flux
  double precision :: bottom_flux, total_flux
  integer :: j, k

  do k = y_min, y_max
    do j = x_min, x_max
      if (predict == 1) then
        left_flux = (xarea(j, k) * (xvel0(j, k) + xvel0(j, k+1) + xvel0(j, k) &
                     + xvel0(j, k+1))) * 0.25d0 * dt * 0.5d0
        right_flux = (xarea(j+1, k) * (xvel0(j+1, k) + xvel0(j+1, k+1) + xvel0(j+1, k) &
                      + xvel0(j+1, k+1))) * 0.25d0 * dt * 0.5d0
        bottom_flux = (yarea(j, k) * (yvel0(j, k) + yvel0(j+1, k) + yvel0(j, k) &
                       + yvel0(j+1, k))) * 0.25d0 * dt * 0.5d0
        top_flux = (yarea(j, k+1) * (yvel0(j, k+1) + yvel0(j+1, k+1) + yvel0(j, k+1) &
                    + yvel0(j+1, k+1))) * 0.25d0 * dt * 0.5d0
      else
        left_flux = (xarea(j, k) * (xvel0(j, k) + xvel0(j, k+1) + xvel1(j, k) &
                     + xvel1(j, k+1))) * 0.25d0 * dt
        right_flux = (xarea(j+1, k) * (xvel0(j+1, k) + xvel0(j+1, k+1) + xvel1(j+1, k) &
                      + xvel1(j+1, k+1))) * 0.25d0 * dt
        bottom_flux = (yarea(j, k) * (yvel0(j, k) + yvel0(j+1, k) + yvel1(j, k) &
                       + yvel1(j+1, k))) * 0.25d0 * dt
        top_flux = (yarea(j, k+1) * (yvel0(j, k+1) + yvel0(j+1, k+1) + yvel1(j, k+1) &
                    + yvel1(j+1, k+1))) * 0.25d0 * dt
      end if
      total_flux = right_flux - left_flux + top_flux - bottom_flux
      volume_change(j, k) = volume(j, k) / (volume(j, k) + total_flux)
      recip_volume = 1.0d0 / volume(j, k)
      energy_change = (pressure(j, k) / density0(j, k) + viscosity(j, k) / density0(j, k)) &
                      * total_flux * recip_volume
      energy1(j, k) = energy0(j, k) - energy_change
      density1(j, k) = density0(j, k) * volume_change(j, k)
    end do
  end do
end subroutine pdv

subroutine field_summary(x_min, x_max, y_min, y_max, volume, density0, energy0, pressure, &
                         xvel0, yvel0, vol, mass, ie, ke, press)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: volume(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: density0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: energy0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: pressure(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: vol, mass, ie, ke, press
  double precision :: vsqrd, cell_vol, cell_mass
  integer :: j, k, jv, kv

  vol = 0.0d0
  mass = 0.0d0
  ie = 0.0d0
  ke = 0.0d0
  press = 0.0d0
  do k = y_min, y_max
    do j = x_min, x_max
      vsqrd = 0.0d0
      do kv = 0, 1
        do jv = 0, 1
          vsqrd = vsqrd + 0.25d0 * (xvel0(j+jv, k+kv)**2 + yvel0(j+jv, k+kv)**2)
        end do
      end do
      cell_vol = volume(j, k)
      cell_mass = cell_vol * density0(j, k)
      vol = vol + cell_vol
      mass = mass + cell_mass
      ie = ie + cell_mass * energy0(j, k)
      ke = ke + cell_mass * 0.5d0 * vsqrd
      press = press + cell_vol * pressure(j, k)
    end do
  end do
end subroutine field_summary
