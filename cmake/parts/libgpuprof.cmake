# libgpuprof (issue 4): -finstrument-functions hook library, examples, and the
# pkg-config / CMake package files installed by `make install`.
option(GP_INSTRUMENT_FUNCTIONS "Build libgpuprof_finstr (-finstrument-functions hooks)" ON)
option(GP_BUILD_EXAMPLES "Build the libgpuprof examples" ON)

if(GP_INSTRUMENT_FUNCTIONS)
  add_library(gpuprof_finstr SHARED ${CMAKE_SOURCE_DIR}/src/record/inject/finstr.c)
  target_link_libraries(gpuprof_finstr PUBLIC gpuprof_shared)
  target_include_directories(gpuprof_finstr PUBLIC ${CMAKE_SOURCE_DIR}/include)
  target_compile_definitions(gpuprof_finstr PRIVATE GP_BUILDING_LIB)
  set_target_properties(gpuprof_finstr PROPERTIES C_VISIBILITY_PRESET hidden
    VERSION ${PROJECT_VERSION} SOVERSION 0)
  install(TARGETS gpuprof_finstr LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

if(GP_BUILD_EXAMPLES)
  add_executable(example_instrumented ${CMAKE_SOURCE_DIR}/examples/instrumented.c)
  target_link_libraries(example_instrumented PRIVATE gpuprof_shared m)
  target_include_directories(example_instrumented PRIVATE ${CMAKE_SOURCE_DIR}/include)
  if(GP_HAVE_OPENCL)
    add_executable(example_opencl_saxpy ${CMAKE_SOURCE_DIR}/examples/opencl_saxpy.c)
    target_link_libraries(example_opencl_saxpy PRIVATE gpuprof_shared OpenCL::OpenCL)
    target_include_directories(example_opencl_saxpy PRIVATE ${CMAKE_SOURCE_DIR}/include)
    target_compile_definitions(example_opencl_saxpy PRIVATE CL_TARGET_OPENCL_VERSION=300)
  endif()
  # The CUDA example needs nvcc (no GPU is needed to build it).
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND GP_HAVE_CUDA)
    enable_language(CUDA)
    add_executable(example_cuda_saxpy ${CMAKE_SOURCE_DIR}/examples/cuda_saxpy.cu)
    target_link_libraries(example_cuda_saxpy PRIVATE gpuprof_shared)
    target_include_directories(example_cuda_saxpy PRIVATE ${CMAKE_SOURCE_DIR}/include)
    # the project's warning flags are for the C compiler, not nvcc
    set_property(TARGET example_cuda_saxpy PROPERTY COMPILE_OPTIONS "")
    # sm_80 code plus compute_80 PTX (JIT-compiled on newer GPUs such as H100)
    set_property(TARGET example_cuda_saxpy PROPERTY CUDA_ARCHITECTURES 80)
    message(STATUS "gpuprof: building examples/cuda_saxpy.cu with ${CMAKE_CUDA_COMPILER}")
  endif()
endif()

# pkg-config file and CMake package config for the installed library. The
# prefix is found relative to the .pc file: as many levels up as the libdir
# has components plus one ("lib/x86_64-linux-gnu/pkgconfig" on a Debian /usr
# install: three; "lib/pkgconfig" under /usr/local: two), so staged (DESTDIR)
# and relocated installs work too.
file(RELATIVE_PATH GP_PC_UP "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" GP_PC_UP "${GP_PC_UP}")
file(RELATIVE_PATH GP_PC_LIBREL "${CMAKE_INSTALL_PREFIX}" "${CMAKE_INSTALL_FULL_LIBDIR}")
file(RELATIVE_PATH GP_PC_INCREL "${CMAKE_INSTALL_PREFIX}" "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
set(GP_PC_LIBDIR "\${prefix}/${GP_PC_LIBREL}")
set(GP_PC_INCDIR "\${prefix}/${GP_PC_INCREL}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/gpuprof.pc.in ${CMAKE_BINARY_DIR}/gpuprof.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/gpuprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
include(CMakePackageConfigHelpers)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/gpuprofConfig.cmake.in
  ${CMAKE_BINARY_DIR}/gpuprofConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprof)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gpuprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gpuprofConfig.cmake ${CMAKE_BINARY_DIR}/gpuprofConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprof)
