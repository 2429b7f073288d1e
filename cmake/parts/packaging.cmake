# Packaging (issue 17): man pages and bash/zsh completions generated from the
# --help text by scripts/gen_docs.py after gpuprof is built (one source),
# installed with the binary; `make deb` builds a Debian package with CPack.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND NOT CMAKE_CROSSCOMPILING)
  set(GP_GEN_DOCS ${CMAKE_BINARY_DIR}/gen-docs)
  add_custom_command(OUTPUT ${GP_GEN_DOCS}/man/gpuprof.1 ${GP_GEN_DOCS}/completions/gpuprof
                            ${GP_GEN_DOCS}/completions/_gpuprof
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${GP_GEN_DOCS}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/gen_docs.py $<TARGET_FILE:gpuprof>
            ${GP_GEN_DOCS} > /dev/null
    DEPENDS gpuprof ${CMAKE_SOURCE_DIR}/scripts/gen_docs.py
    COMMENT "man pages and completions from --help")
  add_custom_target(gpuprof_docs ALL DEPENDS ${GP_GEN_DOCS}/man/gpuprof.1)
  install(DIRECTORY ${GP_GEN_DOCS}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          FILES_MATCHING PATTERN "*.1")
  install(FILES ${GP_GEN_DOCS}/completions/gpuprof
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  # Debian's zsh reads vendor-completions under /usr, site-functions elsewhere
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(GP_ZSH_DIR ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
  else()
    set(GP_ZSH_DIR ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
  endif()
  install(FILES ${GP_GEN_DOCS}/completions/_gpuprof DESTINATION ${GP_ZSH_DIR})
else()
  message(STATUS "gpuprof: no python3: man pages and completions are not generated")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU profiling toolkit: gpuprof CLI and libgpuprof")
set(CPACK_PACKAGE_CONTACT "gpuprof developers <gpuprof@invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # Depends: from the binaries' libraries
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
include(CPack)
