# compare tests (issue 8): a small program writing gp_export_json files with
# tracked buffers, used by test_compare_buffers.
add_executable(export_buffers ${CMAKE_CURRENT_SOURCE_DIR}/progs/export_buffers.c)
target_link_libraries(export_buffers PRIVATE gpuprof_static)
set_target_properties(export_buffers PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
if(TARGET test_compare_buffers)
  add_dependencies(test_compare_buffers export_buffers)
endif()
