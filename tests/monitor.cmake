# Device-monitor test fixtures (issue 6): the NVML stand-in library, built
# twice (a current driver's library and an old one lacking the versioned and
# newer entry points). Tests find them through GP_FAKE_NVML / GP_FAKE_NVML_OLD
# (compile definitions) or $GPUPROF_BUILD_DIR/tests/libfake_nvml*.so.
foreach(variant fake_nvml fake_nvml_old)
  add_library(${variant} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fake_nvml/fake_nvml.c)
  set_target_properties(${variant} PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_link_libraries(${variant} PRIVATE Threads::Threads)
  # it implements an external ABI: no header of ours declares these symbols
  target_compile_options(${variant} PRIVATE -Wno-missing-prototypes)
endforeach()
target_compile_definitions(fake_nvml_old PRIVATE FAKE_NVML_OLD=1)
foreach(t test_monitor test_monitor_backends test_monitor_logic test_metrics)
  if(TARGET ${t})
    add_dependencies(${t} fake_nvml fake_nvml_old)
    target_compile_definitions(${t} PRIVATE
      GP_FAKE_NVML="$<TARGET_FILE:fake_nvml>"
      GP_FAKE_NVML_OLD="$<TARGET_FILE:fake_nvml_old>")
  endif()
endforeach()
# the Prometheus exposition lives in the serve library (cmake/parts/serve.cmake)
if(TARGET test_metrics)
  target_link_libraries(test_metrics PRIVATE gpuprof_serve)
endif()
