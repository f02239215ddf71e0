! The MPI-aware part of the f2loopy runtime (optional): choose the OpenCL device
! of this process from an MPI communicator.  The runtime library itself does not
! depend on MPI; this module is compiled with the program's MPI (CMake:
! f2loopy_link_mpi(target) in F2Loopy.cmake).
!
!   use mpi
!   use f2loopy_mpi
!   call MPI_Init(ierr)
!   call f2l_init_mpi(MPI_COMM_WORLD)   ! device: rank on this node modulo the devices
!
! Programs that `use mpi_f08` pass comm%mpi_val.  Without this module, a program
! computes the rank itself and calls f2l_init(local_rank=...) of f2loopy_runtime.
module f2loopy_mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi
  use f2loopy_runtime, only: f2l_init, f2l_to_string, F2L_ERROR_ARGUMENT
  implicit none
  private
  public :: f2l_init_mpi, f2l_node_rank

  interface
    function c_set_error(code, message) bind(C, name="f2l_set_error") result(st)
      import :: c_int, c_char
      integer(c_int), value :: code
      character(kind=c_char), dimension(*), intent(in) :: message
      integer(c_int) :: st
    end function
  end interface

contains

  !> The rank of this process among the processes of comm on its node (those
  !> that share memory: MPI_Comm_split_type with MPI_COMM_TYPE_SHARED).
  !> Collective over comm.  ierror: MPI's error code (MPI_SUCCESS on success).
  integer function f2l_node_rank(comm, ierror) result(rank)
    integer, intent(in) :: comm
    integer, intent(out), optional :: ierror
    integer :: node, ierr, ignored
    rank = -1
    call MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
    if (ierr == MPI_SUCCESS) then
      call MPI_Comm_rank(node, rank, ierr)
      call MPI_Comm_free(node, ignored)
    end if
    if (present(ierror)) ierror = ierr
  end function

  !> Create the OpenCL context of this process on the device of its rank among
  !> the processes of comm on its node, modulo the devices of the platform
  !> (F2LOOPY_DEVICE=P:D still pins a device).  Collective over comm; call it
  !> after MPI_Init and before any other f2loopy procedure.  Errors as in
  !> f2loopy_runtime: into status if present, else a message and stop 1.
  subroutine f2l_init_mpi(comm, status)
    integer, intent(in) :: comm
    integer, intent(out), optional :: status
    integer :: rank, ierr, st
    rank = f2l_node_rank(comm, ierr)
    if (ierr /= MPI_SUCCESS) then
      st = int(c_set_error(int(F2L_ERROR_ARGUMENT, c_int), "f2l_init_mpi: " // &
               "MPI_Comm_split_type or MPI_Comm_rank failed with MPI error " // &
               f2l_to_string(ierr) // c_null_char))
      if (present(status)) then
        status = st
      else
        write(error_unit, '(a)') "f2loopy: error: f2l_init_mpi: MPI_Comm_split_type or " // &
          "MPI_Comm_rank failed with MPI error " // f2l_to_string(ierr)
        stop 1
      end if
      return
    end if
    call f2l_init(local_rank=rank, status=status)
  end subroutine

end module f2loopy_mpi
