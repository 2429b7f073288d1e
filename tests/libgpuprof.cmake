# libgpuprof tests that need their own build flags (issue 4).
if(GP_INSTRUMENT_FUNCTIONS)
  add_executable(finstr_prog ${CMAKE_CURRENT_SOURCE_DIR}/finstr_prog.c)
  target_compile_options(finstr_prog PRIVATE -finstrument-functions -O0)
  target_link_libraries(finstr_prog PRIVATE gpuprof_finstr gpuprof_shared)
  set_target_properties(finstr_prog PROPERTIES ENABLE_EXPORTS ON) # -rdynamic for dladdr
  add_test(NAME test_libgpuprof_finstr COMMAND finstr_prog)
endif()

# A program with every kind of library data (ranges on CPU and GPU, OpenCL
# kernel timers, tracked buffers) for t_lib_views.py (issue 18).
add_executable(lib_views_prog ${CMAKE_CURRENT_SOURCE_DIR}/progs/lib_views_prog.c)
target_link_libraries(lib_views_prog PRIVATE gpuprof_static)
set_target_properties(lib_views_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

# The stream sink into a file or a run store against the export (issue 18).
add_executable(stream_store_prog ${CMAKE_CURRENT_SOURCE_DIR}/progs/stream_store_prog.c)
target_link_libraries(stream_store_prog PRIVATE gpuprof_static)
set_target_properties(stream_store_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
