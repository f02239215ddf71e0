# F2Loopy.cmake: translate Fortran subroutines to OpenCL as a step of a CMake build.
#
#   include(<f2loopy>/runtime/F2Loopy.cmake)       # the project enables C and Fortran
#   add_executable(app main.f90)
#   f2loopy_add_kernels(app
#     SOURCES heat.f90 ...             # Fortran files to translate
#     [DEFINES NAME=VALUE ...]         # values for the transformation scripts (-D)
#     [TRANSFORM recipe-or-file]       # a recipe of transforms/ or a Python file (--transform)
#     [INCLUDE_DIRS dir ...]           # where used modules and called procedures are (-I);
#                                      # the target's INCLUDE_DIRECTORIES are searched too
#     [KERNELS name ...]               # translate only these units (--kernel)
#     [BINDINGS kernel:dummy=proc ...] # the procedures dummy procedures call (--bind)
#     [SOURCE_FORM FREE|FIXED]         # -ffree-form/-ffixed-form; default: the target's
#                                      # or the source's Fortran_FORMAT, else the file name
#     [PREPROCESS ON|OFF]              # -cpp/-nocpp; default: the target's or the
#                                      # source's Fortran_PREPROCESS, else the file name
#     [DEFAULT_REAL_KIND 4|8]          # 8: -fdefault-real-8 -fdefault-double-8; default:
#                                      # the gfortran kind options (-fdefault-real-8 ...) of
#                                      # the target's COMPILE_OPTIONS and CMAKE_Fortran_FLAGS
#     [OUTPUT_DIR dir])                # default: ${CMAKE_CURRENT_BINARY_DIR}/f2loopy_generated/<target>
#
# For each SOURCE NAME.f90 a custom command runs `f2loopy translate` at build time
# and writes NAME.cl, NAME_cl.py, NAME_cl.f90 and NAME_cl.c into OUTPUT_DIR, with a
# depfile listing every file the translation read (the Fortran file, recipes,
# scripts): editing any of them regenerates, nothing else does.  NAME_cl.f90 and
# NAME_cl.c are added to the target, which is linked with the f2loopy runtime
# (the static library target f2loopy_runtime, built once per project from
# runtime/, linked with OpenCL).  Programs then `use foo_cl_mod` and
# `call foo_cl(...)`.  Each target gets its own outputs (the same file may be
# translated for two targets with different DEFINES or TRANSFORM); a target
# without a Fortran_MODULE_DIRECTORY gets one there too, so that the glue
# modules of two targets do not overwrite each other.
#
# MPI programs (one OpenCL device per rank) may also link the module f2loopy_mpi
# (f2l_init_mpi(comm): the device from the rank in comm on its node):
#
#   find_package(MPI REQUIRED COMPONENTS Fortran)
#   f2loopy_link_mpi(app)              # also links MPI::MPI_Fortran
#
# The f2loopy command: F2LOOPY_EXECUTABLE if set, else `f2loopy` on the PATH, else
# `python3 -m f2loopy.cli`.

cmake_minimum_required(VERSION 3.20)   # DEPFILE with the Makefile generators

set(F2LOOPY_RUNTIME_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "f2loopy runtime sources")

function(_f2loopy_command out_var)
  if(F2LOOPY_EXECUTABLE)
    set(cmd "${F2LOOPY_EXECUTABLE}")
  else()
    find_program(F2LOOPY_EXECUTABLE_FOUND f2loopy)
    if(F2LOOPY_EXECUTABLE_FOUND)
      set(cmd "${F2LOOPY_EXECUTABLE_FOUND}")
    else()
      find_package(Python3 REQUIRED COMPONENTS Interpreter)
      set(cmd "${Python3_EXECUTABLE}" -m f2loopy.cli)
    endif()
  endif()
  set(${out_var} "${cmd}" PARENT_SCOPE)
endfunction()

function(_f2loopy_runtime_target)
  if(TARGET f2loopy_runtime)
    return()
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST languages OR NOT "Fortran" IN_LIST languages)
    message(FATAL_ERROR "f2loopy: the project must enable C and Fortran "
                        "(project(... LANGUAGES C Fortran))")
  endif()
  find_package(OpenCL REQUIRED)
  find_package(Threads REQUIRED)
  add_library(f2loopy_runtime STATIC
    "${F2LOOPY_RUNTIME_DIR}/f2loopy_runtime.c"
    "${F2LOOPY_RUNTIME_DIR}/f2loopy_runtime.f90")
  set(moddir "${CMAKE_BINARY_DIR}/f2loopy_runtime_modules")
  set_target_properties(f2loopy_runtime PROPERTIES
    Fortran_MODULE_DIRECTORY "${moddir}"
    C_STANDARD 11
    POSITION_INDEPENDENT_CODE ON)
  target_include_directories(f2loopy_runtime PUBLIC "${moddir}" "${F2LOOPY_RUNTIME_DIR}")
  target_link_libraries(f2loopy_runtime PUBLIC OpenCL::OpenCL Threads::Threads)
