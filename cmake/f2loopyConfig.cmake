# Installed by pip as <prefix>/share/cmake/f2loopy/f2loopyConfig.cmake, where
# find_package(f2loopy CONFIG) looks on its own when <prefix>/bin is on the PATH
# (an activated virtual environment) or <prefix> is in CMAKE_PREFIX_PATH.  It asks
# the f2loopy command of that prefix where its package lies (`f2loopy --cmake-dir`)
# and loads the package's own configuration from there.

get_filename_component(_f2loopy_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(_f2loopy_exe "${_f2loopy_prefix}/bin/f2loopy")
if(NOT EXISTS "${_f2loopy_exe}")
  set(f2loopy_FOUND FALSE)
  set(f2loopy_NOT_FOUND_MESSAGE "no f2loopy command in ${_f2loopy_prefix}/bin")
  return()
endif()
execute_process(COMMAND "${_f2loopy_exe}" --cmake-dir
                OUTPUT_VARIABLE _f2loopy_dir RESULT_VARIABLE _f2loopy_rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _f2loopy_rc EQUAL 0 OR NOT EXISTS "${_f2loopy_dir}/f2loopyConfig.cmake")
  set(f2loopy_FOUND FALSE)
  set(f2loopy_NOT_FOUND_MESSAGE "'${_f2loopy_exe} --cmake-dir' failed (${_f2loopy_rc})")
  return()
endif()
if(NOT F2LOOPY_EXECUTABLE)
  set(F2LOOPY_EXECUTABLE "${_f2loopy_exe}" CACHE FILEPATH "the f2loopy command")
endif()
include("${_f2loopy_dir}/f2loopyConfig.cmake")
