! Fortran interface of the f2loopy runtime (see f2loopy_runtime.h and README.md).
!
! What programs use directly:
!   call f2l_upload(u [, status])     make u device-resident (copy it to the device)
!   call f2l_download(u [, status])   copy the device copy back into u (u stays resident)
!   call f2l_release(u [, status])    forget the device copy (no copy back)
!   call f2l_upload_part(u(:, 1:2) [, status])      copy a contiguous section of a
!   call f2l_download_part(u(:, 9:10) [, status])   device-resident array to/from the device
!   call f2l_upload(u, first, count [, status])     the same for elements first ..
!   call f2l_download(u, first, count [, status])   first+count-1 of u (array element order)
!   call f2l_init([local_rank] [, status])   choose the device now (for this node-local rank)
!   call f2l_device_choice(local_rank, index, count [, status])   the device chosen
!   call f2l_sync([status])           wait for every kernel launched so far
!   f2l_is_resident(u)                .true. if u is device-resident
!   f2l_error_message()               message of the last error of this thread
!   f2l_device_name()                 the OpenCL device in use
! Every procedure with an optional status sets it (F2L_OK = 0 on success); when
! the caller does not pass status, an error stops the program with its message (stop 1).
!
! The type f2l_call is what the generated glue (NAME_cl.f90) uses to launch kernels.
module f2loopy_runtime
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  integer, parameter, public :: F2L_OK = 0, F2L_ERROR_NO_DEVICE = 1, F2L_ERROR_OPENCL = 2, &
    F2L_ERROR_BUILD = 3, F2L_ERROR_ARGUMENT = 4, F2L_ERROR_RESIDENT = 5, &
    F2L_ERROR_HOST_MEMORY = 6, F2L_ERROR_STOP = 7

  public :: f2l_upload, f2l_download, f2l_release, f2l_is_resident, f2l_sync
  public :: f2l_error_message, f2l_device_name, f2l_resident_arrays, f2l_to_string
  public :: f2l_floordiv, f2l_shutdown
  public :: f2l_init, f2l_device_choice, f2l_upload_part, f2l_download_part

  ! {{{ the C library

  interface
    function c_error_message() bind(C, name="f2l_error_message") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_set_error(code, message) bind(C, name="f2l_set_error") result(st)
      import :: c_int, c_char
      integer(c_int), value :: code
      character(kind=c_char), dimension(*), intent(in) :: message
      integer(c_int) :: st
    end function
    subroutine c_prefix_error(prefix) bind(C, name="f2l_prefix_error")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: prefix
    end subroutine
    subroutine c_clear_error() bind(C, name="f2l_clear_error")
    end subroutine
    function c_device_description(buf, size) bind(C, name="f2l_device_description") result(st)
      import :: c_int, c_char, c_size_t
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: size
      integer(c_int) :: st
    end function
    function c_finish() bind(C, name="f2l_finish") result(st)
      import :: c_int
      integer(c_int) :: st
    end function
    subroutine c_shutdown() bind(C, name="f2l_shutdown")
    end subroutine
    function c_init() bind(C, name="f2l_init") result(st)
      import :: c_int
      integer(c_int) :: st
    end function
    function c_init_rank(local_rank) bind(C, name="f2l_init_rank") result(st)
      import :: c_int
      integer(c_int), value :: local_rank
      integer(c_int) :: st
    end function
    function c_device_choice(local_rank, index, count) bind(C, name="f2l_device_choice") &
        result(st)
      import :: c_int
      integer(c_int), intent(out) :: local_rank, index, count
      integer(c_int) :: st
    end function
    function c_resident_upload_part(host, offset, nbytes) &
        bind(C, name="f2l_resident_upload_part") result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: host
      integer(c_size_t), value :: offset, nbytes
      integer(c_int) :: st
    end function
    function c_resident_download_part(host, offset, nbytes) &
        bind(C, name="f2l_resident_download_part") result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: host
      integer(c_size_t), value :: offset, nbytes
      integer(c_int) :: st
    end function
    function c_kernel_cached(kernel, source, options, name) bind(C, name="f2l_kernel_cached") &
        result(st)
      import :: c_int, c_char, c_ptr
      type(c_ptr), intent(inout) :: kernel
      type(c_ptr), value :: source
      character(kind=c_char), dimension(*), intent(in) :: options, name
      integer(c_int) :: st
    end function
    function c_kernel_signature(kernel, signature) bind(C, name="f2l_kernel_signature") &
        result(st)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: kernel
      character(kind=c_char), intent(in) :: signature(*)
      integer(c_int) :: st
    end function
    function c_kernel_current(kernel) bind(C, name="f2l_kernel_current") result(valid)
      import :: c_int, c_ptr
      type(c_ptr), value :: kernel
      integer(c_int) :: valid
    end function
    function c_resident_upload(host, nbytes) bind(C, name="f2l_resident_upload") result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: host
      integer(c_size_t), value :: nbytes
      integer(c_int) :: st
    end function
    function c_resident_download(host, nbytes) bind(C, name="f2l_resident_download") result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: host
      integer(c_size_t), value :: nbytes
      integer(c_int) :: st
    end function
    function c_resident_release(host) bind(C, name="f2l_resident_release") result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: host
      integer(c_int) :: st
    end function
    function c_resident_query(host) bind(C, name="f2l_resident_query") result(yes)
      import :: c_int, c_ptr
      type(c_ptr), value :: host
      integer(c_int) :: yes
    end function
    function c_resident_query_size(host, nbytes) bind(C, name="f2l_resident_query_size") &
        result(yes)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: host
      integer(c_size_t), value :: nbytes
      integer(c_int) :: yes
    end function
    function c_resident_count() bind(C, name="f2l_resident_count") result(n)
      import :: c_int
      integer(c_int) :: n
    end function
    function c_launch_begin(kernel, launch) bind(C, name="f2l_launch_begin") result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: kernel
      type(c_ptr), intent(out) :: launch
      integer(c_int) :: st
    end function
    function c_launch_value(launch, index, value, size) bind(C, name="f2l_launch_value") &
        result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: launch, value
      integer(c_int), value :: index
      integer(c_size_t), value :: size
      integer(c_int) :: st
    end function
    function c_launch_array(launch, index, name, host, nbytes, written) &
        bind(C, name="f2l_launch_array") result(st)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: launch, host
      integer(c_int), value :: index, written
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: nbytes
      integer(c_int) :: st
    end function
    function c_launch_array_mapped(launch, index, name, host, elem_size, ndim, extents, &
        nterms, terms, device_elems, written) bind(C, name="f2l_launch_array_mapped") result(st)
      import :: c_int, c_ptr, c_size_t, c_char, c_int64_t
      type(c_ptr), value :: launch, host
      integer(c_int), value :: index, ndim, nterms, written
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: elem_size
      integer(c_int64_t), dimension(*), intent(in) :: extents, terms
      integer(c_int64_t), value :: device_elems
      integer(c_int) :: st
    end function
    function c_launch_scratch(launch, index, nbytes) bind(C, name="f2l_launch_scratch") &
        result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: launch
      integer(c_int), value :: index
      integer(c_size_t), value :: nbytes
      integer(c_int) :: st
    end function
    function c_launch_scalar(launch, index, host, size) bind(C, name="f2l_launch_scalar") &
        result(st)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: launch, host
      integer(c_int), value :: index
      integer(c_size_t), value :: size
      integer(c_int) :: st
    end function
    function c_launch_run(launch, groups, local) bind(C, name="f2l_launch_run") result(st)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: launch
      integer(c_int64_t), dimension(3), intent(in) :: groups, local
      integer(c_int) :: st
    end function
    function c_launch_enqueue(launch, kernel, slots, nslots, groups, local) &
        bind(C, name="f2l_launch_enqueue") result(st)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: launch, kernel
      integer(c_int), dimension(*), intent(in) :: slots
      integer(c_int), value :: nslots
      integer(c_int64_t), dimension(3), intent(in) :: groups, local
      integer(c_int) :: st
    end function
    function c_launch_complete(launch) bind(C, name="f2l_launch_complete") result(st)
      import :: c_int, c_ptr
      type(c_ptr), value :: launch
      integer(c_int) :: st
    end function
    subroutine c_launch_end(launch) bind(C, name="f2l_launch_end")
      import :: c_ptr
      type(c_ptr), value :: launch
    end subroutine
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

  ! }}}

  ! {{{ launching kernels (used by the generated glue)

  !> One kernel launch.  Every step does nothing once a step has failed; finish
  !> releases what the launch holds and hands the status to the caller.
  type, public :: f2l_call
    integer :: status = F2L_OK
    type(c_ptr) :: launch = c_null_ptr
    character(len=:), allocatable :: caller
    ! the program and its options, for the kernels of a split kernel's launches
    type(c_ptr) :: source = c_null_ptr
    character(len=:), allocatable :: options
  contains
    procedure :: begin => call_begin
    procedure :: value => call_value
    procedure :: array => call_array
    procedure :: array_mapped => call_array_mapped
    procedure :: scalar => call_scalar
    procedure :: scratch => call_scratch
    procedure :: run => call_run
    procedure :: launch_kernel => call_launch_kernel
    procedure :: complete => call_complete
    procedure :: fail => call_fail
    procedure :: finish => call_finish
  end type

  ! }}}

  interface f2l_upload
    module procedure upload_range_i1, upload_range_i2, upload_range_i4, upload_range_i8, &
      upload_range_r4, upload_range_r8, upload_range_c4, upload_range_c8, upload_range_l
    module procedure upload_i1, upload_i2, upload_i4, upload_i8, upload_r4, upload_r8, &
      upload_c4, upload_c8, upload_l
  end interface
  interface f2l_download
    module procedure download_range_i1, download_range_i2, download_range_i4, download_range_i8, &
      download_range_r4, download_range_r8, download_range_c4, download_range_c8, download_range_l
    module procedure download_i1, download_i2, download_i4, download_i8, download_r4, &
      download_r8, download_c4, download_c8, download_l
  end interface
  interface f2l_release
    module procedure release_i1, release_i2, release_i4, release_i8, release_r4, release_r8, &
      release_c4, release_c8, release_l
  end interface
  interface f2l_is_resident
    module procedure resident_i1, resident_i2, resident_i4, resident_i8, resident_r4, &
      resident_r8, resident_c4, resident_c8, resident_l
  end interface
  interface f2l_upload_part
    module procedure upload_part_i1, upload_part_i2, upload_part_i4, upload_part_i8, upload_part_r4, &
      upload_part_r8, upload_part_c4, upload_part_c8, upload_part_l
  end interface
  interface f2l_download_part
    module procedure download_part_i1, download_part_i2, download_part_i4, download_part_i8, download_part_r4, &
      download_part_r8, download_part_c4, download_part_c8, download_part_l
  end interface
  interface f2l_to_string
    module procedure str_i1, str_i2, str_i4, str_i8, str_r4, str_r8, str_c4, str_c8, str_l
  end interface

