# install(EXPORT … NAMESPACE edm::) so that an out-of-tree plugin builds with find_package(edm)
# (share/plugin_template shows how). The export carries libedm, its headers and edm_add_plugin().
include(CMakePackageConfigHelpers)
install(TARGETS edm edm_opencl EXPORT edmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/edm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT edmTargets NAMESPACE edm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/edm)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/edmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/edmConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/edm)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/edmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/edmConfig.cmake ${PROJECT_BINARY_DIR}/edmConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/EdmHelpers.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/edm)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/share/ DESTINATION ${CMAKE_INSTALL_DATADIR}/edm)

# The build tree is an SDK too: find_package(edm) with CMAKE_PREFIX_PATH=<build> finds
# build/edmConfig.cmake, whose targets (edmTargets.cmake, exported here with the source tree's
# include folder) and edm_add_plugin() (EdmHelpers.cmake, copied beside it) need no install.
export(EXPORT edmTargets NAMESPACE edm:: FILE ${PROJECT_BINARY_DIR}/edmTargets.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/EdmHelpers.cmake ${PROJECT_BINARY_DIR}/EdmHelpers.cmake COPYONLY)
