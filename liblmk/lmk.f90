! SPDX-License-Identifier: LGPL-2.1-or-later
!
! Fortran interface to liblmk's phase markers (module lmk). Shipped as
! source: compile it together with your program, with your compiler, and
! link with `pkg-config --libs lmk`.
!
!   use lmk
!   type(lmk_site), save :: h_solve        ! one handle per call site, kept
!   call lmk_begin(h_solve, 'solve')
!   ...
!   call lmk_end(h_solve, 'solve')
!
! The name (trailing blanks ignored) is looked at only on the handle's first
! use; BEGIN and END of a region may share one handle. An optional
! where='file.f90:42' tells the daemon where the region is. Each call costs
! one call into liblmk; no string is copied after the first use.
module lmk
  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_char, c_ptr, c_null_ptr, c_null_char
  implicit none
  private

  public :: lmk_site, lmk_begin, lmk_end, lmk_region_state
  public :: LMK_REGION_OFF_RATE, LMK_REGION_OFF_ENV, LMK_REGION_OFF_FULL

  integer(c_int), parameter :: LMK_REGION_OFF_RATE = 1
  integer(c_int), parameter :: LMK_REGION_OFF_ENV = 2
  integer(c_int), parameter :: LMK_REGION_OFF_FULL = 4

  ! struct lmk_site of lmk.h; the components belong to liblmk.
  type, bind(C) :: lmk_site
    integer(c_int) :: state = 0
    integer(c_int) :: id = 0
    type(c_ptr) :: name = c_null_ptr
    type(c_ptr) :: file = c_null_ptr
    type(c_ptr) :: func = c_null_ptr
    type(c_ptr) :: dso = c_null_ptr
    type(c_ptr) :: next = c_null_ptr
    integer(c_int) :: line = 0
  end type lmk_site

  interface
    function c_site_register(site, name, name_len, where) bind(C, name='lmk_site_register')
      import :: c_int, c_size_t, c_char, lmk_site
      type(lmk_site), intent(inout) :: site
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: name_len
      character(kind=c_char), dimension(*), intent(in) :: where
      integer(c_int) :: c_site_register
    end function c_site_register

    subroutine c_site_begin(site) bind(C, name='lmk_site_begin')
      import :: lmk_site
      type(lmk_site), intent(inout) :: site
    end subroutine c_site_begin

    subroutine c_site_end(site) bind(C, name='lmk_site_end')
      import :: lmk_site
      type(lmk_site), intent(inout) :: site
    end subroutine c_site_end

    function c_region_state(name) bind(C, name='lmk_region_state')
      import :: c_int, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int) :: c_region_state
    end function c_region_state
  end interface

contains

  ! Region id (> 0), or a negative errno for an empty name.
  function site_register(site, name, where) result(id)
    type(lmk_site), intent(inout) :: site
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: where
    integer(c_int) :: id

    if (present(where)) then
      id = c_site_register(site, name, len_trim(name, kind=c_size_t), trim(where) // c_null_char)
    else
      id = c_site_register(site, name, len_trim(name, kind=c_size_t), c_null_char)
    end if
  end function site_register

  subroutine lmk_begin(site, name, where)
    type(lmk_site), intent(inout) :: site
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: where

    if (site%id == 0) then
      if (site_register(site, name, where) <= 0) return
    end if
    call c_site_begin(site)
  end subroutine lmk_begin

  subroutine lmk_end(site, name, where)
    type(lmk_site), intent(inout) :: site
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: where

    if (site%id == 0) then
      if (site_register(site, name, where) <= 0) return
    end if
    call c_site_end(site)
  end subroutine lmk_end

  ! The region's LMK_REGION_OFF_* flags (0: on), or a negative errno
  ! (-ENOENT: no such region yet).
  function lmk_region_state(name) result(flags)
    character(len=*), intent(in) :: name
    integer(c_int) :: flags

    flags = c_region_state(trim(name) // c_null_char)
  end function lmk_region_state

end module lmk
