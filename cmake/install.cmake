# cmake/install.cmake — provides: what `cmake --install build --prefix P` puts where, and the
# Debian package `cpack -G DEB` makes of it (run in the build folder).
#
#   P/bin/mnist_ddp, P/bin/allreduce_bench
#   P/share/mnist_ddp/mnist_ddp.sbatch   the Slurm batch script: it runs the mnist_ddp on PATH
#                                        when the submit folder has no build/mnist_ddp
#   P/share/mnist_ddp/configs/*.conf     the recipes, for --config
#   P/share/mnist_ddp/README.md, docs/ and the documents they link to (slurm/, bench/, docker/,
#                                        tests/ READMEs and results) at the same relative paths
include(GNUInstallDirs)

# A LibTorch outside the system folders (a downloaded CUDA LibTorch) stays reachable from the
# installed programs; the system's own libraries need no run path.
set_target_properties(mnist_ddp allreduce_bench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

set(MNIST_DDP_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/mnist_ddp)
install(TARGETS mnist_ddp allreduce_bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/slurm/mnist_ddp.sbatch DESTINATION ${MNIST_DDP_SHARE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${MNIST_DDP_SHARE_DIR}/configs
        FILES_MATCHING PATTERN "*.conf")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${MNIST_DDP_SHARE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${MNIST_DDP_SHARE_DIR}/docs)
foreach(document slurm/README.md docker/README.md tests/README.md tests/gpu/README.md)
  get_filename_component(folder ${document} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${document} DESTINATION ${MNIST_DDP_SHARE_DIR}/${folder})
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/ DESTINATION ${MNIST_DDP_SHARE_DIR}/bench
        FILES_MATCHING PATTERN "*.md")

# The Debian package. Its dependencies are the shared libraries the programs load, as
# dpkg-shlibdeps finds them (LibTorch, Open MPI, Boost.Program_options, protobuf, ...), and
# openmpi-bin for mpirun. Debian package names allow no underscore.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mnist-ddp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MNIST trained with distributed data parallelism (MPI, NCCL)")
set(CPACK_PACKAGE_CONTACT "mnist_ddp maintainers <mnist-ddp@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
if(MNIST_DDP_HAVE_NCCL)
  # No Debian package provides NCCL or the CUDA runtime; the program opens them only when the
  # NCCL backend is used, so the package needs neither (lib/distributed/gpu_libraries.cpp).
  set(CPACK_PACKAGE_DESCRIPTION "Trains on the CPU with MPI anywhere. The NCCL backend, built in, \
loads libnccl.so.2 and the CUDA runtime when a run uses it: from ${MNIST_DDP_NCCL_LIBRARY}, else \
through LD_LIBRARY_PATH and the loader's cache.")
endif()
include(CPack)
