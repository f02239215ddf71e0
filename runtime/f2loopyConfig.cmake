# f2loopyConfig.cmake: the CMake package configuration of f2loopy.
#
#   find_package(f2loopy CONFIG REQUIRED)     # then f2loopy_add_kernels(...)
#
# CMake finds it with -Df2loopy_DIR="$(f2loopy --cmake-dir)", or on its own after a
# pip install into a Python environment whose bin/ is on the PATH (the forwarder
# that pip puts in <prefix>/share/cmake/f2loopy/ loads this file).  It defines
# f2loopy_add_kernels() (F2Loopy.cmake, beside this file) and runs the f2loopy
# command of the installation this file belongs to, unless F2LOOPY_EXECUTABLE
# names another.

if(NOT F2LOOPY_EXECUTABLE)
  # inside a wheel's install: <prefix>/lib/pythonX.Y/site-packages/f2loopy/_data/runtime
  string(REGEX MATCH "^(.*)/lib(64)?/python[^/]*/(site|dist)-packages/f2loopy/_data/runtime$"
         _f2loopy_match "${CMAKE_CURRENT_LIST_DIR}")
  if(_f2loopy_match AND EXISTS "${CMAKE_MATCH_1}/bin/f2loopy")
    set(F2LOOPY_EXECUTABLE "${CMAKE_MATCH_1}/bin/f2loopy" CACHE FILEPATH "the f2loopy command")
  endif()
  unset(_f2loopy_match)
endif()

include("${CMAKE_CURRENT_LIST_DIR}/F2Loopy.cmake")
set(f2loopy_FOUND TRUE)
