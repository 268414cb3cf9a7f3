! SPDX-License-Identifier: GPL-2.0-or-later
! A Fortran program for the function tests (tests/functions): its time in
! module procedures, which gfortran names __heat_MOD_step and lmk shows
! as heat::step.
!
!   lmk-func-fortran SECONDS
module heat
  implicit none
contains
  subroutine step(u, n, sweeps)
    integer, intent(in) :: n, sweeps
    double precision, intent(inout) :: u(n)
    integer :: s, i
    do s = 1, sweeps
      do i = 2, n - 1
        u(i) = (u(i - 1) + u(i) + u(i + 1)) / 3.0001d0
      end do
    end do
  end subroutine step

  double precision function residual(u, n, times)
    integer, intent(in) :: n, times
    double precision, intent(in) :: u(n)
    integer :: t, i
    residual = 0
    do t = 1, times
      do i = 1, n
        residual = residual * 0.999d0 + u(i)
      end do
    end do
  end function residual
end module heat

program main
  use heat
  implicit none
  integer, parameter :: n = 4096
  double precision :: u(n), r, seconds
  integer(8) :: t0, t, rate
  character(len=32) :: arg

  if (command_argument_count() /= 1) then
    write (0, *) 'usage: lmk-func-fortran SECONDS'
    stop 2
  end if
  call get_command_argument(1, arg)
  read (arg, *) seconds
  u = 1
  r = 0
  call system_clock(t0, rate)
  do
    call step(u, n, 30)
    r = r + residual(u, n, 20)
    call system_clock(t)
    if (dble(t - t0) / dble(rate) >= seconds) exit
  end do
  if (r < 0) print *, r
end program main
