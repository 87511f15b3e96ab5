! SPDX-License-Identifier: MIT
! A Fortran program marking phases through the jobscope module (tests/integration/test_libjobscope.py).
program marks
    use jobscope
    implicit none
    integer :: ierr, i
    real(8) :: x
    call js_phase_begin("fortran-solve", ierr)
    x = 0
    do i = 1, 50000000
        x = x + sqrt(real(i, 8))
    end do
    call js_phase_end("fortran-solve   ")
    call js_event("fortran-event", '{"x": 1}', ierr)
    print '(a, i0, a, l1, a, f0.1)', 'ierr=', ierr, ' active=', js_marks_active(), ' x=', x
end program marks
