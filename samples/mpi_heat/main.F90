! Heat equation on the unit square, explicit Euler steps of a 5-point stencil,
! with MPI: the grid's columns (the last axis, j) are split into one block per
! rank, and every step first exchanges the halo columns with the neighbours.
!
! Built twice by CMakeLists.txt from this file: mpi_heat_fortran calls the
! Fortran subroutine heat_step; mpi_heat_opencl (USE_OPENCL defined) calls
! heat_cols_cl, its OpenCL translation, on the device of its rank (f2l_init_mpi:
! the rank on its node modulo the devices).  There the fields stay on the device
! for the whole run, and a step overlaps its halo exchange with most of its work:
! it computes the two edge columns of the new field first, downloads them, starts
! the interior columns and, while the device computes those, sends the edges with
! MPI; then it uploads the two halo columns it received.  Nothing else moves.
!
! Usage: mpirun -np P mpi_heat_opencl|mpi_heat_fortran [nx ny steps [file]]
! Rank 0 gathers the field, prints its checksum and a few values with all their
! digits, and writes the nx+2 x ny interior columns (raw doubles) to file.  With
! more than 2 steps it also prints the seconds per step of the slowest rank,
! timed from the third step on (the first two build the OpenCL program): the
! mean (the time of all those steps over their number) and the median of the
! single steps (each rank's median, the largest of them).
program mpi_heat
  use mpi
#ifdef USE_OPENCL
  use f2loopy_mpi
  use heat_cols_cl_mod
#endif
  implicit none
  integer :: nx = 96, ny = 64, steps = 200
  integer :: ierr, rank, nranks, left, right, jlo, nyl, step, i, j, r
  integer, allocatable :: counts(:), displs(:)
  double precision, allocatable :: u(:, :), unew(:, :), field(:, :), times(:)
  double precision :: dt, x, y, t0, seconds, slowest, tstep, median, slowest_median
  character(len=256) :: arg, out
  character(len=:), allocatable :: device
#ifdef USE_OPENCL
  integer :: local_rank, dev, ndev
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  out = ""
  if (command_argument_count() >= 3) then
    call get_command_argument(1, arg); read(arg, *) nx
    call get_command_argument(2, arg); read(arg, *) ny
    call get_command_argument(3, arg); read(arg, *) steps
  end if
  if (command_argument_count() >= 4) call get_command_argument(4, out)
  if (ny < nranks) then
    if (rank == 0) print '(a)', "mpi_heat: ny must be at least the number of ranks"
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if

  ! this rank's columns jlo .. jlo+nyl-1 of 1 .. ny (the first ranks take one more)
  allocate(counts(0:nranks-1), displs(0:nranks-1))
  do r = 0, nranks - 1
    counts(r) = ny / nranks
    if (r < mod(ny, nranks)) counts(r) = counts(r) + 1
  end do
  nyl = counts(rank)
  jlo = 1 + sum(counts(0:rank-1))
  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= nranks) right = MPI_PROC_NULL

  ! local column jj is global column jlo - 1 + jj (halo: jj = 0 and nyl + 1)
  allocate(u(0:nx+1, 0:nyl+1), unew(0:nx+1, 0:nyl+1))
  dt = 0.2d0     ! dt / h**2, stable below 0.25
  do j = 0, nyl + 1
    do i = 0, nx + 1
      x = dble(i) / (nx + 1)
      y = dble(jlo - 1 + j) / (ny + 1)
      u(i, j) = exp(-40 * ((x - 0.3d0)**2 + (y - 0.6d0)**2))
      if (i == 0) u(i, j) = 1
    end do
  end do
  unew = u

  allocate(times(2 * ((max(steps, 0) + 1) / 2)))
  times = 0
#ifdef USE_OPENCL
  call f2l_init_mpi(MPI_COMM_WORLD)
  call f2l_device_choice(local_rank, dev, ndev)
  device = f2l_device_name()
  print '(a, i0, a, i0, a, i0, a, i0, a)', "rank ", rank, " (local rank ", local_rank, &
    "): device ", dev, " of ", ndev, ": " // device
  call f2l_upload(u)
  call f2l_upload(unew)
#else
  device = "none (Fortran)"
#endif
  call exchange(u)
  t0 = MPI_Wtime()
  tstep = t0
  do step = 1, steps, 2
    if (step == 3) call start_clock()
    call advance(u, unew)
    call lap(step)
    call advance(unew, u)
    call lap(step + 1)
  end do
#ifdef USE_OPENCL
  call f2l_sync()
#endif
  seconds = MPI_Wtime() - t0
  median = 0
  if (steps > 2) median = median_of(times(3:2 * ((steps + 1) / 2)))
  call MPI_Reduce(median, slowest_median, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, &
                  MPI_COMM_WORLD, ierr)
#ifdef USE_OPENCL
  call f2l_download(u)
  call f2l_release(u)
  call f2l_release(unew)
