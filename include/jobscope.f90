! SPDX-License-Identifier: MIT
!
! jobscope.f90: the Fortran module of libjobscope's marks (include/jobscope.h), through bind(C) interfaces.
! Compile it with your program and link libjobscope:
!
!   gfortran -c $(pkg-config --variable=includedir jobscope)/jobscope.f90
!   gfortran prog.f90 jobscope.o $(pkg-config --libs jobscope)
!
!   use jobscope
!   call js_phase_begin("solve")
!   ...
!   call js_phase_end("solve")
!   call js_event("checkpoint", '{"step": 10}')
!
! Names are trimmed of trailing blanks (Fortran pads strings). Each subroutine takes an optional integer
! `ierr`: 0 when the mark was sent or no monitor is present, a negative errno when it was not (-22 bad name,
! -11 dropped because the monitor's queue was full, -32 the monitor has gone). Like the C functions they are
! thread-safe and never block.
module jobscope
    use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_null_char
    implicit none
    private
    public :: js_phase_begin, js_phase_end, js_event, js_marks_active, js_marks_dropped

    interface
        function c_phase_begin(name) bind(C, name="js_phase_begin") result(r)
            import :: c_char, c_int
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int) :: r
        end function c_phase_begin

        function c_phase_end(name) bind(C, name="js_phase_end") result(r)
            import :: c_char, c_int
            character(kind=c_char), dimension(*), intent(in) :: name
            integer(c_int) :: r
        end function c_phase_end

        function c_event(name, json) bind(C, name="js_event") result(r)
            import :: c_char, c_int
            character(kind=c_char), dimension(*), intent(in) :: name
            character(kind=c_char), dimension(*), intent(in) :: json
            integer(c_int) :: r
        end function c_event

        function c_marks_active() bind(C, name="js_marks_active") result(r)
            import :: c_int
            integer(c_int) :: r
        end function c_marks_active

        function c_marks_dropped() bind(C, name="js_marks_dropped") result(r)
            import :: c_int64_t
            integer(c_int64_t) :: r
        end function c_marks_dropped
    end interface

contains

    subroutine js_phase_begin(name, ierr)
        character(len=*), intent(in) :: name
        integer, intent(out), optional :: ierr
        integer(c_int) :: r
        r = c_phase_begin(trim(name) // c_null_char)
        if (present(ierr)) ierr = int(r)
    end subroutine js_phase_begin

    subroutine js_phase_end(name, ierr)
        character(len=*), intent(in) :: name
        integer, intent(out), optional :: ierr
        integer(c_int) :: r
        r = c_phase_end(trim(name) // c_null_char)
        if (present(ierr)) ierr = int(r)
    end subroutine js_phase_end

    subroutine js_event(name, json, ierr)
        character(len=*), intent(in) :: name
        character(len=*), intent(in), optional :: json
        integer, intent(out), optional :: ierr
        integer(c_int) :: r
        if (present(json)) then
            r = c_event(trim(name) // c_null_char, trim(json) // c_null_char)
        else
            r = c_event(trim(name) // c_null_char, c_null_char)
        end if
        if (present(ierr)) ierr = int(r)
    end subroutine js_event

    ! js_marks_active: .true. when marks reach a monitor.
    logical function js_marks_active()
        js_marks_active = c_marks_active() /= 0
    end function js_marks_active

    ! js_marks_dropped: marks this process dropped so far.
    integer(c_int64_t) function js_marks_dropped()
        js_marks_dropped = c_marks_dropped()
    end function js_marks_dropped

end module jobscope
