! More kernels of a 2-D staggered-grid hydrodynamics step in the style of
! CloverLeaf (see hydro_kernels.f90): an ideal-gas equation of state, the
! node acceleration, face fluxes, a cell advection sweep whose direction is
! a run-time switch, a momentum advection sweep with per-node scalars, the
! time-step control (a minimum with its location) and a halo update whose
! depth is an argument.  Each `do k; do j` nest is one that an OpenMP
! version runs in parallel (calc_dt's with a reduction).
!
!   f2loopy check --transform auto --size x_min=1 --size x_max=11 \
!     --size y_min=1 --size y_max=7 samples/hydro2d/hydro_steps.f90

subroutine ideal_gas(x_min, x_max, y_min, y_max, density, energy, pressure, soundspeed)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: density(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: energy(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: pressure(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: soundspeed(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision :: sound_speed_squared, v, pressurebyenergy, pressurebyvolume
  integer :: j, k

  do k = y_min, y_max
    do j = x_min, x_max
      v = 1.0d0 / density(j, k)
      pressure(j, k) = (1.4d0 - 1.0d0) * density(j, k) * energy(j, k)
      pressurebyenergy = (1.4d0 - 1.0d0) * density(j, k)
      pressurebyvolume = -density(j, k) * pressure(j, k)
      sound_speed_squared = v * v * (pressure(j, k) * pressurebyenergy - pressurebyvolume)
      soundspeed(j, k) = sqrt(sound_speed_squared)
    end do
  end do
end subroutine ideal_gas

subroutine accelerate(x_min, x_max, y_min, y_max, dt, xarea, yarea, volume, density0, &
                      pressure, viscosity, xvel0, yvel0, xvel1, yvel1)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: dt
  double precision, intent(in) :: xarea(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(in) :: yarea(x_min-2:x_max+2, y_min-2:y_max+3)
  double precision, intent(in) :: volume(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: density0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: pressure(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: viscosity(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: xvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: yvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision :: nodal_mass, halfdt, stepbymass
  integer :: j, k

  halfdt = 0.5d0 * dt
  do k = y_min, y_max + 1
    do j = x_min, x_max + 1
      nodal_mass = (density0(j-1, k-1) * volume(j-1, k-1) + density0(j, k-1) * volume(j, k-1) &
                    + density0(j, k) * volume(j, k) + density0(j-1, k) * volume(j-1, k)) &
                   * 0.25d0
      stepbymass = halfdt / nodal_mass
      xvel1(j, k) = xvel0(j, k) - stepbymass * (xarea(j, k) * (pressure(j, k) &
                    - pressure(j-1, k)) + xarea(j, k-1) * (pressure(j, k-1) - pressure(j-1, k-1)))
      yvel1(j, k) = yvel0(j, k) - stepbymass * (yarea(j, k) * (pressure(j, k) &
                    - pressure(j, k-1)) + yarea(j-1, k) * (pressure(j-1, k) - pressure(j-1, k-1)))
      xvel1(j, k) = xvel1(j, k) - stepbymass * (xarea(j, k) * (viscosity(j, k) &
                    - viscosity(j-1, k)) + xarea(j, k-1) * (viscosity(j, k-1) &
                    - viscosity(j-1, k-1)))
      yvel1(j, k) = yvel1(j, k) - stepbymass * (yarea(j, k) * (viscosity(j, k) &
                    - viscosity(j, k-1)) + yarea(j-1, k) * (viscosity(j-1, k) &
                    - viscosity(j-1, k-1)))
    end do
  end do
end subroutine accelerate

subroutine flux_calc(x_min, x_max, y_min, y_max, dt, xarea, yarea, xvel0, yvel0, xvel1, &
                     yvel1, vol_flux_x, vol_flux_y)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: dt
  double precision, intent(in) :: xarea(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(in) :: yarea(x_min-2:x_max+2, y_min-2:y_max+3)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: xvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: vol_flux_x(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(out) :: vol_flux_y(x_min-2:x_max+2, y_min-2:y_max+3)
  integer :: j, k

  do k = y_min, y_max
    do j = x_min, x_max + 1
      vol_flux_x(j, k) = 0.25d0 * dt * xarea(j, k) &
                         * (xvel0(j, k) + xvel0(j, k+1) + xvel1(j, k) + xvel1(j, k+1))
    end do
  end do
  do k = y_min, y_max + 1
    do j = x_min, x_max
      vol_flux_y(j, k) = 0.25d0 * dt * yarea(j, k) &
                         * (yvel0(j, k) + yvel0(j+1, k) + yvel1(j, k) + yvel1(j+1, k))
    end do
  end do
end subroutine flux_calc

! One sweep of cell advection: dir 1 along x, 2 along y.  The upwind cell
! and the limiter's scalars are chosen per face under the flux's sign.
subroutine advec_cell(dir, x_min, x_max, y_min, y_max, vol_flux_x, vol_flux_y, density1, &
                      energy1, mass_flux, ener_flux)
  implicit none
  integer, intent(in) :: dir, x_min, x_max, y_min, y_max
  double precision, intent(in) :: vol_flux_x(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(in) :: vol_flux_y(x_min-2:x_max+2, y_min-2:y_max+3)
  double precision, intent(in) :: density1(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: energy1(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(out) :: mass_flux(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: ener_flux(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision :: sigmat, sigmam, diffuw, diffdw, limiter, vflux
  integer :: j, k, upwind, donor, downwind, dif

  if (dir == 1) then
    do k = y_min, y_max
      do j = x_min, x_max + 1
        vflux = vol_flux_x(j, k)
        if (vflux > 0.0d0) then
          upwind = j - 2
          donor = j - 1
          downwind = j
          dif = donor
        else
          upwind = min(j + 1, x_max + 2)
          donor = j
          downwind = j - 1
          dif = upwind
        end if
        sigmat = abs(vflux) / max(density1(donor, k), 1.0d-10)
        diffuw = density1(donor, k) - density1(upwind, k)
        diffdw = density1(downwind, k) - density1(donor, k)
        if (diffuw * diffdw > 0.0d0) then
          limiter = (1.0d0 - sigmat) * sign(1.0d0, diffdw) &
                    * min(abs(diffuw), abs(diffdw)) / 6.0d0
        else
          limiter = 0.0d0
        end if
        mass_flux(j, k) = vflux * (density1(donor, k) + limiter)
        sigmam = abs(mass_flux(j, k)) / max(density1(donor, k), 1.0d-10)
        ener_flux(j, k) = mass_flux(j, k) * (energy1(donor, k) &
                          + (1.0d0 - sigmam) * (energy1(dif, k) - energy1(donor, k)) * 0.5d0)
      end do
    end do
  else
    do k = y_min, y_max + 1
      do j = x_min, x_max
        vflux = vol_flux_y(j, k)
        if (vflux > 0.0d0) then
          upwind = k - 2
          donor = k - 1
          downwind = k
          dif = donor
        else
          upwind = min(k + 1, y_max + 2)
          donor = k
          downwind = k - 1
          dif = upwind
        end if
        sigmat = abs(vflux) / max(density1(j, donor), 1.0d-10)
        diffuw = density1(j, donor) - density1(j, upwind)
        diffdw = density1(j, downwind) - density1(j, donor)
        if (diffuw * diffdw > 0.0d0) then
          limiter = (1.0d0 - sigmat) * sign(1.0d0, diffdw) &
                    * min(abs(diffuw), abs(diffdw)) / 6.0d0
        else
          limiter = 0.0d0
        end if
        mass_flux(j, k) = vflux * (density1(j, donor) + limiter)
        sigmam = abs(mass_flux(j, k)) / max(density1(j, donor), 1.0d-10)
        ener_flux(j, k) = mass_flux(j, k) * (energy1(j, donor) &
                          + (1.0d0 - sigmam) * (energy1(j, dif) - energy1(j, donor)) * 0.5d0)
      end do
    end do
  end if
end subroutine advec_cell

! Momentum advection along x: the node's mass flux and its upwind velocity
! difference, with the node scalars chosen per node.
subroutine advec_mom(x_min, x_max, y_min, y_max, mass_flux_x, node_mass, vel1, mom_flux)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: mass_flux_x(x_min-2:x_max+3, y_min-2:y_max+2)
  double precision, intent(in) :: node_mass(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: vel1(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: mom_flux(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision :: node_flux, sigma, width, vdiffuw, vdiffdw, auw, adw, wind, limiter
  integer :: j, k, upwind, donor, downwind, dif

  do k = y_min, y_max + 1
    do j = x_min - 1, x_max + 1
      node_flux = 0.25d0 * (mass_flux_x(j, k-1) + mass_flux_x(j, k) &
                            + mass_flux_x(j+1, k-1) + mass_flux_x(j+1, k))
      if (node_flux < 0.0d0) then
        upwind = j + 2
        donor = j + 1
        downwind = j
        dif = donor
      else
        upwind = j - 1
        donor = j
        downwind = j + 1
        dif = upwind
      end if
      sigma = abs(node_flux) / max(node_mass(donor, k), 1.0d-10)
      width = 1.0d0
      vdiffuw = vel1(donor, k) - vel1(upwind, k)
      vdiffdw = vel1(downwind, k) - vel1(donor, k)
      limiter = 0.0d0
      if (vdiffuw * vdiffdw > 0.0d0) then
        auw = abs(vdiffuw)
        adw = abs(vdiffdw)
        wind = 1.0d0
        if (vdiffdw <= 0.0d0) wind = -1.0d0
        limiter = wind * min(width * ((2.0d0 - sigma) * adw / width &
                  + (1.0d0 + sigma) * auw / width) / 6.0d0, auw, adw)
      end if
      mom_flux(j, k) = node_flux * (vel1(donor, k) + (1.0d0 - sigma) * limiter) &
                       + 0.0d0 * vel1(dif, k)
    end do
  end do
end subroutine advec_mom

! The stable time step: the smallest over the cells, and where it is.
subroutine calc_dt(x_min, x_max, y_min, y_max, celldx, celldy, soundspeed, viscosity, &
                   density0, xvel0, yvel0, dt_min_val, jldt, kldt)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max
  double precision, intent(in) :: celldx(x_min-2:x_max+2), celldy(y_min-2:y_max+2)
  double precision, intent(in) :: soundspeed(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: viscosity(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: density0(x_min-2:x_max+2, y_min-2:y_max+2)
  double precision, intent(in) :: xvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(in) :: yvel0(x_min-2:x_max+3, y_min-2:y_max+3)
  double precision, intent(out) :: dt_min_val
  integer, intent(out) :: jldt, kldt
  double precision :: dsx, dsy, cc, dtct, dtut, dtvt, div, dv1, dv2, dtdivt, dt_cell
  integer :: j, k

  dt_min_val = 1.0d10
  jldt = x_min
  kldt = y_min
  do k = y_min, y_max
    do j = x_min, x_max
      dsx = celldx(j)
      dsy = celldy(k)
      cc = soundspeed(j, k) * soundspeed(j, k)
      cc = cc + 2.0d0 * viscosity(j, k) / density0(j, k)
      cc = max(sqrt(cc), 1.0d-8)
      dtct = 0.7d0 * min(dsx, dsy) / cc
      div = 0.0d0
      dv1 = (xvel0(j, k) + xvel0(j, k+1)) * dsy
      dv2 = (xvel0(j+1, k) + xvel0(j+1, k+1)) * dsy
      div = div + dv2 - dv1
      dtut = 0.5d0 * dsx * dsy / max(abs(dv1), abs(dv2), 1.0d-5 * dsx * dsy)
      dv1 = (yvel0(j, k) + yvel0(j+1, k)) * dsx
      dv2 = (yvel0(j, k+1) + yvel0(j+1, k+1)) * dsx
      div = div + dv2 - dv1
      dtvt = 0.5d0 * dsx * dsy / max(abs(dv1), abs(dv2), 1.0d-5 * dsx * dsy)
      div = div / (2.0d0 * dsx * dsy)
      if (div < -1.0d-16) then
        dtdivt = -0.7d0 / div
      else
        dtdivt = 1.0d10
      end if
      dt_cell = min(dtct, dtut, dtvt, dtdivt)
      if (dt_cell < dt_min_val) then
        dt_min_val = dt_cell
        jldt = j
        kldt = k
      end if
    end do
  end do
end subroutine calc_dt

! The halo cells of a field: copies of the cells inside, to a depth given
! at run time, at the left and right edges, then at the bottom and top.
subroutine update_halo(x_min, x_max, y_min, y_max, depth, field)
  implicit none
  integer, intent(in) :: x_min, x_max, y_min, y_max, depth
  double precision, intent(inout) :: field(x_min-2:x_max+2, y_min-2:y_max+2)
  integer :: j, k

  do k = y_min - depth, y_max + depth
    do j = 1, depth
      field(x_min - j, k) = field(x_min + j - 1, k)
      field(x_max + j, k) = field(x_max + 1 - j, k)
    end do
  end do
  do k = 1, depth
    do j = x_min - depth, x_max + depth
      field(j, y_min - k) = field(j, y_min + k - 1)
      field(j, y_max + k) = field(j, y_max + 1 - k)
    end do
  end do
end subroutine update_halo