endfunction()

function(f2loopy_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 F2L "" "TRANSFORM;OUTPUT_DIR;SOURCE_FORM;PREPROCESS;DEFAULT_REAL_KIND"
                        "SOURCES;DEFINES;INCLUDE_DIRS;KERNELS;BINDINGS")
  if(F2L_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "f2loopy_add_kernels: unknown arguments ${F2L_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT F2L_SOURCES)
    message(FATAL_ERROR "f2loopy_add_kernels(${target}): no SOURCES given")
  endif()
  _f2loopy_runtime_target()
  _f2loopy_command(f2loopy)
  if(NOT F2L_OUTPUT_DIR)
    # (not .../f2loopy: 'python -m f2loopy.cli' run where a folder of that name
    # lies would import the folder as the package)
    set(F2L_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/f2loopy_generated/${target}")
  endif()
  file(MAKE_DIRECTORY "${F2L_OUTPUT_DIR}")
  get_target_property(moddir ${target} Fortran_MODULE_DIRECTORY)
  if(NOT moddir)
    set_target_properties(${target} PROPERTIES
      Fortran_MODULE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/f2loopy_generated/${target}/modules")
  endif()

  set(options)
  if(NOT F2L_SOURCE_FORM)
    get_target_property(F2L_SOURCE_FORM ${target} Fortran_FORMAT)
  endif()
  if(F2L_SOURCE_FORM STREQUAL "FREE")
    list(APPEND options -ffree-form)
  elseif(F2L_SOURCE_FORM STREQUAL "FIXED")
    list(APPEND options -ffixed-form)
  elseif(F2L_SOURCE_FORM)
    message(FATAL_ERROR "f2loopy_add_kernels(${target}): SOURCE_FORM must be FREE or FIXED, "
            "not '${F2L_SOURCE_FORM}'")
  endif()
  if(NOT DEFINED F2L_PREPROCESS)
    # (a boolean property: unset, ON or OFF, or another spelling of them)
    get_target_property(target_pp ${target} Fortran_PREPROCESS)
    if(target_pp)
      set(F2L_PREPROCESS ON)
    elseif(NOT target_pp MATCHES "NOTFOUND$")
      set(F2L_PREPROCESS OFF)
    endif()
  endif()
  if(DEFINED F2L_PREPROCESS)
    if(F2L_PREPROCESS STREQUAL "ON")
      list(APPEND options -cpp)
    elseif(F2L_PREPROCESS STREQUAL "OFF")
      list(APPEND options -nocpp)
    else()
      message(FATAL_ERROR "f2loopy_add_kernels(${target}): PREPROCESS must be ON or OFF, "
              "not '${F2L_PREPROCESS}'")
    endif()
  endif()
  # the kinds the compiler reads: the translation must read them alike (f2loopy
  # refuses -fdefault-real-8 without -fdefault-double-8, -fdefault-integer-8 ...)
  if(F2L_DEFAULT_REAL_KIND STREQUAL "8")
    list(APPEND options -fdefault-real-8 -fdefault-double-8)
  elseif(F2L_DEFAULT_REAL_KIND AND NOT F2L_DEFAULT_REAL_KIND STREQUAL "4")
    message(FATAL_ERROR "f2loopy_add_kernels(${target}): DEFAULT_REAL_KIND must be 4 or 8, "
            "not '${F2L_DEFAULT_REAL_KIND}'")
  elseif(NOT F2L_DEFAULT_REAL_KIND)
    get_target_property(target_options ${target} COMPILE_OPTIONS)
    if(NOT target_options)
      set(target_options)
    endif()
    separate_arguments(global_flags NATIVE_COMMAND "${CMAKE_Fortran_FLAGS}")
    foreach(flag IN LISTS target_options global_flags)
      if(flag MATCHES "^-f(default-(real|double|integer)-[0-9]+|real-[48]-real-[0-9]+|integer-4-integer-8)$"
         AND NOT flag IN_LIST options)
        list(APPEND options "${flag}")
      endif()
    endforeach()
  endif()
  foreach(kernel IN LISTS F2L_KERNELS)
    list(APPEND options --kernel "${kernel}")
  endforeach()
  foreach(binding IN LISTS F2L_BINDINGS)
    list(APPEND options --bind "${binding}")
  endforeach()
  foreach(define IN LISTS F2L_DEFINES)
    list(APPEND options -D "${define}")
  endforeach()
  # modules and procedures of other files: INCLUDE_DIRS, then the target's
  # include directories (those known when this is called, without generator
  # expressions), each once
  get_target_property(target_includes ${target} INCLUDE_DIRECTORIES)
  if(NOT target_includes)
    set(target_includes)
  endif()
  set(searched)
  foreach(dir IN LISTS F2L_INCLUDE_DIRS target_includes)
    if(dir MATCHES "\\$<")
      continue()
    endif()
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(IS_DIRECTORY "${dir}" AND NOT dir IN_LIST searched)
      list(APPEND searched "${dir}")
      list(APPEND options -I "${dir}")
    endif()
  endforeach()
  set(transform_deps)
  if(F2L_TRANSFORM)
    set(transform "${F2L_TRANSFORM}")
    if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${transform}")
      set(transform "${CMAKE_CURRENT_SOURCE_DIR}/${transform}")
    endif()
    list(APPEND options --transform "${transform}")
  endif()

  foreach(source IN LISTS F2L_SOURCES)
    get_filename_component(abs "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(name "${source}" NAME)
    string(REGEX REPLACE "\\..*$" "" stem "${name}")   # as f2loopy names its outputs
    # two sources named alike would write the same outputs: say so (CMake's own
    # message names only the output)
    set(out "${F2L_OUTPUT_DIR}/${stem}")
    get_property(earlier GLOBAL PROPERTY "F2LOOPY_SOURCE_OF:${out}")
    if(earlier)
      message(FATAL_ERROR "f2loopy_add_kernels(${target}): ${source} and ${earlier} would "
              "both be translated to ${stem}.cl, ${stem}_cl.f90, ${stem}_cl.c and "
              "${stem}_cl.py in ${F2L_OUTPUT_DIR}: rename one, or translate it in another "
              "f2loopy_add_kernels call with its own OUTPUT_DIR")
    endif()
    set_property(GLOBAL PROPERTY "F2LOOPY_SOURCE_OF:${out}" "${abs}")
    set(pp_option)
    if(NOT DEFINED F2L_PREPROCESS)
      get_source_file_property(pp "${abs}" Fortran_PREPROCESS)
      if(pp)
        set(pp_option -cpp)
      elseif(NOT pp MATCHES "NOTFOUND$")
        set(pp_option -nocpp)
      endif()
    endif()
    set(form_option)
    if(NOT F2L_SOURCE_FORM)
      get_source_file_property(form "${abs}" Fortran_FORMAT)
      if(form STREQUAL "FREE")
        set(form_option -ffree-form)
      elseif(form STREQUAL "FIXED")
        set(form_option -ffixed-form)
      endif()
    endif()
    # the outputs in the order the depfile names them: Ninja takes the
    # depfile's first target to be the command's first output, and a
    # mismatch makes every build translate again
    add_custom_command(
      OUTPUT "${out}.cl" "${out}_cl.py" "${out}_cl.f90" "${out}_cl.c"
      COMMAND ${f2loopy} translate -o "${F2L_OUTPUT_DIR}" --depfile "${out}.d" ${options}
              ${form_option} ${pp_option} "${abs}"
      # f2loopy leaves unchanged outputs alone; touching them keeps make from
      # running the translation again at every build after a no-op edit
      COMMAND "${CMAKE_COMMAND}" -E touch_nocreate "${out}_cl.f90" "${out}_cl.c" "${out}.cl"
              "${out}_cl.py"
      DEPENDS "${abs}"
      DEPFILE "${out}.d"
      WORKING_DIRECTORY "${F2L_OUTPUT_DIR}"
      COMMENT "f2loopy: translating ${source}"
      VERBATIM)
    target_sources(${target} PRIVATE "${out}_cl.f90" "${out}_cl.c")
  endforeach()
  target_link_libraries(${target} PRIVATE f2loopy_runtime)
endfunction()

# Link target with the MPI-aware module f2loopy_mpi (runtime/f2loopy_mpi.f90, built
# once per project as the static library f2loopy_runtime_mpi) and with MPI.
function(f2loopy_link_mpi target)
  if(NOT TARGET MPI::MPI_Fortran)
    message(FATAL_ERROR "f2loopy_link_mpi(${target}): MPI for Fortran was not found; call "
                        "find_package(MPI REQUIRED COMPONENTS Fortran) first")
  endif()
  _f2loopy_runtime_target()
  if(NOT TARGET f2loopy_runtime_mpi)
    add_library(f2loopy_runtime_mpi STATIC "${F2LOOPY_RUNTIME_DIR}/f2loopy_mpi.f90")
    set_target_properties(f2loopy_runtime_mpi PROPERTIES
      Fortran_MODULE_DIRECTORY "${CMAKE_BINARY_DIR}/f2loopy_runtime_modules"
      POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(f2loopy_runtime_mpi PUBLIC f2loopy_runtime MPI::MPI_Fortran)
  endif()
  target_link_libraries(${target} PRIVATE f2loopy_runtime_mpi)
endfunction()
