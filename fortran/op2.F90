! op2: Fortran interface to libop2 (the C API in op2.h).
!
! One module, compiled with the user's own Fortran compiler (the CMake package does this for the
! target OP2::op2_fortran; by hand: `gfortran -c op2.F90`, then link with -lop2). It holds
!   * private bind(C) interfaces to the C functions (named c_<C name>), and
!   * public wrappers with the C names, taking Fortran strings, Fortran arrays and optional
!     arguments, and deriving type strings from the Fortran type of the data.
! The specifics of the type-generic wrappers (op_decl_dat, op_arg_gbl, op_fetch_data, ...: one
! per type of data) and their interface blocks lie between `! BEGIN GENERATED` and
! `! END GENERATED` lines: tools/gen_fortran.py writes them from one template per call; edit
! the template there and run `python3 tools/gen_fortran.py`. The rest is written by hand.
!
! Conventions (as in OP2's Fortran API):
!   * Indices a Fortran program passes are 1-based: map entries (op_decl_map), the map position
!     `idx` of op_arg_dat / op_arg_idx (idx = 1 is the first column; idx = -1 with OP_ID is direct
!     access; idx = -N with a map of dim N gives the kernel all N entries, as in C), the `ref` of
!     op_arg_info (the position of the MIN/MAX global in the op_par_loop argument array), and the
!     element range of op_fetch_data_idx.
!   * Kernels are C source (op_decl_kernel) and so see C values: what op_arg_idx hands a kernel is
!     a 0-based element index. Error messages speak Fortran's numbering: op_init sets the index
!     base to 1 (op_set_index_base), so map entries, their positions and idx columns are quoted
!     1-based ("idx 3 is out of range for map 'pedge' of dim 2 (use 1..2, or -2 for all)").
!   * Multi-component data is laid out as data(dim, n): component fastest, as C expects.
!   * Data given to op_arg_gbl / op_arg_info is used by address until op_par_loop returns (the C
!     library reads and writes it then). Pass a variable declared with the `target` attribute, a
!     scalar or a contiguous array; the dummies are intent(inout) so that a constant or an
!     expression (a temporary that would be gone by then) is rejected at compile time.
!   * Handles (op_set, op_map, op_dat, op_kernel) hold only the C pointer. op_arg holds the C
!     struct's bytes without knowing their layout; op_init checks the size agrees with libop2.
!
! Errors: libop2 reports them itself (default: message on stderr and exit; with
! op_set_error_handler(OP_ERRORS_RETURN) the call records the error, returns a null handle, and
! op_last_error_code() / op_last_error_message() tell what happened). The few checks only Fortran
! can make (an array too small for its set, a non-contiguous global) print the same kind of
! message and `error stop`: they would otherwise be out-of-bounds accesses.
module op2
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  ! ---------------------------------------------------------------------------------------------
  ! Constants (values are part of the C ABI: see op2.h)
  ! ---------------------------------------------------------------------------------------------
  integer(c_int), parameter, public :: OP_READ = 0, OP_WRITE = 1, OP_RW = 2, OP_INC = 3, &
                                       OP_MIN = 4, OP_MAX = 5
  integer(c_int), parameter, public :: OP_ERRORS_ABORT = 0, OP_ERRORS_RETURN = 1

  integer(c_int), parameter, public :: OP2_SUCCESS = 0
  integer(c_int), parameter, public :: &
    OP2_ERR_NOT_INITIALISED = 101, OP2_ERR_ALREADY_INITIALISED = 102, OP2_ERR_BAD_CONFIG = 103, &
    OP2_ERR_BACKEND_UNAVAILABLE = 104, OP2_ERR_CACHE_DIR = 105, &
    OP2_ERR_NULL_ARGUMENT = 201, OP2_ERR_INVALID_HANDLE = 202, OP2_ERR_BAD_SIZE = 203, &
    OP2_ERR_BAD_TYPE = 204, OP2_ERR_MAP_OUT_OF_RANGE = 205, OP2_ERR_BAD_KERNEL = 206, &
    OP2_ERR_BAD_NAME = 207, &
    OP2_ERR_ARG_MISMATCH = 301, OP2_ERR_ARG_SET = 302, OP2_ERR_ARG_IDX = 303, &
    OP2_ERR_ARG_ACCESS = 304, OP2_ERR_ARG_INFO = 305, OP2_ERR_ARG_INVALID = 306, &
    OP2_ERR_BAD_LOOP = 401, OP2_ERR_REENTRANT = 402, OP2_ERR_COMPILE = 501, OP2_ERR_LOAD = 502, &
    OP2_ERR_BAD_RANGE = 601, OP2_ERR_IO = 602, OP2_ERR_CHECK = 701, OP2_ERR_VALIDATE = 702, OP2_ERR_DEVICE = 801, &
    OP2_ERR_OUT_OF_MEMORY = 802, &
    OP2_ERR_INTERNAL = 901
  integer(c_int), parameter, public :: OP2_ERR_FILE_FORMAT = 603, OP2_ERR_NO_DATASET = 604
  integer(c_int), parameter, public :: OP2_ERR_MPI = 810
  integer(c_int), parameter, public :: OP2_ERR_MAT_PATTERN = 820, OP2_ERR_SOLVE = 821, &
                                       OP2_ERR_PETSC = 822
  integer(c_int), parameter, public :: OP2_ERR_CHAIN = 830
  integer(c_int), parameter, public :: OP2_ERR_CHECKPOINT = 840
  ! op_write_vtk flags
  integer(c_int), parameter, public :: OP_VTK_BINARY = 0, OP_VTK_ASCII = 1, OP_VTK_BASE64 = 2

  ! ---------------------------------------------------------------------------------------------
  ! Handles: the C pointer and nothing else (no mirrored struct layouts).
  ! ---------------------------------------------------------------------------------------------
  type, public :: op_set
    type(c_ptr) :: handle = c_null_ptr
  end type op_set

  type, public :: op_map
    type(c_ptr) :: handle = c_null_ptr
  end type op_map

  type, public :: op_dat
    type(c_ptr) :: handle = c_null_ptr
  end type op_dat

  type, public :: op_kernel
    type(c_ptr) :: handle = c_null_ptr
  end type op_kernel

  type, public :: op_sparsity
    type(c_ptr) :: handle = c_null_ptr
  end type op_sparsity

  type, public :: op_mat
    type(c_ptr) :: handle = c_null_ptr
  end type op_mat

  ! The C op_arg is passed by value and its layout is private to libop2: 56 bytes, 8-byte
  ! aligned. Seven 64-bit integers give Fortran the same size and alignment; op_init compares
  ! storage_size(op_arg) with the library's op_arg_size().
  integer, parameter :: OP_ARG_WORDS = 7
  type, public, bind(C) :: op_arg
    integer(c_int64_t) :: opaque(OP_ARG_WORDS) = 0
  end type op_arg

  ! The identity map (direct access, idx = -1) and the "map" of a global: the null op_map.
  type(op_map), parameter, public :: OP_ID = op_map(c_null_ptr)
  type(op_map), parameter, public :: OP_GBL = op_map(c_null_ptr)

  ! ---------------------------------------------------------------------------------------------
  ! Public procedures (same names as C)
  ! ---------------------------------------------------------------------------------------------
  public :: op_init, op_exit
  public :: op_decl_set, op_decl_map, op_decl_map_long, op_decl_dat, op_decl_const, op_decl_kernel
  public :: op_arg_dat, op_opt_arg_dat, op_arg_gbl, op_arg_idx, op_arg_info
  public :: op_par_loop, op_par_loop_fptr, op_par_loop_fn
  public :: op_decl_const_addr, op_malloc, op_free
  public :: op_fetch_data, op_fetch_data_idx, op_get_size, op_print_dat_to_txtfile, op_dat_transfers
  public :: op_write_vtk
  public :: op_decl_set_hdf5, op_decl_map_hdf5, op_decl_dat_hdf5, op_get_const_hdf5, &
            op_write_const_hdf5, op_fetch_data_hdf5_file, op_fetch_data_hdf5_file_path, &
            op_dump_to_hdf5
  public :: op_checkpointing_init, op_checkpoint_now
  public :: op_flush, op_loop_chain_begin, op_loop_chain_end
  public :: op_timing_output, op_diagnostic_output, op_is_root
  ! OP2's profiling regions (op_profile.h)
  public :: op_profile_start, op_profile_enter, op_profile_enter_kernel, op_profile_next, &
            op_profile_exit, op_profile_end, op_profile_output
  public :: op_backend_name, op_backend_available
  public :: op_last_error_code, op_last_error_message, op_set_error_handler
  ! More of OP2's functions (op_printf is C only: it is variadic; Fortran prints on op_is_root()).
  public :: op_decl_kernel_file, op_decl_dat_temp_char, op_free_dat_temp_char
  public :: op_print_dat_to_binfile, op_renumber, op_timers, op_rank, op_num_ranks, op_set_index_base
  public :: op_mpi_barrier, op_get_global_set_offset, op_upload_all, op_upload_dat
  public :: op_download_dat
  ! MPI
  public :: op_mpi_init, op_partition
  ! Matrices
  public :: op_decl_sparsity, op_decl_sparsity_pairs, op_decl_mat, op_arg_mat, op_mat_zero, &
            op_mat_zero_rows, op_mat_assemble, op_mat_mult, op_mat_nnz, op_fetch_mat_csr, op_solve

  ! Generic interfaces: one specific per type of data (TYPES in tools/gen_fortran.py).
  ! BEGIN GENERATED generics (tools/gen_fortran.py writes it: edit there, then run it)
  interface op_decl_dat
    module procedure op_decl_dat_r8, op_decl_dat_r4, op_decl_dat_i4, op_decl_dat_i8, &
                     op_decl_dat_b, op_decl_dat_zero
  end interface op_decl_dat

  interface op_decl_const
    module procedure op_decl_const_r8, op_decl_const_r4, op_decl_const_i4, op_decl_const_i8, &
                     op_decl_const_b
  end interface op_decl_const

  interface op_arg_gbl
    module procedure op_arg_gbl_r8, op_arg_gbl_r4, op_arg_gbl_i4, op_arg_gbl_i8, op_arg_gbl_b
  end interface op_arg_gbl

  interface op_arg_info
    module procedure op_arg_info_r8, op_arg_info_r4, op_arg_info_i4, op_arg_info_i8
  end interface op_arg_info

  interface op_fetch_data
    module procedure op_fetch_data_r8, op_fetch_data_r4, op_fetch_data_i4, op_fetch_data_i8, &
                     op_fetch_data_b
  end interface op_fetch_data

  interface op_fetch_data_idx
    module procedure op_fetch_data_idx_r8, op_fetch_data_idx_r4, op_fetch_data_idx_i4, &
                     op_fetch_data_idx_i8, op_fetch_data_idx_b
  end interface op_fetch_data_idx

  interface op_get_const_hdf5
    module procedure op_get_const_hdf5_r8, op_get_const_hdf5_r4, op_get_const_hdf5_i4, &
                     op_get_const_hdf5_i8, op_get_const_hdf5_r8s, op_get_const_hdf5_i4s
  end interface op_get_const_hdf5

  interface op_write_const_hdf5
    module procedure op_write_const_hdf5_r8, op_write_const_hdf5_r4, op_write_const_hdf5_i4, &
                     op_write_const_hdf5_i8, op_write_const_hdf5_r8s, op_write_const_hdf5_i4s
  end interface op_write_const_hdf5

  interface op_fetch_mat_csr
    module procedure op_fetch_mat_csr_r8, op_fetch_mat_csr_r4
  end interface op_fetch_mat_csr
  ! END GENERATED generics

  ! ---------------------------------------------------------------------------------------------
  ! The C functions (private; names c_<C name>)
  ! ---------------------------------------------------------------------------------------------
  interface
    subroutine c_op_init(argc, argv, diags) bind(C, name="op_init")
      import :: c_int, c_ptr
      integer(c_int), value :: argc
      type(c_ptr), intent(in) :: argv(*)
      integer(c_int), value :: diags
    end subroutine c_op_init

    subroutine c_op_exit() bind(C, name="op_exit")
    end subroutine c_op_exit

    function c_op_arg_size() bind(C, name="op_arg_size") result(n)
      import :: c_int
      integer(c_int) :: n
    end function c_op_arg_size

    subroutine c_op_par_loop_fptr(fn, name, set, nargs, args) bind(C, name="op_par_loop_fptr")
      import :: c_funptr, c_ptr, c_int, op_arg
      type(c_funptr), value :: fn
      type(c_ptr), value :: name
      type(c_ptr), value :: set
      integer(c_int), value :: nargs
      type(op_arg), intent(in) :: args(*)
    end subroutine c_op_par_loop_fptr

    subroutine c_op_par_loop_fn(fn, kernel, file, name, set, nargs, args) bind(C, name="op_par_loop_fn")
      import :: c_funptr, c_ptr, c_int, c_char, op_arg
      type(c_funptr), value :: fn
      character(kind=c_char), intent(in) :: kernel(*)
      type(c_ptr), value :: file
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: set
      integer(c_int), value :: nargs
      type(op_arg), intent(in) :: args(*)
    end subroutine c_op_par_loop_fn

    subroutine c_op_decl_const_addr(dim, type, size, data) bind(C, name="op_decl_const_addr")
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: size
      type(c_ptr), value :: data
    end subroutine c_op_decl_const_addr

    !> `size` bytes aligned to 64 (OP2's op_malloc); release with op_free. c_null_ptr if refused.
    function op_malloc(size) bind(C, name="op_malloc") result(p)
      import :: c_size_t, c_ptr
      integer(c_size_t), value :: size
      type(c_ptr) :: p
    end function op_malloc

    !> Releases memory from op_malloc (c_null_ptr: nothing).
    subroutine op_free(p) bind(C, name="op_free")
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine op_free

    function c_op_decl_set(size, name) bind(C, name="op_decl_set") result(h)
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: size
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_set

    function c_op_decl_map(from, to, dim, imap, name) bind(C, name="op_decl_map") result(h)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: from, to
      integer(c_int), value :: dim
      integer(c_int), intent(in) :: imap(*)
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_map

    function c_op_decl_map_long(from, to, dim, imap, name) bind(C, name="op_decl_map_long") result(h)
      import :: c_int, c_long_long, c_char, c_ptr
      type(c_ptr), value :: from, to
      integer(c_int), value :: dim
      integer(c_long_long), intent(in) :: imap(*)
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_map_long

    function c_op_decl_dat(set, dim, type, data, name) bind(C, name="op_decl_dat") result(h)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: set
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      type(c_ptr), value :: data
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_dat

    subroutine c_op_decl_const(dim, type, data, name) bind(C, name="op_decl_const")
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      type(c_ptr), value :: data
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_op_decl_const

    function c_op_decl_kernel(source, name) bind(C, name="op_decl_kernel") result(h)
      import :: c_char, c_ptr
      character(kind=c_char), intent(in) :: source(*)
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_kernel

    function c_op_arg_dat(dat, idx, map, dim, type, acc) bind(C, name="op_arg_dat") result(a)
      import :: c_int, c_char, c_ptr, op_arg
      type(c_ptr), value :: dat
      integer(c_int), value :: idx
      type(c_ptr), value :: map
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: acc
      type(op_arg) :: a
    end function c_op_arg_dat

    function c_op_opt_arg_dat(opt, dat, idx, map, dim, type, acc) &
        bind(C, name="op_opt_arg_dat") result(a)
      import :: c_int, c_char, c_ptr, op_arg
      integer(c_int), value :: opt
      type(c_ptr), value :: dat
      integer(c_int), value :: idx
      type(c_ptr), value :: map
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: acc
      type(op_arg) :: a
    end function c_op_opt_arg_dat

    function c_op_arg_gbl(data, dim, type, acc) bind(C, name="op_arg_gbl") result(a)
      import :: c_int, c_char, c_ptr, op_arg
      type(c_ptr), value :: data
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: acc
      type(op_arg) :: a
    end function c_op_arg_gbl

    function c_op_arg_idx(idx, map) bind(C, name="op_arg_idx") result(a)
      import :: c_int, c_ptr, op_arg
      integer(c_int), value :: idx
      type(c_ptr), value :: map
      type(op_arg) :: a
    end function c_op_arg_idx

    function c_op_arg_info(data, dim, type, ref) bind(C, name="op_arg_info") result(a)
      import :: c_int, c_char, c_ptr, op_arg
      type(c_ptr), value :: data
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: ref
      type(op_arg) :: a
    end function c_op_arg_info

    subroutine c_op_par_loop(kernel, name, set, nargs, args) bind(C, name="op_par_loop")
      import :: c_int, c_char, c_ptr, op_arg
      type(c_ptr), value :: kernel
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: set
      integer(c_int), value :: nargs
      type(op_arg), intent(in) :: args(*)
    end subroutine c_op_par_loop

    subroutine c_op_fetch_data(dat, data) bind(C, name="op_fetch_data")
      import :: c_ptr
      type(c_ptr), value :: dat
      type(c_ptr), value :: data
    end subroutine c_op_fetch_data

    subroutine c_op_fetch_data_idx(dat, data, low, high) bind(C, name="op_fetch_data_idx")
      import :: c_int, c_ptr
      type(c_ptr), value :: dat
      type(c_ptr), value :: data
      integer(c_int), value :: low, high
    end subroutine c_op_fetch_data_idx

    subroutine c_op_dat_transfers(dat, to_device, to_host) bind(C, name="op_dat_transfers")
      import :: c_ptr, c_long_long
      type(c_ptr), value :: dat
      integer(c_long_long), intent(out) :: to_device, to_host
    end subroutine c_op_dat_transfers

    function c_op_get_size(set) bind(C, name="op_get_size") result(n)
      import :: c_ptr, c_long_long
      type(c_ptr), value :: set
      integer(c_long_long) :: n
    end function c_op_get_size

    subroutine c_op_print_dat_to_txtfile(dat, file) bind(C, name="op_print_dat_to_txtfile")
      import :: c_ptr, c_char
      type(c_ptr), value :: dat
      character(kind=c_char), intent(in) :: file(*)
    end subroutine c_op_print_dat_to_txtfile

    subroutine c_op_write_vtk(file, cells, coords, ndats, dats, flags) bind(C, name="op_write_vtk")
      import :: c_ptr, c_char, c_int
      character(kind=c_char), intent(in) :: file(*)
      type(c_ptr), value :: cells, coords
      integer(c_int), value :: ndats
      type(c_ptr), intent(in) :: dats(*)
      integer(c_int), value :: flags
    end subroutine c_op_write_vtk

    function c_op_decl_set_hdf5(file, name) bind(C, name="op_decl_set_hdf5") result(h)
      import :: c_ptr, c_char
      character(kind=c_char), intent(in) :: file(*), name(*)
      type(c_ptr) :: h
    end function c_op_decl_set_hdf5

    function c_op_decl_map_hdf5(from, to, dim, file, name) bind(C, name="op_decl_map_hdf5") result(h)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: from, to
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: file(*), name(*)
      type(c_ptr) :: h
    end function c_op_decl_map_hdf5

    function c_op_decl_dat_hdf5(set, dim, type, file, name) bind(C, name="op_decl_dat_hdf5") result(h)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: set
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*), file(*), name(*)
      type(c_ptr) :: h
    end function c_op_decl_dat_hdf5

    subroutine c_op_get_const_hdf5(name, dim, type, data, file) bind(C, name="op_get_const_hdf5")
      import :: c_ptr, c_char, c_int
      character(kind=c_char), intent(in) :: name(*), type(*), file(*)
      integer(c_int), value :: dim
      type(c_ptr), value :: data
    end subroutine c_op_get_const_hdf5

    subroutine c_op_write_const_hdf5(name, dim, type, data, file) bind(C, name="op_write_const_hdf5")
      import :: c_ptr, c_char, c_int
      character(kind=c_char), intent(in) :: name(*), type(*), file(*)
      integer(c_int), value :: dim
      type(c_ptr), value :: data
    end subroutine c_op_write_const_hdf5

    subroutine c_op_fetch_data_hdf5_file(dat, file) bind(C, name="op_fetch_data_hdf5_file")
      import :: c_ptr, c_char
      type(c_ptr), value :: dat
      character(kind=c_char), intent(in) :: file(*)
    end subroutine c_op_fetch_data_hdf5_file

    subroutine c_op_fetch_data_hdf5_file_path(dat, file, path) bind(C, name="op_fetch_data_hdf5_file_path")
      import :: c_ptr, c_char
      type(c_ptr), value :: dat
      character(kind=c_char), intent(in) :: file(*), path(*)
    end subroutine c_op_fetch_data_hdf5_file_path

    subroutine c_op_dump_to_hdf5(file) bind(C, name="op_dump_to_hdf5")
      import :: c_char
      character(kind=c_char), intent(in) :: file(*)
    end subroutine c_op_dump_to_hdf5

    function c_op_checkpointing_init(path, interval_s, flags) result(on) &
        bind(C, name="op_checkpointing_init")
      import :: c_char, c_double, c_int
      character(kind=c_char), intent(in) :: path(*)
      real(c_double), value :: interval_s
      integer(c_int), value :: flags
      integer(c_int) :: on
    end function c_op_checkpointing_init

    subroutine c_op_checkpoint_now() bind(C, name="op_checkpoint_now")
    end subroutine c_op_checkpoint_now

    subroutine c_op_flush() bind(C, name="op_flush")
    end subroutine c_op_flush

    subroutine c_op_loop_chain_begin(name) bind(C, name="op_loop_chain_begin")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_op_loop_chain_begin

    subroutine c_op_loop_chain_end() bind(C, name="op_loop_chain_end")
    end subroutine c_op_loop_chain_end

    subroutine c_op_timing_output() bind(C, name="op_timing_output")
    end subroutine c_op_timing_output

    subroutine c_op_diagnostic_output() bind(C, name="op_diagnostic_output")
    end subroutine c_op_diagnostic_output

    subroutine c_op_profile_start(name) bind(C, name="op_profile_start")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_op_profile_start

    subroutine c_op_profile_enter(name) bind(C, name="op_profile_enter")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_op_profile_enter

    subroutine c_op_profile_enter_kernel(name, target, variant) bind(C, name="op_profile_enter_kernel")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*), target(*), variant(*)
    end subroutine c_op_profile_enter_kernel

    subroutine c_op_profile_next(name) bind(C, name="op_profile_next")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_op_profile_next

    subroutine c_op_profile_exit() bind(C, name="op_profile_exit")
    end subroutine c_op_profile_exit

    subroutine c_op_profile_end() bind(C, name="op_profile_end")
    end subroutine c_op_profile_end

    subroutine c_op_profile_output() bind(C, name="op_profile_output")
    end subroutine c_op_profile_output

    function c_op_is_root() bind(C, name="op_is_root") result(r)
      import :: c_int
      integer(c_int) :: r
    end function c_op_is_root

    function c_op_backend_name() bind(C, name="op_backend_name") result(s)
      import :: c_ptr
      type(c_ptr) :: s
    end function c_op_backend_name

    function c_op_backend_available(name) bind(C, name="op_backend_available") result(r)
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: r
    end function c_op_backend_available

    function c_op_last_error_code() bind(C, name="op_last_error_code") result(code)
      import :: c_int
      integer(c_int) :: code
    end function c_op_last_error_code

    function c_op_last_error_message() bind(C, name="op_last_error_message") result(s)
      import :: c_ptr
      type(c_ptr) :: s
    end function c_op_last_error_message

    subroutine c_op_set_error_handler(mode) bind(C, name="op_set_error_handler")
      import :: c_int
      integer(c_int), value :: mode
    end subroutine c_op_set_error_handler

    ! libc, to measure the C strings libop2 returns.
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
  end interface

  ! More of OP2's functions.
  interface
    function c_op_decl_kernel_file(path, name) bind(C, name="op_decl_kernel_file") result(h)
      import :: c_char, c_ptr
      character(kind=c_char), intent(in) :: path(*)
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_kernel_file

    function c_op_decl_dat_temp_char(set, dim, type, size, name) &
        bind(C, name="op_decl_dat_temp_char") result(h)
      import :: c_char, c_int, c_ptr
      type(c_ptr), value :: set
      integer(c_int), value :: dim
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int), value :: size
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_dat_temp_char

    function c_op_free_dat_temp_char(dat) bind(C, name="op_free_dat_temp_char") result(ok)
      import :: c_int, c_ptr
      type(c_ptr), value :: dat
      integer(c_int) :: ok
    end function c_op_free_dat_temp_char

    subroutine c_op_print_dat_to_binfile(dat, file) bind(C, name="op_print_dat_to_binfile")
      import :: c_ptr, c_char
      type(c_ptr), value :: dat
      character(kind=c_char), intent(in) :: file(*)
    end subroutine c_op_print_dat_to_binfile

    subroutine c_op_renumber(base) bind(C, name="op_renumber")
      import :: c_ptr
      type(c_ptr), value :: base
    end subroutine c_op_renumber

    subroutine c_op_timers(cpu, et) bind(C, name="op_timers")
      import :: c_double
      real(c_double), intent(out) :: cpu, et
    end subroutine c_op_timers

    subroutine c_op_set_index_base(base) bind(C, name="op_set_index_base")
      import :: c_int
      integer(c_int), value :: base
    end subroutine c_op_set_index_base

    subroutine c_op_rank(rank) bind(C, name="op_rank")
      import :: c_int
      integer(c_int), intent(out) :: rank
    end subroutine c_op_rank

    function c_op_num_ranks() bind(C, name="op_num_ranks") result(n)
      import :: c_int
      integer(c_int) :: n
    end function c_op_num_ranks

    subroutine c_op_mpi_barrier() bind(C, name="op_mpi_barrier")
    end subroutine c_op_mpi_barrier

    subroutine c_op_mpi_init(argc, argv, diags, global_comm, local_comm) bind(C, name="op_mpi_init")
      import :: c_int, c_ptr
      integer(c_int), value :: argc
      type(c_ptr), intent(in) :: argv(*)
      integer(c_int), value :: diags, global_comm, local_comm
    end subroutine c_op_mpi_init

    subroutine c_op_partition(lib, routine, prime_set, prime_map, coords) bind(C, name="op_partition")
      import :: c_ptr, c_char
      character(kind=c_char), intent(in) :: lib(*)
      type(c_ptr), value :: routine
      type(c_ptr), value :: prime_set, prime_map, coords
    end subroutine c_op_partition

    function c_op_get_global_set_offset(set) bind(C, name="op_get_global_set_offset") result(n)
      import :: c_ptr, c_long_long
      type(c_ptr), value :: set
      integer(c_long_long) :: n
    end function c_op_get_global_set_offset

    subroutine c_op_upload_all() bind(C, name="op_upload_all")
    end subroutine c_op_upload_all

    subroutine c_op_upload_dat(dat) bind(C, name="op_upload_dat")
      import :: c_ptr
      type(c_ptr), value :: dat
    end subroutine c_op_upload_dat

    subroutine c_op_download_dat(dat) bind(C, name="op_download_dat")
      import :: c_ptr
      type(c_ptr), value :: dat
    end subroutine c_op_download_dat
  end interface

  ! Matrices.
  interface
    function c_op_decl_sparsity(rowmap, colmap, name) bind(C, name="op_decl_sparsity") result(h)
      import :: c_ptr, c_char
      type(c_ptr), value :: rowmap, colmap
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_sparsity

    function c_op_decl_sparsity_pairs(npairs, rowmaps, colmaps, name) &
        bind(C, name="op_decl_sparsity_pairs") result(h)
      import :: c_ptr, c_char, c_int
      integer(c_int), value :: npairs
      type(c_ptr), intent(in) :: rowmaps(*), colmaps(*)
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr) :: h
    end function c_op_decl_sparsity_pairs

    function c_op_decl_mat(sparsity, rdim, cdim, type, name) bind(C, name="op_decl_mat") result(h)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: sparsity
      integer(c_int), value :: rdim, cdim
      character(kind=c_char), intent(in) :: type(*), name(*)
      type(c_ptr) :: h
    end function c_op_decl_mat

    function c_op_arg_mat(mat, ridx, rowmap, cidx, colmap, type, acc) bind(C, name="op_arg_mat") result(a)
      import :: c_ptr, c_char, c_int, op_arg
      type(c_ptr), value :: mat, rowmap, colmap
      integer(c_int), value :: ridx, cidx, acc
      character(kind=c_char), intent(in) :: type(*)
      type(op_arg) :: a
    end function c_op_arg_mat

    subroutine c_op_mat_zero(mat) bind(C, name="op_mat_zero")
      import :: c_ptr
      type(c_ptr), value :: mat
    end subroutine c_op_mat_zero

    subroutine c_op_mat_zero_rows(mat, n, rows, diag) bind(C, name="op_mat_zero_rows")
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: mat
      integer(c_int), value :: n
      integer(c_int), intent(in) :: rows(*)
      real(c_double), value :: diag
    end subroutine c_op_mat_zero_rows

    subroutine c_op_mat_assemble(mat) bind(C, name="op_mat_assemble")
      import :: c_ptr
      type(c_ptr), value :: mat
    end subroutine c_op_mat_assemble

    subroutine c_op_mat_mult(mat, x, y) bind(C, name="op_mat_mult")
      import :: c_ptr
      type(c_ptr), value :: mat, x, y
    end subroutine c_op_mat_mult

    function c_op_mat_nnz(mat) bind(C, name="op_mat_nnz") result(n)
      import :: c_ptr, c_long_long
      type(c_ptr), value :: mat
      integer(c_long_long) :: n
    end function c_op_mat_nnz

    subroutine c_op_fetch_mat_csr(mat, rowptr, colidx, values) bind(C, name="op_fetch_mat_csr")
      import :: c_ptr
      type(c_ptr), value :: mat, rowptr, colidx, values
    end subroutine c_op_fetch_mat_csr

    function c_op_solve(mat, b, x, options) bind(C, name="op_solve") result(its)
      import :: c_ptr, c_int
      type(c_ptr), value :: mat, b, x, options
      integer(c_int) :: its
    end function c_op_solve
  end interface

