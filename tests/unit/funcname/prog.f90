! SPDX-License-Identifier: GPL-2.0-or-later
! A Fortran module procedure for test-funcname to show as heat::step.
! Never run.
module heat
  implicit none
contains
  subroutine step(u, n)
    integer, intent(in) :: n
    double precision, intent(inout) :: u(n)
    integer :: i
    do i = 2, n - 1
      u(i) = 0.5d0 * (u(i - 1) + u(i + 1))
    end do
  end subroutine step
end module heat

program main
  use heat
  implicit none
  double precision :: u(8)
  u = 1.0d0
  call step(u, 8)
  print *, u(4)
end program main
