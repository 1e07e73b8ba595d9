# op2: build, test, examples, install. `make help` lists the targets.
# Fragments in mk/*.mk add examples, install and test targets; they append to TESTS.

CARGO   ?= cargo
CC      ?= cc
LIBDIR  := target/release
LIB     := $(LIBDIR)/libop2.so
INC     := include
BUILD   := build
BIN     := $(BUILD)/bin
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
# Backends the test suites run over (those this build can run on this machine).
TEST_BACKENDS ?= seq

# JIT cache of the test runs: inside the build tree, private to this checkout.
export OP2_CACHE_DIR ?= $(abspath $(BUILD)/cache)
# PoCL (the opencl backend on CPUs) keeps its own compiled programs here.
export POCL_CACHE_DIR ?= $(abspath $(BUILD)/pocl-cache)

TESTS :=

.PHONY: all lib header test test-rust test-c lint help clean
all: lib

# Always ask cargo (it knows when nothing changed).
lib:
	$(CARGO) build --release
$(LIB): lib

header:
	OP2_BLESS=1 $(CARGO) test --release --test header

include $(sort $(wildcard mk/*.mk))

test-rust:
	$(CARGO) test --release

test-c: lib
	bash tests/c/run.sh $(TEST_BACKENDS)

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	python3 tools/module_graph.py --max 0
	python3 tools/module_graph.py --max-up 0
	python3 tools/gen_fortran_loops.py --check
	python3 tools/gen_fortran.py --check

# The C suite again with the test programs and the JIT'd loops built with AddressSanitizer and
# UndefinedBehaviorSanitizer (any finding fails the run), on the host backends under test.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_BACKENDS := $(filter seq threads,$(TEST_BACKENDS))
.PHONY: test-c-sanitize
test-c-sanitize: lib
	TEST_OUT=$(BUILD)/tests/c-sanitize TEST_CFLAGS="$(SAN_FLAGS)" OP2_CFLAGS="$(SAN_FLAGS)" \
	  ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=print_stacktrace=1 \
	  bash tests/c/run.sh $(SAN_BACKENDS)

# The C suite again with OP2_VALIDATE=1 on threads and opencl (each loop also run on seq from
# the same inputs and compared). Left out: t372, whose subject is exact transfer counts
# (validation downloads what it compares).
VALIDATE_BACKENDS := $(filter threads opencl,$(TEST_BACKENDS))
VALIDATE_SKIP := t372
.PHONY: test-c-validate
test-c-validate: lib
	TESTS="$$(for f in tests/c/t*.c; do n=$$(basename $$f .c); case " $(VALIDATE_SKIP) " in *" $${n%%-*} "*) ;; *) printf '%s ' $$n;; esac; done)" \
	  TEST_OUT=$(BUILD)/tests/c-validate TEST_RUN_ENV="OP2_VALIDATE=1" bash tests/c/run.sh $(VALIDATE_BACKENDS)

# The C suite again with lazy evaluation (OP2_LAZY=1): every result must be eager's.
.PHONY: test-c-lazy
test-c-lazy: lib
	TEST_OUT=$(BUILD)/tests/c-lazy TEST_RUN_ENV="OP2_LAZY=1" bash tests/c/run.sh $(TEST_BACKENDS)

# Everything: Rust tests (header check included), C tests (also sanitized and validated), then
# the fragments' suites.
test: test-rust test-c test-c-sanitize test-c-validate test-c-lazy $(TESTS)

# The suites `make test` runs, in its order (scripts/test.sh runs them one by one for its verdict).
.PHONY: list-suites
list-suites:
	@echo test-rust test-c test-c-sanitize test-c-validate test-c-lazy $(TESTS)

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

help:
	@echo "make lib           build target/release/libop2.so (SONAME libop2.so)"
	@echo "make header        regenerate include/op2.h with cbindgen"
	@echo "make test          all test suites (TEST_BACKENDS='$(TEST_BACKENDS)')"
	@echo "make examples      build examples into $(BIN)"
	@echo "make install PREFIX=dir"
	@echo "make lint          rustfmt, clippy, module graph, generated Fortran current"
	@echo "make gpu-kit       build/gpu-kit: the kit that proves cuda on a GPU machine in one run (mk/gpukit.mk)"

# Fixed costs of the JIT and the loop driver (cold compile, disk-cache load, memory hit,
# per-call overhead), on an empty cache directory.
.PHONY: bench-overhead
bench-overhead: lib
	@mkdir -p $(BUILD)/bench
	$(CC) -O2 -std=c99 -I$(INC) bench/loop_overhead.c -L$(LIBDIR) -lop2 -Wl,-rpath,$(abspath $(LIBDIR)) -o $(BUILD)/bench/loop_overhead
	rm -rf $(BUILD)/bench/cache-*
	for b in $(TEST_BACKENDS); do OP2_CACHE_DIR=$(abspath $(BUILD)/bench/cache-$$b) $(BUILD)/bench/loop_overhead $$b; done