contains

  ! =============================================================================================
  ! Lifecycle
  ! =============================================================================================

  !> Start op2. Like `op_init(argc, argv, diags)` in a C main: the program's command-line
  !> arguments of the form NAME=VALUE (for example `OP2_BACKEND=threads`) are handed to libop2,
  !> as OP2's C programs do; other arguments stay the program's own. The environment is read by
  !> libop2 itself. `backend` adds the token `OP2_BACKEND=<backend>`, `tokens` adds more
  !> NAME=VALUE tokens; both come after the command line. `diags`: diagnostics level (default 0).
  subroutine op_init(diags, backend, tokens)
    integer, intent(in), optional :: diags
    character(len=*), intent(in), optional :: backend
    character(len=*), intent(in), optional :: tokens(:)
    call init_session(diags, backend, tokens)
  end subroutine op_init

  !> Start op2 on an MPI communicator: `global_comm` is the communicator's Fortran handle (an
  !> integer, as `MPI_COMM_WORLD` is in the `mpi` module); `local_comm` is accepted and unused.
  !> MPI is initialised first if the program has not. The other arguments are op_init's.
  subroutine op_mpi_init(global_comm, local_comm, diags, backend, tokens)
    integer, intent(in) :: global_comm, local_comm
    integer, intent(in), optional :: diags
    character(len=*), intent(in), optional :: backend
    character(len=*), intent(in), optional :: tokens(:)
    call init_session(diags, backend, tokens, [global_comm, local_comm])
  end subroutine op_mpi_init

  ! op_init and op_mpi_init (with `comms`: global and local communicator handles).
  subroutine init_session(diags, backend, tokens, comms)
    integer, intent(in), optional :: diags
    character(len=*), intent(in), optional :: backend
    character(len=*), intent(in), optional :: tokens(:)
    integer, intent(in), optional :: comms(2)

    type :: string
      character(len=:), allocatable :: s
    end type string
    type(string), allocatable :: words(:)
    character(len=:), allocatable :: arg
    character(kind=c_char), allocatable, target :: buf(:)
    type(c_ptr), allocatable :: argv(:)
    integer :: n, ntokens, i, k, pos, length, diag_level

    call check_op_arg_size()

    ! argv[0] is the program name, as in C; then the tokens.
    n = 0
    ntokens = 0
    if (present(tokens)) ntokens = size(tokens)
    allocate(words(1 + command_argument_count() + 1 + ntokens))
    do i = 0, command_argument_count()
      call get_command_argument(i, length=length)
      allocate(character(len=length) :: arg)
      if (length > 0) call get_command_argument(i, arg)
      if (i == 0 .or. is_token(arg)) then
        n = n + 1
        call move_alloc(arg, words(n)%s)
      else
        deallocate(arg)
      end if
    end do
    if (present(backend)) then
      n = n + 1
      words(n)%s = 'OP2_BACKEND=' // trim(backend)
    end if
    do i = 1, ntokens
      n = n + 1
      words(n)%s = trim(tokens(i))
    end do

    ! One NUL-separated buffer holds every string; argv points into it.
    allocate(buf(sum([(len(words(i)%s) + 1, i = 1, n)])))
    allocate(argv(n + 1))
    pos = 1
    do i = 1, n
      argv(i) = c_loc(buf(pos))
      do k = 1, len(words(i)%s)
        buf(pos) = words(i)%s(k:k)
        pos = pos + 1
      end do
      buf(pos) = c_null_char
      pos = pos + 1
    end do
    argv(n + 1) = c_null_ptr                     ! argv[argc] is NULL, as in C

    diag_level = 0
    if (present(diags)) diag_level = diags
    if (present(comms)) then
      call c_op_mpi_init(int(n, c_int), argv, int(diag_level, c_int), int(comms(1), c_int), int(comms(2), c_int))
    else
      call c_op_init(int(n, c_int), argv, int(diag_level, c_int))
    end if
    ! Messages in Fortran's numbering (only after an op_init that worked: otherwise the
    ! recorded error must stay op_init's).
    if (c_op_last_error_code() == OP2_SUCCESS) call c_op_set_index_base(1_c_int)

  contains

    logical function is_token(arg)
      character(len=*), intent(in) :: arg
      is_token = index(arg, '=') > 1 .and. arg(1:min(1, len(arg))) /= '-'
    end function is_token
  end subroutine init_session

  !> Partition the sets over the MPI processes (after the declarations, before the first loop):
  !> `lib` 'BLOCK', 'RANDOM', 'RCB' (on `coords`), 'PARMETIS'/'PTSCOTCH' with routine 'KWAY'
  !> (the graph of `prime_map`, distributed), 'PARMETIS' with 'GEOMKWAY' (the same with
  !> `coords` on the to-set of `prime_map`), 'METIS' with 'KWAY' (the graph gathered: small
  !> runs), or 'PARMETIS'/'PTSCOTCH' with routine 'GEOM' (RCB on `coords`). `routine` may be blank, and is ignored for 'BLOCK' and 'RANDOM' (OP2's Airfoil
  !> passes 'ANY'); `prime_map` may be OP_ID; `coords` may be omitted. On one process it only
  !> checks.
  subroutine op_partition(lib, routine, prime_set, prime_map, coords)
    character(len=*), intent(in) :: lib, routine
    type(op_set), intent(in) :: prime_set
    type(op_map), intent(in) :: prime_map
    type(op_dat), intent(in), optional :: coords
    character(kind=c_char, len=len_trim(routine) + 1), target :: r
    type(c_ptr) :: rp, cp
    r = cstr(routine)
    rp = c_null_ptr
    if (len_trim(routine) > 0) rp = c_loc(r)
    cp = c_null_ptr
    if (present(coords)) cp = coords%handle
    call c_op_partition(cstr(lib), rp, prime_set%handle, prime_map%handle, cp)
  end subroutine op_partition

  !> Free everything op2 holds; a later op_init starts afresh.
  subroutine op_exit()
    call c_op_exit()
  end subroutine op_exit

  ! The module's op_arg must be exactly the library's: a mismatch would corrupt every loop.
  subroutine check_op_arg_size()
    integer :: lib_bytes, mod_bytes
    character(len=160) :: msg
    lib_bytes = int(c_op_arg_size())
    mod_bytes = storage_size(op_arg()) / 8
    if (lib_bytes /= mod_bytes) then
      write(msg, '(a,i0,a,i0,a)') 'op_init: op_arg is ', lib_bytes, ' bytes in libop2 but ', &
        mod_bytes, ' in the Fortran module op2; use the op2.F90 installed with this libop2'
      call fortran_error(OP2_ERR_INTERNAL, trim(msg))
    end if
  end subroutine check_op_arg_size

  ! =============================================================================================
  ! Declarations
  ! =============================================================================================

  !> A set of `size` elements.
  function op_decl_set(size, name) result(set)
    integer, intent(in) :: size
    character(len=*), intent(in) :: name
    type(op_set) :: set
    set%handle = c_op_decl_set(int(size, c_int), cstr(name))
  end function op_decl_set

  !> A map from `from` to `to` with `dim` entries per element. `imap` holds 1-based indices of
  !> `to` elements, laid out imap(dim, size of from) (any rank, contiguous). libop2 copies it.
  function op_decl_map(from, to, dim, imap, name) result(map)
    type(op_set), intent(in) :: from, to
    integer, intent(in) :: dim
    integer(c_int), intent(in), target, contiguous :: imap(..)
    character(len=*), intent(in) :: name
    type(op_map) :: map

    integer(c_int), pointer :: flat(:)
    integer(c_int), allocatable :: zero_based(:)

    call check_size('op_decl_map', name, size(imap, kind=c_int64_t), from, dim)
    allocate(zero_based(max(1, size(imap))))     ! at least one: a valid address when empty
    zero_based(1) = 0
    if (size(imap) > 0) then
      call c_f_pointer(c_loc(imap), flat, [size(imap)])
      zero_based(1:size(imap)) = flat - 1_c_int
    end if
    map%handle = c_op_decl_map(from%handle, to%handle, int(dim, c_int), zero_based, cstr(name))
  end function op_decl_map

  !> op_decl_map with 64-bit entries (OP2's op_decl_map_long): `imap` holds dim 1-based entries
  !> per element of `from` (integer(8), any rank, contiguous); libop2 checks each against `to`
  !> (an entry beyond it, however large, is OP2_ERR_MAP_OUT_OF_RANGE naming it) and copies them.
  function op_decl_map_long(from, to, dim, imap, name) result(map)
    type(op_set), intent(in) :: from, to
    integer, intent(in) :: dim
    integer(c_long_long), intent(in), target, contiguous :: imap(..)
    character(len=*), intent(in) :: name
    type(op_map) :: map

    integer(c_long_long), pointer :: flat(:)
    integer(c_long_long), allocatable :: zero_based(:)

    call check_size('op_decl_map_long', name, size(imap, kind=c_int64_t), from, dim)
    allocate(zero_based(max(1, size(imap))))     ! at least one: a valid address when empty
    zero_based(1) = 0
    if (size(imap) > 0) then
      call c_f_pointer(c_loc(imap), flat, [size(imap)])
      zero_based(1:size(imap)) = flat - 1_c_long_long
    end if
    map%handle = c_op_decl_map_long(from%handle, to%handle, int(dim, c_int), zero_based, cstr(name))
  end function op_decl_map_long

  !> A dat of `dim` values per element of `set`, initialised from `data` (laid out data(dim, n),
  !> any rank, contiguous); the type is that of `data`. libop2 copies the values.
  ! BEGIN GENERATED op_decl_dat (tools/gen_fortran.py writes it: edit there, then run it)
  function op_decl_dat_r8(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    real(c_double), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, 'double', data_ptr(c_loc(data), size(data)), name)
  end function op_decl_dat_r8

  function op_decl_dat_r4(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    real(c_float), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, 'float', data_ptr(c_loc(data), size(data)), name)
  end function op_decl_dat_r4

  function op_decl_dat_i4(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    integer(c_int), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, 'int', data_ptr(c_loc(data), size(data)), name)
  end function op_decl_dat_i4

  function op_decl_dat_i8(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    integer(c_long_long), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, 'll', data_ptr(c_loc(data), size(data)), name)
  end function op_decl_dat_i8

  function op_decl_dat_b(set, dim, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    logical(c_bool), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    call check_size('op_decl_dat', name, size(data, kind=c_int64_t), set, dim)
    dat = decl_dat(set, dim, 'bool', data_ptr(c_loc(data), size(data)), name)
  end function op_decl_dat_b
  ! END GENERATED op_decl_dat

  !> A dat of zeros: `type` is a C type string ("double", "int", ...) or a Fortran spelling
  !> ("real(8)", "integer", ...).
  function op_decl_dat_zero(set, dim, type, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    dat = decl_dat(set, dim, c_type_name(type), c_null_ptr, name)
  end function op_decl_dat_zero

  function decl_dat(set, dim, ctype, data, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    character(len=*), intent(in) :: ctype
    type(c_ptr), intent(in) :: data
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    dat%handle = c_op_decl_dat(set%handle, int(dim, c_int), cstr(ctype), data, cstr(name))
  end function decl_dat

  !> A constant visible to every kernel as a global called `name`, of `dim` values of the type
  !> of `data` (a scalar or an array). Declaring the same name again changes the value.
  ! BEGIN GENERATED op_decl_const (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_decl_const_r8(dim, data, name)
    integer, intent(in) :: dim
    real(c_double), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('double'), c_loc(data), cstr(name))
  end subroutine op_decl_const_r8

  subroutine op_decl_const_r4(dim, data, name)
    integer, intent(in) :: dim
    real(c_float), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('float'), c_loc(data), cstr(name))
  end subroutine op_decl_const_r4

  subroutine op_decl_const_i4(dim, data, name)
    integer, intent(in) :: dim
    integer(c_int), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('int'), c_loc(data), cstr(name))
  end subroutine op_decl_const_i4

  subroutine op_decl_const_i8(dim, data, name)
    integer, intent(in) :: dim
    integer(c_long_long), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('ll'), c_loc(data), cstr(name))
  end subroutine op_decl_const_i8

  subroutine op_decl_const_b(dim, data, name)
    integer, intent(in) :: dim
    logical(c_bool), intent(in), target, contiguous :: data(..)
    character(len=*), intent(in) :: name
    call check_count('op_decl_const', name, size(data, kind=c_int64_t), dim)
    call c_op_decl_const(int(dim, c_int), cstr('bool'), c_loc(data), cstr(name))
  end subroutine op_decl_const_b
  ! END GENERATED op_decl_const

  !> A kernel: `source` is C99 text defining a function called `name` (see op2.h). Build it with
  !> new_line('a') between lines, or read it from a file.
  function op_decl_kernel(source, name) result(kernel)
    character(len=*), intent(in) :: source
    character(len=*), intent(in) :: name
    type(op_kernel) :: kernel
    kernel%handle = c_op_decl_kernel(cstr(source), cstr(name))
  end function op_decl_kernel

  ! =============================================================================================
  ! Loop arguments
  ! =============================================================================================

  !> A dat argument. `idx`: 1..dim of `map` for one map entry, -1 with OP_ID for direct access,
  !> -N (N = the map's dim) for all entries. `type`: the dat's type, as a C type string or a
  !> Fortran spelling ("real(8)" = "double").
  function op_arg_dat(dat, idx, map, dim, type, acc) result(arg)
    type(op_dat), intent(in) :: dat
    integer, intent(in) :: idx
    type(op_map), intent(in) :: map
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type
    integer, intent(in) :: acc
    type(op_arg) :: arg
    arg = c_op_arg_dat(dat%handle, c_idx(idx), map%handle, int(dim, c_int), &
                       cstr(c_type_name(type)), int(acc, c_int))
  end function op_arg_dat

  !> op_arg_dat that takes part only when `opt` is true (otherwise the kernel gets a pointer it
  !> must not use).
  function op_opt_arg_dat(opt, dat, idx, map, dim, type, acc) result(arg)
    logical, intent(in) :: opt
    type(op_dat), intent(in) :: dat
    integer, intent(in) :: idx
    type(op_map), intent(in) :: map
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type
    integer, intent(in) :: acc
    type(op_arg) :: arg
    arg = c_op_opt_arg_dat(merge(1_c_int, 0_c_int, opt), dat%handle, c_idx(idx), map%handle, &
                           int(dim, c_int), cstr(c_type_name(type)), int(acc, c_int))
  end function op_opt_arg_dat

  !> A global argument of `dim` values of the type of `data`. OP_READ: kernels read it;
  !> OP_INC / OP_MIN / OP_MAX: the combined result is in `data` when op_par_loop returns.
  !> `data` is used by address until then: give a `target` variable (scalar or contiguous array).
  ! BEGIN GENERATED op_arg_gbl (tools/gen_fortran.py writes it: edit there, then run it)
  function op_arg_gbl_r8(data, dim, acc) result(arg)
    real(c_double), intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('double'), &
                       int(acc, c_int))
  end function op_arg_gbl_r8

  function op_arg_gbl_r4(data, dim, acc) result(arg)
    real(c_float), intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('float'), &
                       int(acc, c_int))
  end function op_arg_gbl_r4

  function op_arg_gbl_i4(data, dim, acc) result(arg)
    integer(c_int), intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('int'), &
                       int(acc, c_int))
  end function op_arg_gbl_i4

  function op_arg_gbl_i8(data, dim, acc) result(arg)
    integer(c_long_long), intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('ll'), &
                       int(acc, c_int))
  end function op_arg_gbl_i8

  function op_arg_gbl_b(data, dim, acc) result(arg)
    logical(c_bool), intent(inout), target :: data(..)
    integer, intent(in) :: dim, acc
    type(op_arg) :: arg
    call check_gbl('op_arg_gbl', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_gbl(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('bool'), &
                       int(acc, c_int))
  end function op_arg_gbl_b
  ! END GENERATED op_arg_gbl

  !> A payload that follows the OP_MIN / OP_MAX global at position `ref` (1-based) of the same
  !> op_par_loop argument array: the kernel gets a copy and writes it with the winning value,
  !> and the winner's payload is in `data` when op_par_loop returns. `target` variable, as for
  !> op_arg_gbl.
  ! BEGIN GENERATED op_arg_info (tools/gen_fortran.py writes it: edit there, then run it)
  function op_arg_info_r8(data, dim, ref) result(arg)
    real(c_double), intent(inout), target :: data(..)
    integer, intent(in) :: dim, ref
    type(op_arg) :: arg
    call check_gbl('op_arg_info', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_info(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('double'), &
                       c_ref(ref))
  end function op_arg_info_r8

  function op_arg_info_r4(data, dim, ref) result(arg)
    real(c_float), intent(inout), target :: data(..)
    integer, intent(in) :: dim, ref
    type(op_arg) :: arg
    call check_gbl('op_arg_info', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_info(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('float'), &
                       c_ref(ref))
  end function op_arg_info_r4

  function op_arg_info_i4(data, dim, ref) result(arg)
    integer(c_int), intent(inout), target :: data(..)
    integer, intent(in) :: dim, ref
    type(op_arg) :: arg
    call check_gbl('op_arg_info', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_info(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('int'), &
                       c_ref(ref))
  end function op_arg_info_i4

  function op_arg_info_i8(data, dim, ref) result(arg)
    integer(c_long_long), intent(inout), target :: data(..)
    integer, intent(in) :: dim, ref
    type(op_arg) :: arg
    call check_gbl('op_arg_info', size(data, kind=c_int64_t), dim, is_contiguous(data))
    arg = c_op_arg_info(data_ptr(c_loc(data), size(data)), int(dim, c_int), cstr('ll'), &
                       c_ref(ref))
  end function op_arg_info_i8
  ! END GENERATED op_arg_info

  !> The kernel gets an int*: with OP_ID and idx = -1 the element's own index, with a map and
  !> idx = k (1-based) the map's k-th entry for the element. The value is 0-based (C).
  function op_arg_idx(idx, map) result(arg)
    integer, intent(in) :: idx
    type(op_map), intent(in) :: map
    type(op_arg) :: arg
    arg = c_op_arg_idx(c_idx(idx), map%handle)
  end function op_arg_idx

  ! =============================================================================================
  ! Loops
  ! =============================================================================================

  !> Run `kernel` once per element of `set` with one pointer per entry of `args`, in order:
  !>   call op_par_loop(k, 'update', cells, [op_arg_dat(...), op_arg_gbl(rms, 1, OP_INC)])
  subroutine op_par_loop(kernel, name, set, args)
    type(op_kernel), intent(in) :: kernel
    character(len=*), intent(in) :: name
    type(op_set), intent(in) :: set
    type(op_arg), intent(in) :: args(:)
    call c_op_par_loop(kernel%handle, cstr(name), set%handle, int(size(args), c_int), args)
  end subroutine op_par_loop

  !> Run the compiled subroutine `fn` (`c_funloc(sub)`) once per element of `set`, with the
  !> address of each argument's data, as OP2's op_par_loop_N does (see op2_fortran_reference):
  !> `sub`'s dummies are explicit-shape arrays or scalars, one per entry of `args`, in order;
  !> an op_arg_idx dummy gets a 1-based index. `name` names the loop in timings and messages;
  !> '' derives one from the subroutine's symbol. Host backends only (a device backend
  !> refuses it with OP2_ERR_BACKEND_UNAVAILABLE).
  subroutine op_par_loop_fptr(fn, name, set, args)
    type(c_funptr), intent(in) :: fn
    character(len=*), intent(in) :: name
    type(op_set), intent(in) :: set
    type(op_arg), intent(in) :: args(:)
    character(kind=c_char, len=len_trim(name) + 1), target :: n
    type(c_ptr) :: np
    n = cstr(name)
    np = c_null_ptr
    if (len_trim(name) > 0) np = c_loc(n)
    call c_op_par_loop_fptr(fn, np, set%handle, int(size(args), c_int), args)
  end subroutine op_par_loop_fptr

  !> OP2's op_par_loop with a C kernel function (what op_seq.h's op_par_loop calls): `fn` is
  !> the kernel's address (`c_funloc` of a bind(C) procedure, or a C function's), `kernel` its
  !> name: op2 compiles `<kernel>.h` from the directory of `file` (the calling source; '' for
  !> none) or OP2_KERNEL_PATH into the loop (JIT tier, every backend), else calls `fn` once per
  !> element with one address per argument (host backends). Indices (op_arg_idx) are those of
  !> C kernels.
  subroutine op_par_loop_fn(fn, kernel, file, name, set, args)
    type(c_funptr), intent(in) :: fn
    character(len=*), intent(in) :: kernel, file, name
    type(op_set), intent(in) :: set
    type(op_arg), intent(in) :: args(:)
    character(kind=c_char, len=len_trim(file) + 1), target :: f
    type(c_ptr) :: fp
    f = cstr(file)
    fp = c_null_ptr
    if (len_trim(file) > 0) fp = c_loc(f)
    call c_op_par_loop_fn(fn, cstr(kernel), fp, cstr(name), set%handle, int(size(args), c_int), args)
  end subroutine op_par_loop_fn

  !> OP2's three-argument op_decl_const by address: the constant at `data` (`dim` values of
  !> `type`, `size` bytes each) is named after the variable starting there in the program's
  !> symbol table (a bind(C) module variable is its binding name); no such variable: nothing
  !> is declared (OP2_DIAGNOSTICS=1 says why).
  subroutine op_decl_const_addr(dim, type, size, data)
    integer, intent(in) :: dim, size
    character(len=*), intent(in) :: type
    type(c_ptr), intent(in) :: data
    call c_op_decl_const_addr(int(dim, c_int), cstr(type), int(size, c_int), data)
  end subroutine op_decl_const_addr

  ! =============================================================================================
  ! Data, output and diagnostics
  ! =============================================================================================

  !> Copy the dat's values into `data` (laid out data(dim, n), contiguous, of the dat's type and
  !> at least dim * set size values: libop2 cannot check this for Fortran).
  ! BEGIN GENERATED op_fetch_data (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_fetch_data_r8(dat, data)
    type(op_dat), intent(in) :: dat
    real(c_double), intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine op_fetch_data_r8

  subroutine op_fetch_data_r4(dat, data)
    type(op_dat), intent(in) :: dat
    real(c_float), intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine op_fetch_data_r4

  subroutine op_fetch_data_i4(dat, data)
    type(op_dat), intent(in) :: dat
    integer(c_int), intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine op_fetch_data_i4

  subroutine op_fetch_data_i8(dat, data)
    type(op_dat), intent(in) :: dat
    integer(c_long_long), intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine op_fetch_data_i8

  subroutine op_fetch_data_b(dat, data)
    type(op_dat), intent(in) :: dat
    logical(c_bool), intent(inout), target, contiguous :: data(..)
    call c_op_fetch_data(dat%handle, data_ptr(c_loc(data), size(data)))
  end subroutine op_fetch_data_b
  ! END GENERATED op_fetch_data

  !> Copy elements low..high (1-based, inclusive) of the dat into `data`.
  ! BEGIN GENERATED op_fetch_data_idx (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_fetch_data_idx_r8(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    real(c_double), intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine op_fetch_data_idx_r8

  subroutine op_fetch_data_idx_r4(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    real(c_float), intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine op_fetch_data_idx_r4

  subroutine op_fetch_data_idx_i4(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    integer(c_int), intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine op_fetch_data_idx_i4

  subroutine op_fetch_data_idx_i8(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    integer(c_long_long), intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine op_fetch_data_idx_i8

  subroutine op_fetch_data_idx_b(dat, data, low, high)
    type(op_dat), intent(in) :: dat
    logical(c_bool), intent(inout), target, contiguous :: data(..)
    integer, intent(in) :: low, high
    call c_op_fetch_data_idx(dat%handle, data_ptr(c_loc(data), size(data)), &
                             int(low - 1, c_int), int(high - 1, c_int))
  end subroutine op_fetch_data_idx_b
  ! END GENERATED op_fetch_data_idx

  !> Bytes copied host to device and device to host for `dat` since its declaration (0 and 0
  !> on host backends; dats stay on the device between loops).
  subroutine op_dat_transfers(dat, to_device, to_host)
    type(op_dat), intent(in) :: dat
    integer(c_int64_t), intent(out) :: to_device, to_host
    integer(c_long_long) :: up, down
    call c_op_dat_transfers(dat%handle, up, down)
    to_device = int(up, c_int64_t)
    to_host = int(down, c_int64_t)
  end subroutine op_dat_transfers

  !> The number of elements of `set` (over all ranks).
  function op_get_size(set) result(n)
    type(op_set), intent(in) :: set
    integer(c_int64_t) :: n
    n = int(c_op_get_size(set%handle), c_int64_t)
  end function op_get_size

  !> Write the dat to a text file in OP2's format: `<set size> <dim>`, then one line per element
  !> (values as C's " %+2.15lE" for double, " %+f" float, " %+d" int), declared order.
  subroutine op_print_dat_to_txtfile(dat, file)
    type(op_dat), intent(in) :: dat
    character(len=*), intent(in) :: file
    call c_op_print_dat_to_txtfile(dat%handle, cstr(file))
  end subroutine op_print_dat_to_txtfile

  !> Writes a VTK unstructured grid (.vtu or .vtk by extension): cells from `cells`, points
  !> from `coords`, each of `dats` as point or cell data; flags default OP_VTK_BINARY.
  subroutine op_write_vtk(file, cells, coords, dats, flags)
    character(len=*), intent(in) :: file
    type(op_map), intent(in) :: cells
    type(op_dat), intent(in) :: coords
    type(op_dat), intent(in) :: dats(:)
    integer, intent(in), optional :: flags
    type(c_ptr) :: handles(max(1, size(dats)))
    integer(c_int) :: f
    integer :: i
    f = OP_VTK_BINARY
    if (present(flags)) f = int(flags, c_int)
    handles = c_null_ptr
    do i = 1, size(dats)
      handles(i) = dats(i)%handle
    end do
    call c_op_write_vtk(cstr(file), cells%handle, coords%handle, int(size(dats), c_int), handles, f)
  end subroutine op_write_vtk

  !> op_decl_set_hdf5: a set whose size is stored in dataset `name` of HDF5 file `file`.
  function op_decl_set_hdf5(file, name) result(set)
    character(len=*), intent(in) :: file, name
    type(op_set) :: set
    set%handle = c_op_decl_set_hdf5(cstr(file), cstr(name))
  end function op_decl_set_hdf5

  !> op_decl_map_hdf5: a map read from an HDF5 file (entries stored 0-based, as OP2 writes them).
  function op_decl_map_hdf5(from, to, dim, file, name) result(map)
    type(op_set), intent(in) :: from, to
    integer, intent(in) :: dim
    character(len=*), intent(in) :: file, name
    type(op_map) :: map
    map%handle = c_op_decl_map_hdf5(from%handle, to%handle, int(dim, c_int), cstr(file), cstr(name))
  end function op_decl_map_hdf5

  !> op_decl_dat_hdf5: a dat read from an HDF5 file; `type` as in op_decl_dat ('real(8)', 'double', ...).
  function op_decl_dat_hdf5(set, dim, type, file, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    character(len=*), intent(in) :: type, file, name
    type(op_dat) :: dat
    dat%handle = c_op_decl_dat_hdf5(set%handle, int(dim, c_int), cstr(c_type_name(type)), cstr(file), cstr(name))
  end function op_decl_dat_hdf5

  !> The type string given to op_get/write_const_hdf5 must name the Fortran type of `data`.
  subroutine check_const_type(call, name, type, ctype)
    character(len=*), intent(in) :: call, name, type, ctype
    if (c_type_name(type) /= ctype) then
      write(error_unit, '(a)') 'op2 error: ' // call // ' ''' // name // ''': type ''' // type // &
        ''' does not match the Fortran data (' // ctype // ')'
      error stop 2
    end if
  end subroutine check_const_type

  ! BEGIN GENERATED op_get_const_hdf5 (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_get_const_hdf5_r8(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(8), intent(inout), target :: data(*)
    call check_const_type('op_get_const_hdf5', name, type, 'double')
    call c_op_get_const_hdf5(cstr(name), int(dim, c_int), cstr('double'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_r8

  subroutine op_get_const_hdf5_r4(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(4), intent(inout), target :: data(*)
    call check_const_type('op_get_const_hdf5', name, type, 'float')
    call c_op_get_const_hdf5(cstr(name), int(dim, c_int), cstr('float'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_r4

  subroutine op_get_const_hdf5_i4(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(4), intent(inout), target :: data(*)
    call check_const_type('op_get_const_hdf5', name, type, 'int')
    call c_op_get_const_hdf5(cstr(name), int(dim, c_int), cstr('int'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_i4

  subroutine op_get_const_hdf5_i8(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(8), intent(inout), target :: data(*)
    call check_const_type('op_get_const_hdf5', name, type, 'll')
    call c_op_get_const_hdf5(cstr(name), int(dim, c_int), cstr('ll'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_i8

  subroutine op_get_const_hdf5_r8s(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(8), intent(inout), target :: data
    call check_const_type('op_get_const_hdf5', name, type, 'double')
    if (dim /= 1) then
      write(error_unit, '(a)') 'op2 error: op_get_const_hdf5 ''' // name // ''': a scalar needs dim 1'
      error stop 2
    end if
    call c_op_get_const_hdf5(cstr(name), 1_c_int, cstr('double'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_r8s

  subroutine op_get_const_hdf5_i4s(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(4), intent(inout), target :: data
    call check_const_type('op_get_const_hdf5', name, type, 'int')
    if (dim /= 1) then
      write(error_unit, '(a)') 'op2 error: op_get_const_hdf5 ''' // name // ''': a scalar needs dim 1'
      error stop 2
    end if
    call c_op_get_const_hdf5(cstr(name), 1_c_int, cstr('int'), c_loc(data), cstr(file))
  end subroutine op_get_const_hdf5_i4s
  ! END GENERATED op_get_const_hdf5

  ! BEGIN GENERATED op_write_const_hdf5 (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_write_const_hdf5_r8(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(8), intent(in), target :: data(*)
    call check_const_type('op_write_const_hdf5', name, type, 'double')
    call c_op_write_const_hdf5(cstr(name), int(dim, c_int), cstr('double'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_r8

  subroutine op_write_const_hdf5_r4(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(4), intent(in), target :: data(*)
    call check_const_type('op_write_const_hdf5', name, type, 'float')
    call c_op_write_const_hdf5(cstr(name), int(dim, c_int), cstr('float'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_r4

  subroutine op_write_const_hdf5_i4(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(4), intent(in), target :: data(*)
    call check_const_type('op_write_const_hdf5', name, type, 'int')
    call c_op_write_const_hdf5(cstr(name), int(dim, c_int), cstr('int'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_i4

  subroutine op_write_const_hdf5_i8(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(8), intent(in), target :: data(*)
    call check_const_type('op_write_const_hdf5', name, type, 'll')
    call c_op_write_const_hdf5(cstr(name), int(dim, c_int), cstr('ll'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_i8

  subroutine op_write_const_hdf5_r8s(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    real(8), intent(in), target :: data
    call check_const_type('op_write_const_hdf5', name, type, 'double')
    if (dim /= 1) then
      write(error_unit, '(a)') 'op2 error: op_write_const_hdf5 ''' // name // ''': a scalar needs dim 1'
      error stop 2
    end if
    call c_op_write_const_hdf5(cstr(name), 1_c_int, cstr('double'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_r8s

  subroutine op_write_const_hdf5_i4s(name, dim, type, data, file)
    character(len=*), intent(in) :: name, type, file
    integer, intent(in) :: dim
    integer(4), intent(in), target :: data
    call check_const_type('op_write_const_hdf5', name, type, 'int')
    if (dim /= 1) then
      write(error_unit, '(a)') 'op2 error: op_write_const_hdf5 ''' // name // ''': a scalar needs dim 1'
      error stop 2
    end if
    call c_op_write_const_hdf5(cstr(name), 1_c_int, cstr('int'), c_loc(data), cstr(file))
  end subroutine op_write_const_hdf5_i4s
  ! END GENERATED op_write_const_hdf5

  !> Writes a dat to an HDF5 file (OP2's layout; created if missing).
  subroutine op_fetch_data_hdf5_file(dat, file)
    type(op_dat), intent(in) :: dat
    character(len=*), intent(in) :: file
    call c_op_fetch_data_hdf5_file(dat%handle, cstr(file))
  end subroutine op_fetch_data_hdf5_file

  !> Writes a dat to HDF5 file `file` as the dataset `path` (groups on the way created, a
  !> dataset already there replaced): OP2's op_fetch_data_hdf5_file_path.
  subroutine op_fetch_data_hdf5_file_path(dat, file, path)
    type(op_dat), intent(in) :: dat
    character(len=*), intent(in) :: file, path
    call c_op_fetch_data_hdf5_file_path(dat%handle, cstr(file), cstr(path))
  end subroutine op_fetch_data_hdf5_file_path

  !> Writes every set, map and dat to a new HDF5 file.
  subroutine op_dump_to_hdf5(file)
    character(len=*), intent(in) :: file
    call c_op_dump_to_hdf5(cstr(file))
  end subroutine op_dump_to_hdf5

  !> Checkpointing on (see the C function): saves to `path` every `interval_s` seconds; a
  !> checkpoint already at `path` is replayed. Returns .true. when on.
  logical function op_checkpointing_init(path, interval_s, flags) result(on)
    character(len=*), intent(in) :: path
    real(8), intent(in) :: interval_s
    integer, intent(in), optional :: flags
    integer(c_int) :: f
    f = 0
    if (present(flags)) f = int(flags, c_int)
    on = c_op_checkpointing_init(cstr(path), real(interval_s, c_double), f) /= 0
  end function op_checkpointing_init

  !> A checkpoint at the next loop boundary, whatever the interval.
  subroutine op_checkpoint_now()
    call c_op_checkpoint_now()
  end subroutine op_checkpoint_now

  !> Runs every loop queued by lazy evaluation (OP2_LAZY=1) now (see the C function).
  subroutine op_flush()
    call c_op_flush()
  end subroutine op_flush

  !> Begins a loop chain: loops until op_loop_chain_end are queued and run together there;
  !> their global reductions reach the caller's variables at op_loop_chain_end.
  subroutine op_loop_chain_begin(name)
    character(len=*), intent(in) :: name
    call c_op_loop_chain_begin(cstr(name))
  end subroutine op_loop_chain_begin

  !> Ends the open loop chain: runs its loops and hands back their reductions.
  subroutine op_loop_chain_end()
    call c_op_loop_chain_end()
  end subroutine op_loop_chain_end

  !> Per loop: calls, time, achieved bandwidth.
  subroutine op_timing_output()
    call c_op_timing_output()
  end subroutine op_timing_output

  subroutine op_diagnostic_output()
    call c_op_diagnostic_output()
  end subroutine op_diagnostic_output

  !> OP2's profiling regions (see op2.h): op_profile_start opens the root region, enter/exit
  !> nest regions inside it, next = exit then enter, op_profile_end closes them all, and
  !> op_profile_output prints the tree with its wall times, then op_timing_output's report.
  !> Unbalanced calls change nothing (said with OP2_DIAGNOSTICS=1).
  subroutine op_profile_start(name)
    character(len=*), intent(in) :: name
    call c_op_profile_start(cstr(name))
  end subroutine op_profile_start

  subroutine op_profile_enter(name)
    character(len=*), intent(in) :: name
    call c_op_profile_enter(cstr(name))
  end subroutine op_profile_enter

  subroutine op_profile_enter_kernel(name, target, variant)
    character(len=*), intent(in) :: name, target, variant
    call c_op_profile_enter_kernel(cstr(name), cstr(target), cstr(variant))
  end subroutine op_profile_enter_kernel

  subroutine op_profile_next(name)
    character(len=*), intent(in) :: name
    call c_op_profile_next(cstr(name))
  end subroutine op_profile_next

  subroutine op_profile_exit()
    call c_op_profile_exit()
  end subroutine op_profile_exit

  subroutine op_profile_end()
    call c_op_profile_end()
  end subroutine op_profile_end

  subroutine op_profile_output()
    call c_op_profile_output()
  end subroutine op_profile_output

  !> True on the rank that should print (always true without MPI).
  function op_is_root() result(root)
    logical :: root
    root = c_op_is_root() /= 0
  end function op_is_root

  !> The name of the backend in use ("seq", "threads", ...).
  function op_backend_name() result(name)
    character(len=:), allocatable :: name
    name = fstr(c_op_backend_name())
  end function op_backend_name

  !> True if the backend `name` can run in this build on this machine.
  function op_backend_available(name) result(available)
    character(len=*), intent(in) :: name
    logical :: available
    available = c_op_backend_available(cstr(name)) /= 0
  end function op_backend_available

  ! =============================================================================================
  ! Errors
  ! =============================================================================================

  !> Outcome of the most recent op2 call on this thread: 0 = it succeeded, else OP2_ERR_*.
  function op_last_error_code() result(code)
    integer :: code
    code = int(c_op_last_error_code())
  end function op_last_error_code

  !> The message of the most recent error ("" after success): the call, the objects, the problem.
  function op_last_error_message() result(message)
    character(len=:), allocatable :: message
    message = fstr(c_op_last_error_message())
  end function op_last_error_message

  !> OP_ERRORS_ABORT (default: print and exit) or OP_ERRORS_RETURN (record and return). May be
  !> called before op_init.
  subroutine op_set_error_handler(mode)
    integer, intent(in) :: mode
    call c_op_set_error_handler(int(mode, c_int))
  end subroutine op_set_error_handler

  ! =============================================================================================
  ! Helpers
  ! =============================================================================================

  ! A Fortran string as a NUL-terminated C string (trailing blanks dropped: they are padding of
  ! fixed-length Fortran variables, never meaningful in op2 names, types or C source).
  pure function cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function cstr

  ! A C string owned by libop2, copied into a Fortran string ("" for NULL).
  function fstr(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function fstr

  ! The address of an array's data, or NULL when it has no elements (c_loc of a zero-sized array
  ! is not a usable address).
  function data_ptr(p, n) result(q)
    type(c_ptr), intent(in) :: p
    integer, intent(in) :: n
    type(c_ptr) :: q
    q = c_null_ptr
    if (n > 0) q = p
  end function data_ptr

  ! Globals are used by address until op_par_loop returns: only contiguous data has one address
  ! for all its values; and libop2 reads dim values there.
  subroutine check_gbl(call_name, n, dim, contiguous)
    character(len=*), intent(in) :: call_name
    integer(c_int64_t), intent(in) :: n
    integer, intent(in) :: dim
    logical, intent(in) :: contiguous
    character(len=200) :: msg
    if (.not. contiguous) then
      call fortran_error(OP2_ERR_NULL_ARGUMENT, call_name // ': the Fortran data is not ' // &
        'contiguous; pass a contiguous target array (libop2 uses it by address)')
    end if
    if (dim > 0 .and. n < dim) then
      write(msg, '(a,i0,a,i0,a)') call_name // ': dim is ', dim, ' but the Fortran data has ', &
        n, ' values'
      call fortran_error(OP2_ERR_BAD_SIZE, trim(msg))
    end if
  end subroutine check_gbl

  ! Declarations copy dim * (size of set) values: a shorter Fortran array would be read past its
  ! end by libop2, which cannot know the array's length.
  subroutine check_size(call_name, name, n, set, dim)
    character(len=*), intent(in) :: call_name, name
    integer(c_int64_t), intent(in) :: n
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim
    integer(c_int64_t) :: set_size
    character(len=300) :: msg
    ! Leave a null set, a bad dim or a failing set to libop2, which reports them with its codes.
    if (.not. c_associated(set%handle) .or. dim < 1) return
    ! Under MPI op_get_size is global while arrays hold this process's block: libop2 checks.
    if (c_op_num_ranks() > 1) return
    set_size = int(c_op_get_size(set%handle), c_int64_t)
    if (set_size < 0) return
    if (n < dim * set_size) then
      write(msg, '(a,i0,a,i0,a,i0,a)') call_name // " '" // trim(name) // &
        "': the Fortran array has ", n, ' values but dim ', dim, ' times set size ', set_size, &
        ' are needed'
      call fortran_error(OP2_ERR_BAD_SIZE, trim(msg))
    end if
  end subroutine check_size

  subroutine check_count(call_name, name, n, dim)
    character(len=*), intent(in) :: call_name, name
    integer(c_int64_t), intent(in) :: n
    integer, intent(in) :: dim
    character(len=300) :: msg
    if (dim > 0 .and. n < dim) then
      write(msg, '(a,i0,a,i0,a)') call_name // " '" // trim(name) // "': dim is ", dim, &
        ' but the Fortran data has ', n, ' values'
      call fortran_error(OP2_ERR_BAD_SIZE, trim(msg))
    end if
  end subroutine check_count

  subroutine fortran_error(code, message)
    integer, intent(in) :: code
    character(len=*), intent(in) :: message
    write(error_unit, '(a,i0,2a)') 'op2 error [', code, ']: ', message
    error stop 1
  end subroutine fortran_error

  ! Fortran's 1-based map position to C's: k >= 1 -> k - 1; -1 (direct) and -N (all entries)
  ! are the same in both. 0 has no meaning in Fortran: it becomes an index libop2 rejects
  ! (OP2_ERR_ARG_IDX) rather than silently meaning "direct".
  elemental function c_idx(idx) result(c)
    integer, intent(in) :: idx
    integer(c_int) :: c
    if (idx >= 1) then
      c = int(idx - 1, c_int)
    else if (idx == 0) then
      c = -huge(0_c_int)
    else
      c = int(idx, c_int)
    end if
  end function c_idx

  ! op_arg_info's ref: 1-based position in the Fortran argument array -> 0-based C position.
  elemental function c_ref(ref) result(c)
    integer, intent(in) :: ref
    integer(c_int) :: c
    c = int(ref - 1, c_int)
  end function c_ref

  ! A type string as C wants it: C names pass through; Fortran spellings are translated.
  function c_type_name(type) result(c)
    character(len=*), intent(in) :: type
    character(len=:), allocatable :: c
    character(len=len(type)) :: t
    integer :: i, j, code
    ! lower case, blanks removed
    t = ''
    j = 0
    do i = 1, len(type)
      code = iachar(type(i:i))
      if (type(i:i) == ' ') cycle
      j = j + 1
      if (code >= iachar('A') .and. code <= iachar('Z')) code = code + 32
      t(j:j) = achar(code)
    end do
    select case (t(1:j))
    case ('real(8)', 'real(kind=8)', 'real*8', 'doubleprecision', 'real(c_double)')
      c = 'double'
    case ('real(4)', 'real(kind=4)', 'real*4', 'real(c_float)')
      c = 'float'
    case ('integer(4)', 'integer(kind=4)', 'integer*4', 'integer(c_int)')
      c = 'int'
    case ('integer(8)', 'integer(kind=8)', 'integer*8', 'integer(c_long_long)')
      c = 'll'
    case ('logical', 'logical(c_bool)')
      c = 'bool'
    case ('real')
      c = merge('double', 'float ', kind(1.0) == c_double)
      c = trim(c)
    case ('integer')
      c = merge('int', 'll ', kind(1) == c_int)
      c = trim(c)
    case default
      c = t(1:j)
    end select
  end function c_type_name

  ! =============================================================================================
  ! More of OP2's functions
  ! =============================================================================================

  !> A kernel whose C source is read from the file `path` (errors name the file).
  function op_decl_kernel_file(path, name) result(kernel)
    character(len=*), intent(in) :: path
    character(len=*), intent(in) :: name
    type(op_kernel) :: kernel
    kernel%handle = c_op_decl_kernel_file(cstr(path), cstr(name))
  end function op_decl_kernel_file

  !> A temporary dat of zeros (`type` as in op_arg_dat, `size` the element size in bytes).
  function op_decl_dat_temp_char(set, dim, type, size, name) result(dat)
    type(op_set), intent(in) :: set
    integer, intent(in) :: dim, size
    character(len=*), intent(in) :: type
    character(len=*), intent(in) :: name
    type(op_dat) :: dat
    dat%handle = c_op_decl_dat_temp_char(set%handle, int(dim, c_int), cstr(c_type_name(type)), &
                                         int(size, c_int), cstr(name))
  end function op_decl_dat_temp_char

  !> Free a temporary dat: 1 on success (its handle is stale afterwards), 0 on error.
  function op_free_dat_temp_char(dat) result(ok)
    type(op_dat), intent(in) :: dat
    integer :: ok
    ok = int(c_op_free_dat_temp_char(dat%handle))
  end function op_free_dat_temp_char

  !> Write the dat to a binary file: count and dim as C ints, then the rows.
  subroutine op_print_dat_to_binfile(dat, file)
    type(op_dat), intent(in) :: dat
    character(len=*), intent(in) :: file
    call c_op_print_dat_to_binfile(dat%handle, cstr(file))
  end subroutine op_print_dat_to_binfile

  !> Reorder the storage of the sets linked through `base` for locality (before any loop).
  subroutine op_renumber(base)
    type(op_map), intent(in) :: base
    call c_op_renumber(base%handle)
  end subroutine op_renumber

  !> Process CPU time and wall-clock time, in seconds.
  subroutine op_timers(cpu, et)
    real(8), intent(out) :: cpu, et
    real(c_double) :: c, e
    call c_op_timers(c, e)
    cpu = c
    et = e
  end subroutine op_timers

  !> The index base of error messages: 1 (Fortran, what op_init sets) or 0 (C's numbering).
  subroutine op_set_index_base(base)
    integer, intent(in) :: base
    call c_op_set_index_base(int(base, c_int))
  end subroutine op_set_index_base

  !> This process's rank (0 without MPI).
  subroutine op_rank(rank)
    integer, intent(out) :: rank
    integer(c_int) :: r
    call c_op_rank(r)
    rank = int(r)
  end subroutine op_rank

  !> The number of processes (1 without MPI).
  function op_num_ranks() result(n)
    integer :: n
    n = int(c_op_num_ranks())
  end function op_num_ranks

  !> Wait for every process (nothing to wait for without MPI).
  subroutine op_mpi_barrier()
    call c_op_mpi_barrier()
  end subroutine op_mpi_barrier

  !> The global index of this process's first element of `set` (0 without MPI).
  function op_get_global_set_offset(set) result(n)
    type(op_set), intent(in) :: set
    integer(c_int64_t) :: n
    n = int(c_op_get_global_set_offset(set%handle), c_int64_t)
  end function op_get_global_set_offset

  !> Copy every dat to the device (nothing to do on host backends).
  subroutine op_upload_all()
    call c_op_upload_all()
  end subroutine op_upload_all

  !> Copy a dat to the device (nothing to do on host backends).
  subroutine op_upload_dat(dat)
    type(op_dat), intent(in) :: dat
    call c_op_upload_dat(dat%handle)
  end subroutine op_upload_dat

  !> Copy a dat from the device to host memory (nothing to do on host backends).
  subroutine op_download_dat(dat)
    type(op_dat), intent(in) :: dat
    call c_op_download_dat(dat%handle)
  end subroutine op_download_dat

  ! ---------------------------------------------------------------------------------------------
  ! Matrices
  ! ---------------------------------------------------------------------------------------------

  !> The sparsity of matrices with an entry (r, c) wherever an element e of the maps' common
  !> source set has r among rowmap(:, e) and c among colmap(:, e) (the diagonal too when both
  !> maps reach the same set).
  function op_decl_sparsity(rowmap, colmap, name) result(sp)
    type(op_map), intent(in) :: rowmap, colmap
    character(len=*), intent(in) :: name
    type(op_sparsity) :: sp
    sp%handle = c_op_decl_sparsity(rowmap%handle, colmap%handle, cstr(name))
  end function op_decl_sparsity

  !> The union of the sparsities of the pairs (rowmaps(i), colmaps(i)).
  function op_decl_sparsity_pairs(rowmaps, colmaps, name) result(sp)
    type(op_map), intent(in) :: rowmaps(:), colmaps(:)
    character(len=*), intent(in) :: name
    type(op_sparsity) :: sp
    type(c_ptr) :: r(max(1, size(rowmaps))), c(max(1, size(colmaps)))
    integer :: i
    r = c_null_ptr
    c = c_null_ptr
    do i = 1, size(rowmaps)
      r(i) = rowmaps(i)%handle
    end do
    do i = 1, size(colmaps)
      c(i) = colmaps(i)%handle
    end do
    sp%handle = c_op_decl_sparsity_pairs(int(min(size(rowmaps), size(colmaps)), c_int), r, c, cstr(name))
  end function op_decl_sparsity_pairs

  !> A zero matrix of rdim x cdim blocks ("double"/"real(8)" or "float"/"real(4)").
  function op_decl_mat(sparsity, rdim, cdim, type, name) result(m)
    type(op_sparsity), intent(in) :: sparsity
    integer, intent(in) :: rdim, cdim
    character(len=*), intent(in) :: type, name
    type(op_mat) :: m
    m%handle = c_op_decl_mat(sparsity%handle, int(rdim, c_int), int(cdim, c_int), &
                             cstr(c_type_name(type)), cstr(name))
  end function op_decl_mat

  !> A matrix argument: ridx/cidx = -N (the map's dim) gives the kernel the whole dense local
  !> block (row-major, C order), ridx/cidx >= 1 one block of map column ridx/cidx (1-based).
  function op_arg_mat(mat, ridx, rowmap, cidx, colmap, type, acc) result(arg)
    type(op_mat), intent(in) :: mat
    integer, intent(in) :: ridx, cidx
    type(op_map), intent(in) :: rowmap, colmap
    character(len=*), intent(in) :: type
    integer, intent(in) :: acc
    type(op_arg) :: arg
    arg = c_op_arg_mat(mat%handle, c_idx(ridx), rowmap%handle, c_idx(cidx), colmap%handle, &
                       cstr(c_type_name(type)), int(acc, c_int))
  end function op_arg_mat

  !> Sets every value to zero (the pattern stays).
  subroutine op_mat_zero(mat)
    type(op_mat), intent(in) :: mat
    call c_op_mat_zero(mat%handle)
  end subroutine op_mat_zero

  !> Dirichlet rows: rows(:) are 1-based scalar rows ((element - 1) * rdim + component); their
  !> values become 0 and their diagonal `diag`.
  subroutine op_mat_zero_rows(mat, rows, diag)
    type(op_mat), intent(in) :: mat
    integer, intent(in) :: rows(:)
    real(8), intent(in) :: diag
    integer(c_int) :: r(max(1, size(rows)))
    r = 0
    r(1:size(rows)) = int(rows - 1, c_int)
    call c_op_mat_zero_rows(mat%handle, int(size(rows), c_int), r, real(diag, c_double))
  end subroutine op_mat_zero_rows

  !> Kept for OP2 programs: matrices are assembled when op_par_loop returns.
  subroutine op_mat_assemble(mat)
    type(op_mat), intent(in) :: mat
    call c_op_mat_assemble(mat%handle)
  end subroutine op_mat_assemble

  !> y = A x.
  subroutine op_mat_mult(mat, x, y)
    type(op_mat), intent(in) :: mat
    type(op_dat), intent(in) :: x, y
    call c_op_mat_mult(mat%handle, x%handle, y%handle)
  end subroutine op_mat_mult

  !> Stored (scalar) entries of the matrix; -1 on error.
  function op_mat_nnz(mat) result(n)
    type(op_mat), intent(in) :: mat
    integer(c_int64_t) :: n
    n = int(c_op_mat_nnz(mat%handle), c_int64_t)
  end function op_mat_nnz

  !> The matrix as CSR with 1-based indices (Fortran's convention): rowptr(rows + 1),
  !> colidx(nnz), values(nnz) of the matrix's type.
  ! BEGIN GENERATED op_fetch_mat_csr (tools/gen_fortran.py writes it: edit there, then run it)
  subroutine op_fetch_mat_csr_r8(mat, rowptr, colidx, values)
    type(op_mat), intent(in) :: mat
    integer(c_int), intent(inout), target, contiguous :: rowptr(:), colidx(:)
    real(8), intent(inout), target, contiguous :: values(:)
    call c_op_fetch_mat_csr(mat%handle, c_loc(rowptr), c_loc(colidx), c_loc(values))
    rowptr = rowptr + 1
    colidx = colidx + 1
  end subroutine op_fetch_mat_csr_r8

  subroutine op_fetch_mat_csr_r4(mat, rowptr, colidx, values)
    type(op_mat), intent(in) :: mat
    integer(c_int), intent(inout), target, contiguous :: rowptr(:), colidx(:)
    real(4), intent(inout), target, contiguous :: values(:)
    call c_op_fetch_mat_csr(mat%handle, c_loc(rowptr), c_loc(colidx), c_loc(values))
    rowptr = rowptr + 1
    colidx = colidx + 1
  end subroutine op_fetch_mat_csr_r4
  ! END GENERATED op_fetch_mat_csr

  !> Solves A x = b; returns the iterations (-1 on error). `options`: PETSc's, as in C
  !> (absent: CG with Jacobi).
  function op_solve(mat, b, x, options) result(its)
    type(op_mat), intent(in) :: mat
    type(op_dat), intent(in) :: b, x
    character(len=*), intent(in), optional :: options
    integer :: its
    character(kind=c_char, len=:), allocatable, target :: opts
    if (present(options)) then
      opts = cstr(options)
      its = int(c_op_solve(mat%handle, b%handle, x%handle, c_loc(opts)))
    else
      its = int(c_op_solve(mat%handle, b%handle, x%handle, c_null_ptr))
    end if
  end function op_solve

end module op2
