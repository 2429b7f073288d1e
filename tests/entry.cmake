# Per-entry metrics (issue 18): the stand-in libcudart whose virtual device
# clock gives test_libgpuprof_entry CUDA event timings of known duration.
if(GP_HAVE_CUDA AND TARGET test_libgpuprof_entry)
  add_library(fake_cudart SHARED ${CMAKE_SOURCE_DIR}/tests/fake_cudart/fake_cudart.c)
  target_include_directories(fake_cudart SYSTEM PRIVATE ${CUDA_INC})
  set_target_properties(fake_cudart PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests NO_SONAME ON)
  target_link_options(fake_cudart PRIVATE -Wl,-soname,libcudart.so)
  add_dependencies(test_libgpuprof_entry fake_cudart)
  target_compile_definitions(test_libgpuprof_entry PRIVATE
    GP_FAKE_CUDART="$<TARGET_FILE:fake_cudart>")
  target_link_libraries(test_libgpuprof_entry PRIVATE dl)
endif()
