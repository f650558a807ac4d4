# _tandem_fastrun: the compiled fast path of the Python module's Session.run
# (python/fastrun/fastrun.cc), built for Debian's python3 next to libtandem.so, and
# installed beside the library. Optional: without Python headers or NumPy's, the
# package uses its ctypes path alone.
if(SKBUILD AND Python_EXECUTABLE AND NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE ${Python_EXECUTABLE})  # a wheel's: the interpreter and NumPy building it
elseif(TANDEM_PYTHON AND NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE ${TANDEM_PYTHON})  # Debian's, whose NumPy the module is built against
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module NumPy)
if(Python3_Development.Module_FOUND AND Python3_NumPy_FOUND)
  Python3_add_library(tandem_fastrun MODULE WITH_SOABI ${PROJECT_SOURCE_DIR}/python/fastrun/fastrun.cc)
  target_link_libraries(tandem_fastrun PRIVATE Python3::NumPy)
  # NumPy's own headers first: Debian's python3.11 include folder holds another NumPy's.
  target_include_directories(tandem_fastrun BEFORE PRIVATE ${Python3_NumPy_INCLUDE_DIRS})
  set_target_properties(tandem_fastrun PROPERTIES
    OUTPUT_NAME _tandem_fastrun LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden)
  if(NOT TANDEM_WHEEL)  # the wheel puts it in the package folder (cmake/wheel.cmake)
    install(TARGETS tandem_fastrun LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
else()
  message(STATUS "Python headers or NumPy's not found: the Python module runs through ctypes only")
endif()