#endif
  call MPI_Reduce(seconds, slowest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)

  ! rank 0 gathers the interior columns
  allocate(field(0:nx+1, ny))
  displs(0) = 0
  do r = 1, nranks - 1
    displs(r) = displs(r - 1) + counts(r - 1) * (nx + 2)
  end do
  call MPI_Gatherv(u(:, 1:nyl), nyl * (nx + 2), MPI_DOUBLE_PRECISION, field, &
                   counts * (nx + 2), displs, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a, i0, a, i0, a, i0, a, i0)', "grid ", nx, " x ", ny, ", steps ", &
      2 * ((steps + 1) / 2), ", ranks ", nranks
    print '(a, es25.17)', "sum ", sum(field)
    print '(a, es25.17)', "center ", field(nx / 2, ny / 2)
    print '(a, es25.17)', "max ", maxval(field(1:nx, :))
    if (steps > 2) then
      print '(a, es12.5)', "seconds per step ", slowest / (2 * ((steps + 1) / 2) - 2)
      print '(a, es12.5)', "median seconds per step ", slowest_median
    end if
    if (len_trim(out) > 0) then
      open(10, file=trim(out), access="stream", form="unformatted", status="replace")
      write(10) field
      close(10)
    end if
  end if
  call MPI_Finalize(ierr)

contains

  !> Start timing here, once every rank got here with its device idle.
  subroutine start_clock()
    integer :: ierr
#ifdef USE_OPENCL
    call f2l_sync()
#endif
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    tstep = t0
  end subroutine

  !> The host time of step k (from the end of the step before).  Every step
  !> waits for the device (its edge columns' download), so in the steady state
  !> this is the time of a step on the device.
  subroutine lap(k)
    integer, intent(in) :: k
    double precision :: now
    now = MPI_Wtime()
    if (k <= size(times)) times(k) = now - tstep
    tstep = now
  end subroutine

  !> The median of x (sorted in a copy).
  function median_of(x) result(m)
    double precision, intent(in) :: x(:)
    double precision :: m, s(size(x)), v
    integer :: i, k
    s = x
    do i = 2, size(s)
      v = s(i)
      k = i - 1
      do while (k >= 1)
        if (s(k) <= v) exit
        s(k + 1) = s(k)
        k = k - 1
      end do
      s(k + 1) = v
    end do
    m = s((size(s) + 1) / 2)
    if (mod(size(s), 2) == 0) m = (s(size(s) / 2) + s(size(s) / 2 + 1)) / 2
  end function

  !> One step: b from a, then b's halo columns from the neighbours.  The edge
  !> columns come first; on the device the interior columns run while their
  !> copies travel (the queue runs in order: the downloads wait for the edges
  !> only, and the uploads for the interior).
  subroutine advance(a, b)
    ! contiguous: else the compiler may pass the kernel a copy of a or b, and
    ! the kernel would run on that copy, not on the device-resident array
    double precision, intent(in), contiguous :: a(0:, 0:)
    double precision, intent(inout), contiguous :: b(0:, 0:)
#ifdef USE_OPENCL
    call heat_cols_cl(nx, nyl, 1, 1, dt, a, b)
    if (nyl > 1) call heat_cols_cl(nx, nyl, nyl, nyl, dt, a, b)
    call f2l_download_part(b(:, 1:1))
    if (nyl > 1) call f2l_download_part(b(:, nyl:nyl))
    if (nyl > 2) call heat_cols_cl(nx, nyl, 2, nyl - 1, dt, a, b)
#else
    call heat_cols(nx, nyl, 1, 1, dt, a, b)
    if (nyl > 1) call heat_cols(nx, nyl, nyl, nyl, dt, a, b)
    if (nyl > 2) call heat_cols(nx, nyl, 2, nyl - 1, dt, a, b)
#endif
    call swap_halos(b)
  end subroutine

  !> Fill the halo columns of a (0 and nyl+1) with the neighbours' edge columns.
  !> Where a is device-resident, only those four columns move between host and device.
  subroutine exchange(a)
    double precision, intent(inout), contiguous :: a(0:, 0:)
#ifdef USE_OPENCL
    call f2l_download_part(a(:, 1:1))
    call f2l_download_part(a(:, nyl:nyl))
#endif
    call swap_halos(a)
  end subroutine

  !> Send the edge columns of a (on the host) to the neighbours, receive its
  !> halo columns and, where a is device-resident, upload those.
  subroutine swap_halos(a)
    double precision, intent(inout), contiguous :: a(0:, 0:)
    integer :: ierr
    call MPI_Sendrecv(a(:, nyl), nx + 2, MPI_DOUBLE_PRECISION, right, 1, &
                      a(:, 0), nx + 2, MPI_DOUBLE_PRECISION, left, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(a(:, 1), nx + 2, MPI_DOUBLE_PRECISION, left, 2, &
                      a(:, nyl + 1), nx + 2, MPI_DOUBLE_PRECISION, right, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
#ifdef USE_OPENCL
    if (left /= MPI_PROC_NULL) call f2l_upload_part(a(:, 0:0))
    if (right /= MPI_PROC_NULL) call f2l_upload_part(a(:, nyl + 1:nyl + 1))
#endif
  end subroutine

end program mpi_heat
