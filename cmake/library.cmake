# libtandem.so: the C API (include/tandem/tandem.h, implemented in c_api/) over the
# static engine libraries. Only tandem_* symbols are exported (version script); the engine,
# oneDNN/protobuf/Abseil users inside stay hidden. `cmake --install` lays out the headers,
# the library, the CUDA plugin, a CMake package (find_package(Tandem) -> Tandem::tandem), a
# pkg-config file and the Python module.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

file(GLOB TANDEM_CAPI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/c_api/*.cc)
add_library(tandem_shared SHARED ${TANDEM_CAPI_SOURCES})
add_library(Tandem::tandem ALIAS tandem_shared)
set_target_properties(tandem_shared PROPERTIES
  OUTPUT_NAME tandem EXPORT_NAME tandem
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/libtandem.map)
if(NOT TANDEM_WHEEL)  # a wheel holds one file per library (zip has no symlinks): libtandem.so
  set_target_properties(tandem_shared PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
endif()
target_compile_definitions(tandem_shared PRIVATE TANDEM_VERSION_STRING="${PROJECT_VERSION}")
target_include_directories(tandem_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(tandem_shared PRIVATE tandem_training)
target_link_options(tandem_shared PRIVATE
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/libtandem.map -Wl,--exclude-libs,ALL
  -Wl,--no-undefined)

# Where `import tandem` is installed: the Debian python3's site directory under the prefix.
find_program(TANDEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(TANDEM_PYTHON_VERSION 3)
if(TANDEM_PYTHON)
  execute_process(COMMAND ${TANDEM_PYTHON} -c "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"
    OUTPUT_VARIABLE TANDEM_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(TANDEM_PYTHON_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/python${TANDEM_PYTHON_VERSION}/dist-packages
  CACHE STRING "Where cmake --install puts the tandem Python package (relative to the prefix)")

include(${PROJECT_SOURCE_DIR}/cmake/python_fastrun.cmake)

if(TANDEM_WHEEL)
  include(${PROJECT_SOURCE_DIR}/cmake/wheel.cmake)
  return()
endif()

install(TARGETS tandem_shared EXPORT TandemTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tandem/tandem.h ${PROJECT_SOURCE_DIR}/include/tandem/tandem.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tandem)
install(EXPORT TandemTargets NAMESPACE Tandem:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tandem)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TandemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TandemConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tandem)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TandemConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TandemConfig.cmake ${PROJECT_BINARY_DIR}/TandemConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tandem)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tandem.pc.in ${PROJECT_BINARY_DIR}/tandem.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tandem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tandem DESTINATION ${TANDEM_PYTHON_INSTALL_DIR}
  PATTERN __pycache__ EXCLUDE)
install(TARGETS tandem DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET tandem_cuda)
  install(TARGETS tandem_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET tandem_mpi)
  install(TARGETS tandem_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# The C API's per-call overhead against Session::Run and the kernels (docs/BENCHMARKS.md).
add_executable(tandem_c_api_bench ${PROJECT_SOURCE_DIR}/bench/c_api_overhead.cc)
target_link_libraries(tandem_c_api_bench PRIVATE tandem_shared tandem_runtime)
target_compile_definitions(tandem_c_api_bench PRIVATE TANDEM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# oneDNN's convolutions in each activation layout on this CPU (providers/cpu/rewrites/blocked_layout.h).
# Its FMA loop (bench/fma_loop.h) is built for AVX-512 and for AVX2, chosen at run time.
add_executable(tandem_conv_layout_bench ${PROJECT_SOURCE_DIR}/bench/conv_layout_bench.cc
               ${PROJECT_SOURCE_DIR}/bench/fma_loop.cc ${PROJECT_SOURCE_DIR}/bench/fma_loop_avx512.cc
               ${PROJECT_SOURCE_DIR}/bench/fma_loop_avx2.cc)
set_source_files_properties(${PROJECT_SOURCE_DIR}/bench/fma_loop_avx512.cc PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma")
set_source_files_properties(${PROJECT_SOURCE_DIR}/bench/fma_loop_avx2.cc PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
target_link_libraries(tandem_conv_layout_bench PRIVATE tandem_cpu)
