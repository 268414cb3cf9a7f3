! SPDX-License-Identifier: GPL-2.0-or-later
!
! The Fortran module: handles register on first use, BEGIN/END push and pop
! the thread's stack, names share ids, trailing blanks do not count.
program test_fortran
  use, intrinsic :: iso_c_binding, only: c_int
  use lmk
  implicit none

  interface
    function depth() bind(C, name='test_lmk_depth')
      import :: c_int
      integer(c_int) :: depth
    end function depth

    function stack(i) bind(C, name='test_lmk_stack')
      import :: c_int
      integer(c_int), value :: i
      integer(c_int) :: stack
    end function stack
  end interface

  type(lmk_site), save :: a, b, a_again, blank

  call check(depth() == 0, 'empty stack at start')
  call lmk_begin(a, 'fortran-a')
  call check(a%id > 0, 'handle registered at first BEGIN')
  call check(depth() == 1, 'a open')
  call check(stack(0) == a%id, 'a on the stack')

  call lmk_begin(b, 'fortran-b   ', where='test-fortran.f90 main')
  call check(depth() == 2, 'b open inside a')
  call check(stack(1) == b%id, 'b on top')
  call lmk_end(b, 'fortran-b')
  call check(depth() == 1, 'b closed')

  call lmk_begin(a_again, 'fortran-a')
  call check(a_again%id == a%id, 'one id per name')
  call check(depth() == 2, 'a open twice')
  call check(stack(1) == a%id, 'a on top')
  call lmk_end(a_again, 'fortran-a')
  call lmk_end(a, 'fortran-a')
  call check(depth() == 0, 'all closed')

  call check(lmk_region_state('fortran-b') == 0, 'fortran-b on')
  call check(lmk_region_state('fortran-b  ') == 0, 'trailing blanks ignored')
  call check(lmk_region_state('no-such-region') < 0, 'unknown region')

  call lmk_begin(blank, '   ')
  call check(blank%id == 0, 'blank name not registered')
  call check(depth() == 0, 'blank name ignored')
  call lmk_end(blank, '   ')
  call check(depth() == 0, 'blank name END ignored')

  print '(a)', 'test-fortran: ok'

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what

    if (.not. cond) then
      print '(a,a)', 'FAIL: ', what
      error stop 1
    end if
  end subroutine check

end program test_fortran
