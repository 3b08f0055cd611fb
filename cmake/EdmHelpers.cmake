# Small helpers shared by the plugins and tests.

# edm_add_plugin(<name> SOURCES ...): a scenario plugin as a MODULE library in build/plugins/<name>/,
# hidden visibility so that only the entry symbol edm_plugin_query is exported.
# Beside the library, libedm_<name>.edmplugin.scenario holds the scenario's name (SCENARIO, default
# <name>): `edm run` opens only the plugin of its scenario, and knows the others' names without
# executing their code.
function(edm_add_plugin name)
  cmake_parse_arguments(P "" "SCENARIO" "SOURCES" ${ARGN})
  if(NOT P_SCENARIO)
    set(P_SCENARIO ${name})
  endif()
  set(descriptor ${EDM_PLUGIN_BUILD_DIR}/${name}/libedm_${name}.edmplugin.scenario)
  file(WRITE ${descriptor} "${P_SCENARIO}\n")
  install(FILES ${descriptor} DESTINATION ${EDM_PLUGIN_INSTALL_DIR}/${name})
  add_library(edm_plugin_${name} MODULE ${P_SOURCES})
  target_link_libraries(edm_plugin_${name} PRIVATE edm::edm)
  set_target_properties(edm_plugin_${name} PROPERTIES
    OUTPUT_NAME ${name} PREFIX "libedm_" SUFFIX ".edmplugin"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY ${EDM_PLUGIN_BUILD_DIR}/${name})
  install(TARGETS edm_plugin_${name} LIBRARY DESTINATION ${EDM_PLUGIN_INSTALL_DIR}/${name})
endfunction()

# edm_add_test(<name> SOURCES ... [LABELS ...] [TIMEOUT s]): one Boost.Test executable, one ctest entry.
function(edm_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE edm::edm edm_test_support)
  add_test(NAME ${name} COMMAND ${name} --log_level=message)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "EDM_PLUGIN_PATH=${EDM_PLUGIN_BUILD_DIR};EDM_SOURCE_DIR=${PROJECT_SOURCE_DIR};EDM_BUILD_DIR=${PROJECT_BINARY_DIR}")
endfunction()