contains

  ! {{{ errors

  !> The message of this thread's last error ("" if the last call succeeded).
  function f2l_error_message() result(msg)
    character(len=:), allocatable :: msg
    msg = c_string(c_error_message())
  end function

  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n
    integer :: i
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, int(n)
      s(i:i) = chars(i)
    end do
  end function

  !> Hand status st to the caller: into status if present, else stop with the
  !> message if st is an error.
  subroutine report(st, status)
    integer, intent(in) :: st
    integer, intent(out), optional :: status
    if (present(status)) then
      status = st
    else if (st /= F2L_OK) then
      write(error_unit, '(a)') "f2loopy: error: " // f2l_error_message()
      write(error_unit, '(a)') "f2loopy: (pass status= to handle errors in the program)"
      stop 1
    end if
  end subroutine

  function set_error(code, message) result(st)
    integer, intent(in) :: code
    character(len=*), intent(in) :: message
    integer :: st
    st = int(c_set_error(int(code, c_int), message // c_null_char))
  end function

  ! }}}

  ! {{{ device

  !> "device name (platform name)" of the OpenCL device in use ("" if none).
  function f2l_device_name(status) result(name)
    integer, intent(out), optional :: status
    character(len=:), allocatable :: name
    character(kind=c_char) :: buf(512)
    integer :: st, i
    st = int(c_device_description(buf, int(size(buf), c_size_t)))
    name = ""
    do i = 1, size(buf)
      if (buf(i) == c_null_char) exit
      name = name // buf(i)
    end do
    call report(st, status)
  end function

  !> Wait until every kernel launched so far has finished.
  subroutine f2l_sync(status)
    integer, intent(out), optional :: status
    call report(int(c_finish()), status)
  end subroutine

  !> Create the OpenCL context now, on the device for node-local rank local_rank
  !> if given (the device local_rank modulo the devices of the platform; see
  !> f2loopy_mpi for the rank of an MPI communicator), else for the rank the MPI
  !> launcher's environment gives.  Call it before any other f2loopy procedure.
  subroutine f2l_init(local_rank, status)
    integer, intent(in), optional :: local_rank
    integer, intent(out), optional :: status
    integer :: st
    call c_clear_error()
    if (present(local_rank)) then
      st = int(c_init_rank(int(local_rank, c_int)))
    else
      st = int(c_init())
    end if
    call report(st, status)
  end subroutine

  !> How the device was chosen: the node-local rank (-1: none known), the index
  !> of the device among the devices of its platform (from 0), and their number.
  subroutine f2l_device_choice(local_rank, index, count, status)
    integer, intent(out) :: local_rank, index, count
    integer, intent(out), optional :: status
    integer(c_int) :: r, i, n
    integer :: st
    call c_clear_error()
    st = int(c_device_choice(r, i, n))
    local_rank = int(r)
    index = int(i)
    count = int(n)
    call report(st, status)
  end subroutine

  !> Release programs, device-resident arrays, the queue and the context.
  subroutine f2l_shutdown()
    call c_shutdown()
  end subroutine

  !> Number of device-resident arrays.
  integer function f2l_resident_arrays()
    f2l_resident_arrays = int(c_resident_count())
  end function

  ! }}}

  ! {{{ f2l_call

  !> Start a launch of kernel name of the program source (built with options);
  !> kernel is the caller's cache of it (a saved c_ptr, initially c_null_ptr).
  !> Begin a call of kernel name (kernel: the caller's cache of it) of the
  !> program source; signature (f2l_kernel_signature: "buffer int32 ...") is
  !> what the kernel's arguments must be, checked before every launch.
  subroutine call_begin(self, caller, kernel, source, options, name, signature)
    class(f2l_call), intent(inout) :: self
    character(len=*), intent(in) :: caller, options, name
    type(c_ptr), intent(inout) :: kernel
    type(c_ptr), intent(in) :: source
    character(len=*), intent(in), optional :: signature
    self%caller = caller
    self%source = source
    self%options = options
    self%status = F2L_OK
    call c_clear_error()
    self%status = int(c_kernel_cached(kernel, source, options // c_null_char, &
                                      name // c_null_char))
    if (self%status == F2L_OK .and. present(signature)) &
      self%status = int(c_kernel_signature(kernel, signature // c_null_char))
    if (self%status == F2L_OK) self%status = int(c_launch_begin(kernel, self%launch))
  end subroutine

  subroutine call_fail(self, code, message)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: code
    character(len=*), intent(in) :: message
    if (self%status /= F2L_OK) return
    self%status = set_error(code, message)
  end subroutine

  !> A scalar passed by value: size bytes at value.
  subroutine call_value(self, index, value, size)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: index
    type(c_ptr), intent(in) :: value
    integer(c_size_t), intent(in) :: size
    if (self%status /= F2L_OK) return
    self%status = int(c_launch_value(self%launch, int(index, c_int), value, size))
  end subroutine

  !> A scalar the kernel writes: its new value is copied back to value.
  subroutine call_scalar(self, index, value, size)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: index
    type(c_ptr), intent(in) :: value
    integer(c_size_t), intent(in) :: size
    if (self%status /= F2L_OK) return
    self%status = int(c_launch_scalar(self%launch, int(index, c_int), value, size))
  end subroutine

  !> Device memory for a global temporary of the kernel (nbytes, not copied).
  subroutine call_scratch(self, index, nbytes)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: index
    integer(c_int64_t), intent(in) :: nbytes
    if (self%status /= F2L_OK) return
    self%status = int(c_launch_scratch(self%launch, int(index, c_int), &
                                       int(max(nbytes, 0_c_int64_t), c_size_t)))
  end subroutine

  !> Number of elements to transfer for an array argument, or -1 after an error.
  !> have: size of the actual argument (negative: an assumed-size array, unknown);
  !> need: elements the Fortran declaration decl needs (negative: assumed size).
  function array_elements(self, name, decl, arank, have, need) result(n)
    class(f2l_call), intent(inout) :: self
    character(len=*), intent(in) :: name, decl
    integer, intent(in) :: arank
    integer(c_int64_t), intent(in) :: have, need
    integer(c_int64_t) :: n
    n = -1
    if (self%status /= F2L_OK) return
    if (arank == 0) then
      call self%fail(F2L_ERROR_ARGUMENT, "argument '" // name // "' (declared " // decl // &
        ") must be an array, not a scalar or an array element (pass a section such as a(k:) " &
        // "instead of a(k))")
    else if (need < 0 .and. have < 0) then
      call self%fail(F2L_ERROR_ARGUMENT, "argument '" // name // "' is an assumed-size array " &
        // "here and its declaration " // decl // " does not say how many elements it has " &
        // "(pass an array whose size is known)")
    else if (need < 0) then
      n = have
    else if (have >= 0 .and. have < need) then
      call self%fail(F2L_ERROR_ARGUMENT, "argument '" // name // "' has " // &
        f2l_to_string(have) // " elements, but its declaration " // decl // " needs " // &
        f2l_to_string(need))
    else
      n = need
    end if
  end function

  !> An array argument at host.  arank, have: rank and size of the actual
  !> argument; need: elements its declaration decl needs (negative: assumed size);
  !> elem: bytes per element.
  subroutine call_array(self, index, name, decl, host, arank, have, need, elem, written)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: index, arank
    character(len=*), intent(in) :: name, decl
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: have, need, elem
    logical, intent(in) :: written
    integer(c_int64_t) :: n
    integer(c_int) :: w
    n = array_elements(self, name, decl, arank, have, need)
    if (self%status /= F2L_OK) return
    w = 0
    if (written) w = 1
    self%status = int(c_launch_array(self%launch, int(index, c_int), name // c_null_char, &
                                     host, int(n * elem, c_size_t), w))
  end subroutine

  !> An array the kernel stores in another layout: the host array (declared
  !> extents) is converted as f2l_relayout describes (terms: groups of
  !> axis, div, mod, stride) into device_elems elements and back if written.
  subroutine call_array_mapped(self, index, name, decl, host, arank, have, elem, extents, &
                               terms, device_elems, written)
    class(f2l_call), intent(inout) :: self
    integer, intent(in) :: index, arank
    character(len=*), intent(in) :: name, decl
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: have, elem, device_elems
    integer(c_int64_t), intent(in) :: extents(:), terms(:)
    logical, intent(in) :: written
    integer(c_int64_t) :: n
    integer(c_int) :: w
    n = array_elements(self, name, decl, arank, have, product(max(0_c_int64_t, extents)))
    if (self%status /= F2L_OK) return
    w = 0
    if (written) w = 1
    self%status = int(c_launch_array_mapped(self%launch, int(index, c_int), &
      name // c_null_char, host, int(elem, c_size_t), int(size(extents), c_int), extents, &
      int(size(terms) / 4, c_int), terms, device_elems, w))
  end subroutine

  !> Launch groups(a) work-groups of local(a) work-items on each axis a, then
  !> copy back what the kernel wrote.
  subroutine call_run(self, groups, local)
    class(f2l_call), intent(inout) :: self
    integer(c_int64_t), intent(in) :: groups(3), local(3)
    if (self%status /= F2L_OK) return
    self%status = int(c_launch_run(self%launch, groups, local))
  end subroutine

  !> One launch of a kernel split at global barriers: kernel name of the
  !> program (kernel: the caller's cache of it), whose argument j is the one
  !> given slot slots(j+1); nothing is copied back (see call_complete).
  !> signature: as for call_begin, given to the kernel when it is looked up.
  subroutine call_launch_kernel(self, kernel, name, slots, groups, local, signature)
    class(f2l_call), intent(inout) :: self
    type(c_ptr), intent(inout) :: kernel
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: slots(:)
    integer(c_int64_t), intent(in) :: groups(3), local(3)
    character(len=*), intent(in), optional :: signature
    if (self%status /= F2L_OK) return
    ! in a host loop the kernel is cached: no strings are built per launch
    if (c_kernel_current(kernel) == 0) then
      self%status = int(c_kernel_cached(kernel, self%source, self%options // c_null_char, &
                                        name // c_null_char))
      if (self%status == F2L_OK .and. present(signature)) &
        self%status = int(c_kernel_signature(kernel, signature // c_null_char))
      if (self%status /= F2L_OK) return
    end if
    self%status = int(c_launch_enqueue(self%launch, kernel, slots, &
                                       int(size(slots), c_int), groups, local))
  end subroutine

  !> After the last launch of a split kernel: copy back what the kernels wrote.
  subroutine call_complete(self)
    class(f2l_call), intent(inout) :: self
    if (self%status /= F2L_OK) return
    self%status = int(c_launch_complete(self%launch))
  end subroutine

  subroutine call_finish(self, status)
    class(f2l_call), intent(inout) :: self
    integer, intent(out), optional :: status
    if (c_associated(self%launch)) call c_launch_end(self%launch)
    self%launch = c_null_ptr
    if (self%status /= F2L_OK) call c_prefix_error(self%caller // c_null_char)
    call report(self%status, status)
  end subroutine

  ! }}}

  ! {{{ device-resident arrays (one specific procedure per type)

  subroutine upload_any(host, elems, elem, contiguous, status)
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: elems, elem
    logical, intent(in) :: contiguous
    integer, intent(out), optional :: status
    integer :: st
    call c_clear_error()
    if (.not. contiguous) then
      st = set_error(F2L_ERROR_RESIDENT, "f2l_upload: the array is not contiguous (a strided " &
                     // "section): only whole arrays or contiguous sections can live on the device")
    else if (elems < 0) then
      st = set_error(F2L_ERROR_RESIDENT, "f2l_upload: the size of an assumed-size array is " &
                     // "unknown")
    else
      st = int(c_resident_upload(host, int(elems * elem, c_size_t)))
    end if
    call report(st, status)
  end subroutine

  subroutine download_any(host, elems, elem, contiguous, status)
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: elems, elem
    logical, intent(in) :: contiguous
    integer, intent(out), optional :: status
    integer :: st
    call c_clear_error()
    if (.not. contiguous .or. elems < 0) then
      st = set_error(F2L_ERROR_RESIDENT, "f2l_download: the array is not device-resident")
    else
      st = int(c_resident_download(host, int(elems * elem, c_size_t)))
      if (st /= F2L_OK) call c_prefix_error("f2l_download" // c_null_char)
    end if
    call report(st, status)
  end subroutine

  subroutine release_any(host, contiguous, status)
    type(c_ptr), intent(in) :: host
    logical, intent(in) :: contiguous
    integer, intent(out), optional :: status
    integer :: st
    call c_clear_error()
    if (.not. contiguous) then
      st = set_error(F2L_ERROR_RESIDENT, "f2l_release: the array is not device-resident")
    else
      st = int(c_resident_release(host))
      if (st /= F2L_OK) call c_prefix_error("f2l_release" // c_null_char)
    end if
    call report(st, status)
  end subroutine

  !> Copy a contiguous section (elems elements of elem bytes at host) of a
  !> device-resident array to the device (to_device) or back.
  subroutine part_any(host, elems, elem, contiguous, to_device, status)
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: elems, elem
    logical, intent(in) :: contiguous, to_device
    integer, intent(out), optional :: status
    character(len=:), allocatable :: what
    integer :: st
    call c_clear_error()
    what = "f2l_download_part"
    if (to_device) what = "f2l_upload_part"
    if (.not. contiguous) then
      st = set_error(F2L_ERROR_RESIDENT, what // ": the section is not contiguous in memory: " &
                     // "only sections such as u(:, j1:j2) or u(i1:i2, j) can be copied (" &
                     // "decompose the domain along the last axis, or copy column by column)")
    else if (elems < 0) then
      st = set_error(F2L_ERROR_RESIDENT, what // ": the size of an assumed-size array is " &
                     // "unknown")
    else if (to_device) then
      st = int(c_resident_upload_part(host, 0_c_size_t, int(elems * elem, c_size_t)))
    else
      st = int(c_resident_download_part(host, 0_c_size_t, int(elems * elem, c_size_t)))
    end if
    if (st /= F2L_OK .and. contiguous .and. elems >= 0) call c_prefix_error(what // c_null_char)
    call report(st, status)
  end subroutine

  !> Copy elements first .. first+count-1 (array element order) of the
  !> device-resident array at host (elems elements of elem bytes) to the device
  !> (to_device) or back.
  subroutine range_any(host, elems, elem, contiguous, first, count, to_device, status)
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: elems, elem
    logical, intent(in) :: contiguous, to_device
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    character(len=:), allocatable :: what
    integer(c_size_t) :: offset, nbytes
    integer :: st
    call c_clear_error()
    what = "f2l_download"
    if (to_device) what = "f2l_upload"
    if (.not. contiguous) then
      st = set_error(F2L_ERROR_RESIDENT, what // ": the array is not contiguous (a strided " &
                     // "section): pass the whole device-resident array")
    else if (first < 1 .or. count < 0 .or. (elems >= 0 .and. &
             int(first, c_int64_t) - 1 + count > elems)) then
      st = set_error(F2L_ERROR_ARGUMENT, what // ": elements " // f2l_to_string(first) // &
                     " to " // f2l_to_string(first + count - 1) // " (first " // &
                     f2l_to_string(first) // ", count " // f2l_to_string(count) // &
                     ") are not elements of the array (1 to " // f2l_to_string(elems) // ")")
    else
      offset = int((first - 1) * elem, c_size_t)
      nbytes = int(count * elem, c_size_t)
      if (to_device) then
        st = int(c_resident_upload_part(host, offset, nbytes))
      else
        st = int(c_resident_download_part(host, offset, nbytes))
      end if
      if (st /= F2L_OK) call c_prefix_error(what // c_null_char)
    end if
    call report(st, status)
  end subroutine

  logical function resident_any(host, nbytes, contiguous)
    type(c_ptr), intent(in) :: host
    integer(c_int64_t), intent(in) :: nbytes
    logical, intent(in) :: contiguous
    ! (the size too: an array allocated where a resident one was is not it)
    resident_any = .false.
    if (contiguous) resident_any = c_resident_query_size(host, int(nbytes, c_size_t)) /= 0
  end function

  ! The specific procedures below differ only in the type of x.

  subroutine upload_i1(x, status)
    integer(c_int8_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_i1(x, status)
    integer(c_int8_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_i1(x, status)
    integer(c_int8_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_i1(x)
    integer(c_int8_t), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_i1 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_i2(x, status)
    integer(c_int16_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_i2(x, status)
    integer(c_int16_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_i2(x, status)
    integer(c_int16_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_i2(x)
    integer(c_int16_t), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_i2 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_i4(x, status)
    integer(c_int32_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_i4(x, status)
    integer(c_int32_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_i4(x, status)
    integer(c_int32_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_i4(x)
    integer(c_int32_t), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_i4 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_i8(x, status)
    integer(c_int64_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_i8(x, status)
    integer(c_int64_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_i8(x, status)
    integer(c_int64_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_i8(x)
    integer(c_int64_t), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_i8 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_r4(x, status)
    real(c_float), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_r4(x, status)
    real(c_float), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_r4(x, status)
    real(c_float), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_r4(x)
    real(c_float), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_r4 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_r8(x, status)
    real(c_double), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_r8(x, status)
    real(c_double), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_r8(x, status)
    real(c_double), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_r8(x)
    real(c_double), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_r8 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_c4(x, status)
    complex(c_float_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_c4(x, status)
    complex(c_float_complex), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_c4(x, status)
    complex(c_float_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_c4(x)
    complex(c_float_complex), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_c4 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_c8(x, status)
    complex(c_double_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine download_c8(x, status)
    complex(c_double_complex), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), status)
  end subroutine

  subroutine release_c8(x, status)
    complex(c_double_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_c8(x)
    complex(c_double_complex), dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_c8 = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function


  subroutine upload_l(x, status)
    logical, dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call upload_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), status)
  end subroutine

  subroutine download_l(x, status)
    logical, dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call download_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), status)
  end subroutine

  subroutine release_l(x, status)
    logical, dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call release_any(p, is_contiguous(x), status)
  end subroutine

  logical function resident_l(x)
    logical, dimension(..), target, intent(in) :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    resident_l = resident_any(p, size(x, kind=c_int64_t) * storage_size(x, kind=c_int64_t) / 8, &
      is_contiguous(x))
  end function

  ! The partial transfers, one specific procedure per type.

  subroutine upload_part_i1(x, status)
    integer(c_int8_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_i1(x, status)
    integer(c_int8_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_i2(x, status)
    integer(c_int16_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_i2(x, status)
    integer(c_int16_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_i4(x, status)
    integer(c_int32_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_i4(x, status)
    integer(c_int32_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_i8(x, status)
    integer(c_int64_t), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_i8(x, status)
    integer(c_int64_t), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_r4(x, status)
    real(c_float), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_r4(x, status)
    real(c_float), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_r8(x, status)
    real(c_double), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_r8(x, status)
    real(c_double), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_c4(x, status)
    complex(c_float_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_c4(x, status)
    complex(c_float_complex), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_c8(x, status)
    complex(c_double_complex), dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_c8(x, status)
    complex(c_double_complex), dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), .false., &
                  status)
  end subroutine

  subroutine upload_part_l(x, status)
    logical, dimension(..), target, intent(in) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), .true., &
                  status)
  end subroutine

  subroutine download_part_l(x, status)
    logical, dimension(..), target, intent(inout) :: x
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call part_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), .false., &
                  status)
  end subroutine

  ! Element ranges (first, count), one specific procedure per type.

  subroutine upload_range_i1(x, first, count, status)
    integer(c_int8_t), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_i1(x, first, count, status)
    integer(c_int8_t), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 1_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_i2(x, first, count, status)
    integer(c_int16_t), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_i2(x, first, count, status)
    integer(c_int16_t), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 2_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_i4(x, first, count, status)
    integer(c_int32_t), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_i4(x, first, count, status)
    integer(c_int32_t), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_i8(x, first, count, status)
    integer(c_int64_t), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_i8(x, first, count, status)
    integer(c_int64_t), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_r4(x, first, count, status)
    real(c_float), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_r4(x, first, count, status)
    real(c_float), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 4_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_r8(x, first, count, status)
    real(c_double), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_r8(x, first, count, status)
    real(c_double), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_c4(x, first, count, status)
    complex(c_float_complex), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_c4(x, first, count, status)
    complex(c_float_complex), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 8_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_c8(x, first, count, status)
    complex(c_double_complex), dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_c8(x, first, count, status)
    complex(c_double_complex), dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), 16_c_int64_t, is_contiguous(x), first, count, &
                   .false., status)
  end subroutine

  subroutine upload_range_l(x, first, count, status)
    logical, dimension(..), target, intent(in) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), first, count, &
                   .true., status)
  end subroutine

  subroutine download_range_l(x, first, count, status)
    logical, dimension(..), target, intent(inout) :: x
    integer, intent(in) :: first, count
    integer, intent(out), optional :: status
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x)) p = c_loc(x)
    call range_any(p, size(x, kind=c_int64_t), int(storage_size(.true.) / 8, c_int64_t), is_contiguous(x), first, count, &
                   .false., status)
  end subroutine


  ! }}}

  ! {{{ helpers of the generated glue

  function str_i1(v) result(s)
    integer(c_int8_t), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(i0)') v
    s = trim(adjustl(buf))
  end function

  function str_i2(v) result(s)
    integer(c_int16_t), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(i0)') v
    s = trim(adjustl(buf))
  end function

  function str_i4(v) result(s)
    integer(c_int32_t), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(i0)') v
    s = trim(adjustl(buf))
  end function

  function str_i8(v) result(s)
    integer(c_int64_t), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(i0)') v
    s = trim(adjustl(buf))
  end function

  function str_r4(v) result(s)
    real(c_float), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(g0)') v
    s = trim_zeros(trim(adjustl(buf)))
  end function

  function str_r8(v) result(s)
    real(c_double), intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    write(buf, '(g0)') v
    s = trim_zeros(trim(adjustl(buf)))
  end function

  !> "1.50000000" -> "1.5", "0.250000000E-05" -> "0.25E-05", "2.00000" -> "2.0"
  function trim_zeros(text) result(s)
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: s
    integer :: e, last
    e = scan(text, "EeDd")
    if (e == 0) e = len(text) + 1
    last = e - 1
    if (index(text(1:last), ".") == 0) then
      s = text
      return
    end if
    do while (last > 1 .and. text(last:last) == "0")
      last = last - 1
    end do
    if (text(last:last) == ".") last = last + 1
    s = text(1:last) // text(e:)
  end function

  function str_c4(v) result(s)
    complex(c_float_complex), intent(in) :: v
    character(len=:), allocatable :: s
    s = "(" // str_r4(real(v)) // ", " // str_r4(aimag(v)) // ")"
  end function

  function str_c8(v) result(s)
    complex(c_double_complex), intent(in) :: v
    character(len=:), allocatable :: s
    s = "(" // str_r8(real(v)) // ", " // str_r8(aimag(v)) // ")"
  end function

  function str_l(v) result(s)
    logical, intent(in) :: v
    character(len=:), allocatable :: s
    character(len=100) :: buf
    buf = merge('.true. ', '.false.', v)
    s = trim(adjustl(buf))
  end function

  !> floor(a / b) for integers (b /= 0).
  elemental function f2l_floordiv(a, b) result(q)
    integer(c_int64_t), intent(in) :: a, b
    integer(c_int64_t) :: q
    q = a / b
    if (mod(a, b) /= 0 .and. ((a < 0) .neqv. (b < 0))) q = q - 1
  end function

  ! }}}

end module f2loopy_runtime
