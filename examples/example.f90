! SPDX-License-Identifier: LGPL-2.1-or-later
!
! example-fortran SECONDS: liblmk's markers in a Fortran time-stepping loop.
! Each timestep spends 2 ms of CPU time in "compute" and 1 ms in "io", both
! inside "timestep" (lmkd: timestep/compute, timestep/io at 2:1).
!
!   gfortran -O2 $(pkg-config --variable=includedir lmk)/lmk.f90 example.f90 \
!       $(pkg-config --libs lmk) -o example-fortran
program example
  use lmk
  implicit none
  type(lmk_site), save :: h_timestep, h_compute, h_io
  character(len=64) :: arg
  real(8) :: seconds, compute_s, io_s
  integer(8) :: rate, start, t, timesteps
  integer :: status

  call get_command_argument(1, arg, status=status)
  if (command_argument_count() /= 1 .or. status /= 0) call usage()
  read (arg, *, iostat=status) seconds
  if (status /= 0 .or. .not. (seconds >= 0)) call usage()

  compute_s = 0
  io_s = 0
  timesteps = 0
  call system_clock(start, rate)
  do
    call system_clock(t)
    if (real(t - start, 8) / rate >= seconds) exit

    call lmk_begin(h_timestep, 'timestep', where='example.f90 main loop')

    call lmk_begin(h_compute, 'compute', where='example.f90 main loop')
    compute_s = compute_s + burn(0.002d0)
    call lmk_end(h_compute, 'compute')

    call lmk_begin(h_io, 'io', where='example.f90 main loop')
    io_s = io_s + burn(0.001d0)
    call lmk_end(h_io, 'io')

    call lmk_end(h_timestep, 'timestep')
    timesteps = timesteps + 1
  end do

  print '(a,i0,a,a,a,a,a)', '{"threads": 1, "timesteps": ', timesteps, &
       ', "compute_s": ', fixed(compute_s), ', "io_s": ', fixed(io_s), '}'

contains

  ! Floating-point work until the process used `seconds` more CPU time.
  function burn(seconds) result(used)
    real(8), intent(in) :: seconds
    real(8) :: used, x, t0, t1
    integer :: i

    x = 1
    call cpu_time(t0)
    do
      do i = 1, 2000
        x = x * 1.0000001d0 + 1d-9
      end do
      call cpu_time(t1)
      used = t1 - t0
      if (used >= seconds) exit
    end do
    if (x < 0) print *, x           ! keeps the work from being optimised away
  end function burn

  ! JSON number: f0.6 would drop the 0 before the decimal point.
  function fixed(x) result(s)
    real(8), intent(in) :: x
    character(len=:), allocatable :: s
    character(len=32) :: buf

    write (buf, '(f32.6)') x
    s = trim(adjustl(buf))
  end function fixed

  subroutine usage()
    print '(a)', 'usage: example-fortran SECONDS'
    stop 2
  end subroutine usage

end program example
