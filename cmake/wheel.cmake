# The Python wheel's layout (pyproject.toml; scikit-build-core installs into the package
# folder `tandem/`, next to python/tandem's modules):
#   tandem/libtandem.so            the C API the package loads (python/tandem/_lib.py)
#   tandem/libtandem_cuda.so       the CUDA provider, loaded only where CUDA's libraries are
#   tandem/libtandem_mpi.so        the MPI communicator, loaded only with Open MPI present
#   tandem/_tandem_fastrun.*.so    the compiled Session.run, for the building interpreter
#   tandem/bin/tandem              the CLI (the `tandem` console script runs it)
# Plugins sit beside libtandem.so and above bin/, where framework/plugin/plugin_search.h looks.
# tools/wheel.sh then copies the Debian libraries these need into the wheel (auditwheel).
install(TARGETS tandem_shared LIBRARY DESTINATION .)
install(TARGETS tandem RUNTIME DESTINATION bin)
foreach(plugin tandem_cuda tandem_mpi tandem_fastrun)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION .)
  endif()
endforeach()
