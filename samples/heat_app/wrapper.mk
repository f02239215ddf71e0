# An ordinary Fortran Makefile that knows nothing of f2loopy; the compiler
# wrapper f2loopyfc makes it build the OpenCL version (run in a build folder):
#
#   make -f .../samples/heat_app/wrapper.mk                        # plain Fortran
#   make -f .../samples/heat_app/wrapper.mk FC="f2loopyfc gfortran" FFLAGS="-O2 -DUSE_OPENCL"
#
# With the wrapper, heat_tiled.f90 (it carries a !$loopy block) is translated
# while it is compiled: heat_tiled.o also holds the glue (module heat_step_cl_mod,
# whose .mod lands here like any module) and the link adds f2loopy's runtime.

SRC := $(dir $(lastword $(MAKEFILE_LIST)))
ifeq ($(origin FC),default)
FC = gfortran
endif
FFLAGS ?= -O2

heat_app: heat_tiled.o main.o
	$(FC) $(FFLAGS) heat_tiled.o main.o -o $@
heat_tiled.o: $(SRC)heat_tiled.f90
	$(FC) $(FFLAGS) -c $< -o $@
main.o: $(SRC)main.F90 heat_tiled.o
	$(FC) $(FFLAGS) -c $< -o $@
