# Recording of unmodified programs (issue 5): the OpenCL ICD-loader layer
# (libgpuprof_cl_layer.so, loaded through OPENCL_LAYERS by `gpuprof run`),
# the CUPTI/NVTX injection library (libgpuprof_cuda_inject.so, only with the
# CUDA toolkit), and the OpenCL test program. Neither library links the
# vendor library it intercepts: the layer calls through the loader's
# dispatch table, the injection dlopens libcupti.
set(GP_STORE_SOURCES
  ${CMAKE_SOURCE_DIR}/src/store/store.c ${CMAKE_SOURCE_DIR}/src/core/error.c
  ${CMAKE_SOURCE_DIR}/src/core/sbuf.c ${CMAKE_SOURCE_DIR}/src/core/strtab.c
  ${CMAKE_SOURCE_DIR}/src/core/hash.c ${CMAKE_SOURCE_DIR}/src/core/vec.c
  ${CMAKE_SOURCE_DIR}/src/core/redact.c ${CMAKE_SOURCE_DIR}/src/store/access.c
  ${CMAKE_SOURCE_DIR}/src/monitor/config.c)

if(GP_HAVE_OPENCL AND SQLITE3_LIB)
  add_library(gpuprof_cl_layer SHARED ${CMAKE_SOURCE_DIR}/src/record/inject/cl_layer.c
              ${GP_STORE_SOURCES})
  target_include_directories(gpuprof_cl_layer PRIVATE ${CMAKE_SOURCE_DIR}/include
                             ${CMAKE_SOURCE_DIR}/src ${SQLITE3_INC} ${OpenCL_INCLUDE_DIRS})
  target_compile_definitions(gpuprof_cl_layer PRIVATE CL_TARGET_OPENCL_VERSION=300
                             CL_USE_DEPRECATED_OPENCL_1_2_APIS)
  target_link_libraries(gpuprof_cl_layer PRIVATE ${SQLITE3_LIB} ${YAML_LIB} Threads::Threads)
  set_target_properties(gpuprof_cl_layer PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  install(TARGETS gpuprof_cl_layer LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

  add_executable(cl_record_prog ${CMAKE_SOURCE_DIR}/tests/progs/cl_record_prog.c)
  target_compile_definitions(cl_record_prog PRIVATE CL_TARGET_OPENCL_VERSION=300)
  target_link_libraries(cl_record_prog PRIVATE OpenCL::OpenCL)
  set_target_properties(cl_record_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_executable(cl_cmds_prog ${CMAKE_SOURCE_DIR}/tests/progs/cl_cmds_prog.c)
  target_compile_definitions(cl_cmds_prog PRIVATE CL_TARGET_OPENCL_VERSION=300
                             CL_USE_DEPRECATED_OPENCL_1_1_APIS)
  target_link_libraries(cl_cmds_prog PRIVATE OpenCL::OpenCL)
  set_target_properties(cl_cmds_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_executable(cl_fork_prog ${CMAKE_SOURCE_DIR}/tests/progs/cl_fork_prog.c)
  target_compile_definitions(cl_fork_prog PRIVATE CL_TARGET_OPENCL_VERSION=300)
  target_link_libraries(cl_fork_prog PRIVATE OpenCL::OpenCL)
  set_target_properties(cl_fork_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endif()

# The layer is loaded into programs built without sanitizers (and the test
# program loads PoCL, which is not leak-clean): keep both out of ASan/UBSan
# builds' instrumentation, which would need the ASan runtime loaded first.
foreach(tgt gpuprof_cl_layer cl_record_prog cl_fork_prog cl_cmds_prog)
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

# CUPTI/NVTX injection: only with the CUDA toolkit (headers); libcupti is
# dlopen'ed at run time so nothing GPU-specific is linked.
if(GP_HAVE_CUDA AND SQLITE3_LIB)
  add_library(gpuprof_cuda_inject SHARED ${CMAKE_SOURCE_DIR}/src/record/inject/cuda_inject.c
              ${CMAKE_SOURCE_DIR}/src/record/cuda/cupti_conv.c
              ${CMAKE_SOURCE_DIR}/src/core/demangle.c ${GP_STORE_SOURCES})
  target_include_directories(gpuprof_cuda_inject PRIVATE ${CMAKE_SOURCE_DIR}/include
                             ${CMAKE_SOURCE_DIR}/src ${SQLITE3_INC})
  target_include_directories(gpuprof_cuda_inject SYSTEM PRIVATE ${CUDA_INC})
  target_link_libraries(gpuprof_cuda_inject PRIVATE ${SQLITE3_LIB} ${YAML_LIB} Threads::Threads
                        ${CMAKE_DL_LIBS})
  set_target_properties(gpuprof_cuda_inject PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  install(TARGETS gpuprof_cuda_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

  add_executable(nvtx_prog ${CMAKE_SOURCE_DIR}/tests/progs/nvtx_prog.c)
  target_include_directories(nvtx_prog SYSTEM PRIVATE ${CUDA_INC})
  target_link_libraries(nvtx_prog PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(nvtx_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  foreach(tgt gpuprof_cuda_inject nvtx_prog)
    foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
      get_target_property(opts ${tgt} ${prop})
      if(opts)
        list(FILTER opts EXCLUDE REGEX "sanitize")
        set_property(TARGET ${tgt} PROPERTY ${prop} ${opts})
      endif()
    endforeach()
  endforeach()
endif()

# A stand-in libcupti and a program that calls InitializeInjection like the
# driver does: tests the injection library end to end without a GPU.
if(TARGET gpuprof_cuda_inject)
  add_library(fake_cupti SHARED ${CMAKE_SOURCE_DIR}/tests/fake_cupti/fake_cupti.c)
  target_include_directories(fake_cupti SYSTEM PRIVATE ${CUDA_INC})
  set_target_properties(fake_cupti PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_executable(cupti_fake_prog ${CMAKE_SOURCE_DIR}/tests/progs/cupti_fake_prog.c)
  target_link_libraries(cupti_fake_prog PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(cupti_fake_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  foreach(tgt fake_cupti cupti_fake_prog)
    foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
      get_target_property(opts ${tgt} ${prop})
      if(opts)
        list(FILTER opts EXCLUDE REGEX "sanitize")
        set_property(TARGET ${tgt} PROPERTY ${prop} ${opts})
      endif()
    endforeach()
  endforeach()
endif()
