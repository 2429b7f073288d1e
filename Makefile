# Entry points: make (build), make demo, make test, make bench, make install, make deb.
# Variables: BUILD (build folder), SANITIZE=1 (ASan+UBSan), WERROR=1, PREFIX.
BUILD    ?= build
PREFIX   ?= /usr/local
SANITIZE ?= 0
WERROR   ?= 0
CMAKE_FLAGS ?=
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)

ifeq ($(SANITIZE),1)
  override BUILD := $(BUILD)-asan
  CMAKE_FLAGS += -DGP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
endif
ifeq ($(WERROR),1)
  CMAKE_FLAGS += -DGP_WERROR=ON
endif

.PHONY: all build deps configure demo test test-clpeak bench install deb clean format

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null

configure: $(BUILD)/build.ninja

build: configure
	@ninja -C $(BUILD) -j $(JOBS) | grep -v '^\[' || true
	@test -x $(BUILD)/gpuprof

demo: deps
	@$(MAKE) --no-print-directory build
	@./scripts/demo.sh $(BUILD)

# use_sigaltstack=0: LLVM inside PoCL gives the thread that first compiles an
# OpenCL kernel a malloc'd alternate signal stack; ASan would try to unmap it
# as its own when that thread exits (CHECK failed "unable to unmap"), which
# killed `gpuprof serve` in the ASan build after /api/devices probed OpenCL.
test: deps
	@$(MAKE) --no-print-directory build
	@cd $(BUILD) && ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:use_sigaltstack=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# the comparison with clpeak (tests/t_bench_clpeak.py) alone (also part of `make test`)
test-clpeak: deps
	@$(MAKE) --no-print-directory build
	@cd $(BUILD) && ctest --output-on-failure -L clpeak

# bench-only peers measured in the same run: simdjson (bench/import.sh),
# pigz (the .json.gz figure)
bench: deps
	@GPUPROF_EXTRA_PKGS="libsimdjson-dev pigz" ./scripts/install-deps.sh
	@$(MAKE) --no-print-directory build BUILD=build-bench CMAKE_FLAGS=-DCMAKE_BUILD_TYPE=Release
	@./bench/run.sh build-bench

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

# Debian package of a /usr build (multiarch libdir): $(DEB_BUILD)/gpuprof_VERSION_ARCH.deb
DEB_BUILD ?= build-deb
deb:
	@cmake -S . -B $(DEB_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_INSTALL_PREFIX=/usr $(CMAKE_FLAGS) >/dev/null
	@ninja -C $(DEB_BUILD) -j $(JOBS) gpuprof gpuprof_shared gpuprof_docs all | grep -v '^\[' || true
	@cd $(DEB_BUILD) && cpack -G DEB >/dev/null && ls *.deb

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-bench build-deb
