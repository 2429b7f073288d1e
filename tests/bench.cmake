# gpuprof bench (issue 14): the stand-in CUDA driver library that
# test_bench drives the CUDA back-end through (built with the real cuda.h
# so that its signatures are the driver's).
if(GP_HAVE_CUDA)
  add_library(fake_cuda SHARED ${CMAKE_SOURCE_DIR}/tests/fake_cuda/fake_cuda.c)
  target_include_directories(fake_cuda SYSTEM PRIVATE ${CUDA_INC})
  target_link_libraries(fake_cuda PRIVATE m)
  set_target_properties(fake_cuda PROPERTIES C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(TARGET test_bench)
    add_dependencies(test_bench fake_cuda)
  endif()
endif()
# clpeak takes ~1-2 minutes on PoCL with 2 shared cores
if(TEST t_bench_clpeak)
  # alone on the machine: its figures are compared with clpeak's (±35 %),
  # every pair measured back to back (tests/t_bench_clpeak.py). Part of
  # `make test`; the label lets `make test-clpeak` run it by itself.
  set_tests_properties(t_bench_clpeak PROPERTIES TIMEOUT 1500 RUN_SERIAL TRUE LABELS clpeak)
endif()
