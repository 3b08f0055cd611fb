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
