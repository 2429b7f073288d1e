# gpuprof serve (src/serve/): the HTTP server on libmicrohttpd with TLS by
# GnuTLS. Only the executable links them; without them the command is left
# out of the build (src/cli/cmd_serve.c compiles to nothing).
if(PKG_CONFIG_FOUND)
  pkg_check_modules(MHD IMPORTED_TARGET libmicrohttpd)
  pkg_check_modules(GNUTLS IMPORTED_TARGET gnutls)
endif()
if(MHD_FOUND AND GNUTLS_FOUND)
  file(GLOB GP_SERVE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/serve/*.c)
  target_sources(gpuprof PRIVATE ${GP_SERVE_SOURCES})
  target_link_libraries(gpuprof PRIVATE PkgConfig::MHD PkgConfig::GNUTLS)
  target_compile_definitions(gpuprof PRIVATE GP_HAVE_SERVE=1)
  set(GP_HAVE_SERVE ON)
else()
  message(STATUS "gpuprof: libmicrohttpd or gnutls not found: no `gpuprof serve`")
  set(GP_HAVE_SERVE OFF)
endif()
