# src/serve/: the HTTP side, kept out of the core library: a static library
# linked into the gpuprof executable (and the tests/benchmarks that need it).
#  - always: the metrics-only listener (promhttp.c; the exposition it
#    serves, metrics.c, is in the core library), which says "not available" without
#    libmicrohttpd (GP_HAVE_MHD);
#  - with libmicrohttpd and GnuTLS: every other file, `gpuprof serve`
#    (GP_HAVE_SERVE; without them src/cli/cmd_serve.c compiles to nothing).
if(PKG_CONFIG_FOUND)
  pkg_check_modules(MHD QUIET IMPORTED_TARGET libmicrohttpd)
  pkg_check_modules(GNUTLS QUIET IMPORTED_TARGET gnutls)
endif()
if(MHD_FOUND AND GNUTLS_FOUND)
  file(GLOB GP_SERVE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/serve/*.c)
  # metrics.c is in the core library (gp_monitor_metrics)
  list(REMOVE_ITEM GP_SERVE_SOURCES ${CMAKE_SOURCE_DIR}/src/serve/metrics.c)
  set(GP_HAVE_SERVE ON)
else()
  set(GP_SERVE_SOURCES ${CMAKE_SOURCE_DIR}/src/serve/promhttp.c)
  set(GP_HAVE_SERVE OFF)
  message(STATUS "gpuprof: libmicrohttpd or gnutls not found: no `gpuprof serve`")
endif()
add_library(gpuprof_serve STATIC ${GP_SERVE_SOURCES})
target_link_libraries(gpuprof_serve PUBLIC gpuprof_static)
if(MHD_FOUND)
  target_compile_definitions(gpuprof_serve PUBLIC GP_HAVE_MHD=1)
  target_link_libraries(gpuprof_serve PUBLIC PkgConfig::MHD)
endif()
if(GP_HAVE_SERVE)
  target_compile_definitions(gpuprof_serve PUBLIC GP_HAVE_SERVE=1)
  target_link_libraries(gpuprof_serve PUBLIC PkgConfig::GNUTLS)
endif()
message(STATUS "gpuprof: libmicrohttpd=${MHD_FOUND} serve=${GP_HAVE_SERVE}")
target_link_libraries(gpuprof PRIVATE gpuprof_serve)
