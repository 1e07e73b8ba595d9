# OP2Config.cmake: find_package(OP2) for the op2 active library.
#
# Provides
#   OP2::op2          imported shared library libop2 with its C header (C and C++ programs)
#   OP2::op2_fortran  the Fortran module `op2` and OP2's Fortran modules (op2_fortran_declarations,
#                     op2_fortran_reference, op2_fortran_rt_support, op2_fortran_hdf5_declarations),
#                     compiled from source with your Fortran compiler
#                     (only when the Fortran language is enabled before find_package(OP2):
#                     Fortran .mod files are compiler-specific, so none is installed)
#   OP2_FORTRAN_SOURCE  path of the installed op2.F90, for building the module some other way
#   OP2_FORTRAN_SOURCES all installed Fortran sources, in compilation order
# Components: C and CXX (always there), Fortran (needs the Fortran language, see above).
#
# The installed tree is relocatable: every path is derived from this file's location,
# <prefix>/lib/cmake/OP2/OP2Config.cmake.

cmake_minimum_required(VERSION 3.14)

get_filename_component(_op2_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(OP2_INCLUDE_DIR "${_op2_prefix}/include")
set(OP2_LIBRARY "${_op2_prefix}/lib/libop2.so")
set(OP2_FORTRAN_SOURCE "${_op2_prefix}/share/op2/fortran/op2.F90")
set(OP2_FORTRAN_SOURCES "${OP2_FORTRAN_SOURCE}" "${_op2_prefix}/share/op2/fortran/op2_fortran.F90"
    "${_op2_prefix}/share/op2/fortran/op2_fortran_reference.F90")

foreach(_op2_file IN ITEMS "${OP2_INCLUDE_DIR}/op2.h" "${OP2_LIBRARY}")
  if(NOT EXISTS "${_op2_file}")
    set(OP2_FOUND FALSE)
    set(OP2_NOT_FOUND_MESSAGE "OP2 installation at ${_op2_prefix} is incomplete: ${_op2_file} is missing")
    return()
  endif()
endforeach()

if(NOT TARGET OP2::op2)
  add_library(OP2::op2 SHARED IMPORTED)
  set_target_properties(OP2::op2 PROPERTIES
    IMPORTED_LOCATION "${OP2_LIBRARY}"
    IMPORTED_SONAME "libop2.so"
    INTERFACE_INCLUDE_DIRECTORIES "${OP2_INCLUDE_DIR}")
endif()

# The Fortran module is built in the consumer's build tree, by the consumer's compiler.
if(CMAKE_Fortran_COMPILER_LOADED AND NOT TARGET OP2::op2_fortran)
  if(NOT TARGET op2_fortran_module)
    set(_op2_moddir "${CMAKE_BINARY_DIR}/op2_fortran_module")
    add_library(op2_fortran_module STATIC ${OP2_FORTRAN_SOURCES})
    set_target_properties(op2_fortran_module PROPERTIES
      Fortran_MODULE_DIRECTORY "${_op2_moddir}"
      POSITION_INDEPENDENT_CODE ON
      EXCLUDE_FROM_ALL TRUE)
    target_include_directories(op2_fortran_module PUBLIC "${_op2_moddir}")
    target_link_libraries(op2_fortran_module PUBLIC OP2::op2)
    unset(_op2_moddir)
  endif()
  add_library(OP2::op2_fortran ALIAS op2_fortran_module)
endif()

foreach(_op2_component IN LISTS OP2_FIND_COMPONENTS)
  if(NOT _op2_component MATCHES "^(C|CXX|Fortran)$" AND OP2_FIND_REQUIRED_${_op2_component})
    set(OP2_FOUND FALSE)
    set(OP2_NOT_FOUND_MESSAGE "OP2 has no component '${_op2_component}' (components: C, CXX, Fortran)")
    return()
  endif()
endforeach()
unset(_op2_component)

if(OP2_FIND_REQUIRED_Fortran AND NOT TARGET OP2::op2_fortran)
  set(OP2_FOUND FALSE)
  set(OP2_NOT_FOUND_MESSAGE
    "OP2 component Fortran needs the Fortran language: call enable_language(Fortran) or list it in project() before find_package(OP2)")
  return()
endif()
set(OP2_Fortran_FOUND FALSE)
if(TARGET OP2::op2_fortran)
  set(OP2_Fortran_FOUND TRUE)
endif()
set(OP2_C_FOUND TRUE)
set(OP2_CXX_FOUND TRUE)

unset(_op2_file)
unset(_op2_prefix)
