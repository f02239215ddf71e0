! The physics module of the multi-file sample: kinds, constants, a derived
! type and module variables, in a file of its own as real projects have them.
! f2loopy finds it through -I include (or the CMake INCLUDE_DIRS).
module physics
  implicit none
  integer, parameter :: jprb = selected_real_kind(13, 300)
  real(jprb), parameter :: rtt = 273.16_jprb          ! a constant

  ! parameters of the scheme, set by the caller (IFS style)
  type tparams
    real(jprb) :: relax = 0.5_jprb
    real(jprb) :: weights(3) = [0.25_jprb, 0.5_jprb, 0.25_jprb]
  end type tparams

  ! module variables: a table with an initial value, a counter, a scalar
  real(jprb) :: offset(0:3) = [0.0_jprb, 1.0_jprb, 2.0_jprb, 3.0_jprb]
  integer :: sweeps = 0
  real(jprb) :: last_max
end module physics
