include(CMakePackageConfigHelpers)

install(TARGETS gpuscan EXPORT gpuscanTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpuscan_c LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(GPUSCAN_HAS_CUDA)
  # gpuscan::cuda_kernels: the compaction kernels' sources for gpuscan/cuda_compaction.cuh,
  # under include/gpuscan/kernel_sources by their place in the source tree.
  install(TARGETS gpuscan_cuda_kernels EXPORT gpuscanTargets)
  foreach(header ${GPUSCAN_KERNEL_SOURCES})
    string(REGEX REPLACE "^src/" "" relative ${header})
    get_filename_component(directory ${relative} DIRECTORY)
    install(FILES ${header}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpuscan/kernel_sources/${directory})
  endforeach()
endif()
install(DIRECTORY include/gpuscan DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(GPUSCAN_BUILD_TOOLS)
  install(TARGETS gpuscan_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT gpuscanTargets NAMESPACE gpuscan::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuscan)
configure_package_config_file(cmake/gpuscanConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/gpuscanConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuscan)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpuscanConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpuscanConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/gpuscanConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuscan)
