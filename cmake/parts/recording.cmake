# Recording of unmodified programs (issue 5): the OpenCL ICD-loader layer
# (libgpuprof_cl_layer.so, loaded through OPENCL_LAYERS by `gpuprof run`),
# the CUPTI/NVTX injection library (libgpuprof_cuda_inject.so, only with the
# CUDA toolkit), and the OpenCL test program. Neither library links the
# vendor library it intercepts: the layer calls through the loader's
# dispatch table, the injection dlopens libcupti.
set(GP_STORE_SOURCES
  ${CMAKE_SOURCE_DIR}/src/store/store.c ${CMAKE_SOURCE_DIR}/src/core/error.c
  ${CMAKE_SOURCE_DIR}/src/core/sbuf.c ${CMAKE_SOURCE_DIR}/src/core/strtab.c
  ${CMAKE_SOURCE_DIR}/src/core/hash.c ${CMAKE_SOURCE_DIR}/src/core/vec.c)

if(GP_HAVE_OPENCL AND SQLITE3_LIB)
  add_library(gpuprof_cl_layer SHARED ${CMAKE_SOURCE_DIR}/src/record/inject/cl_layer.c
              ${GP_STORE_SOURCES})
  target_include_directories(gpuprof_cl_layer PRIVATE ${CMAKE_SOURCE_DIR}/include
                             ${CMAKE_SOURCE_DIR}/src ${SQLITE3_INC} ${OpenCL_INCLUDE_DIRS})
  target_compile_definitions(gpuprof_cl_layer PRIVATE CL_TARGET_OPENCL_VERSION=300
                             CL_USE_DEPRECATED_OPENCL_1_2_APIS)
  target_link_libraries(gpuprof_cl_layer PRIVATE ${SQLITE3_LIB} Threads::Threads)
  set_target_properties(gpuprof_cl_layer PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  install(TARGETS gpuprof_cl_layer LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

  add_executable(cl_record_prog ${CMAKE_SOURCE_DIR}/tests/progs/cl_record_prog.c)
  target_compile_definitions(cl_record_prog PRIVATE CL_TARGET_OPENCL_VERSION=300)
  target_link_libraries(cl_record_prog PRIVATE OpenCL::OpenCL)
  set_target_properties(cl_record_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endif()

# The layer is loaded into programs built without sanitizers (and the test
# program loads PoCL, which is not leak-clean): keep both out of ASan/UBSan
# builds' instrumentation, which would need the ASan runtime loaded first.
foreach(tgt gpuprof_cl_layer cl_record_prog)
  if(TARGET ${tgt})
    foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
      get_target_property(opts ${tgt} ${prop})
      if(opts)
        list(FILTER opts EXCLUDE REGEX "sanitize")
        set_property(TARGET ${tgt} PROPERTY ${prop} ${opts})
      endif()
    endforeach()
  endif()
endforeach()
