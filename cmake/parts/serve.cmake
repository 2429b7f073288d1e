# src/serve/: the HTTP side (libmicrohttpd) and the Prometheus exposition,
# kept out of the core library: a static library linked into the gpuprof
# executable (and the tests/benchmarks that need it). Without libmicrohttpd
# it still builds; the listeners then report that they are not available.
file(GLOB GP_SERVE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/serve/*.c)
add_library(gpuprof_serve STATIC ${GP_SERVE_SOURCES})
target_link_libraries(gpuprof_serve PUBLIC gpuprof_static)
set(GP_HAVE_MHD OFF)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(MHD QUIET IMPORTED_TARGET libmicrohttpd>=0.9.73)
  if(MHD_FOUND)
    set(GP_HAVE_MHD ON)
    target_compile_definitions(gpuprof_serve PUBLIC GP_HAVE_MHD=1)
    target_link_libraries(gpuprof_serve PUBLIC PkgConfig::MHD)
  endif()
endif()
message(STATUS "gpuprof: libmicrohttpd=${GP_HAVE_MHD}")
target_link_libraries(gpuprof PRIVATE gpuprof_serve)
