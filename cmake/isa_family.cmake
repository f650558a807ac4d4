# tandem_isa_family(DISPATCHER file [AVX2 file] [AVX512 file]): one microkernel family's
# per-ISA builds (providers/cpu/microkernels/isa_dispatch.h). On x86-64 each build's file
# is compiled with its instruction set (+ FMA), and the dispatching file gets
# TANDEM_AVX2_BUILD / TANDEM_AVX512_BUILD for the builds it may reference. Elsewhere only
# the baseline build is chosen. Source properties are per directory: call this from the
# directory whose target compiles the files.
function(tandem_isa_family)
  cmake_parse_arguments(ARG "" "DISPATCHER;AVX2;AVX512" "" ${ARGN})
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    return()
  endif()
  set(builds)
  if(ARG_AVX2)
    set_source_files_properties(${ARG_AVX2} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
    list(APPEND builds TANDEM_AVX2_BUILD)
  endif()
  if(ARG_AVX512)
    set_source_files_properties(${ARG_AVX512} PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma")
    list(APPEND builds TANDEM_AVX512_BUILD)
  endif()
  set_source_files_properties(${ARG_DISPATCHER} PROPERTIES COMPILE_DEFINITIONS "${builds}")
endfunction()
