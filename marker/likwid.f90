! use likwid: LIKWID's Fortran Marker API (F-markerAPI.F90) on pmcsh's
! marker library, whose C functions take a name as gfortran passes it (its
! address, then its length after the other arguments).
module likwid
  interface
    subroutine likwid_markerInit()
    end subroutine
    subroutine likwid_markerThreadInit()
    end subroutine
    subroutine likwid_markerClose()
    end subroutine
    subroutine likwid_markerNextGroup()
    end subroutine
    subroutine likwid_markerRegisterRegion(regionTag)
      character(*) :: regionTag
    end subroutine
    subroutine likwid_markerStartRegion(regionTag)
      character(*) :: regionTag
    end subroutine
    subroutine likwid_markerStopRegion(regionTag)
      character(*) :: regionTag
    end subroutine
    subroutine likwid_markerResetRegion(regionTag)
      character(*) :: regionTag
    end subroutine
    subroutine likwid_markerGetRegion(regionTag, nr_events, events, time, count)
      character(*) :: regionTag
      integer :: nr_events
      double precision, dimension(*) :: events
      double precision :: time
      integer :: count
    end subroutine
  end interface
end module likwid
