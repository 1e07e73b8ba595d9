# mk/airfoil.mk: tests and benchmark of Airfoil (examples-c/airfoil, bench/, tools/).
#
#   make test-airfoil          all of the below (appended to TESTS)
#   make test-airfoil-mesh     op2-meshgen meshes of several shapes pass tests/airfoil/check_mesh
#                              (and OP2's reference meshes, when ../shared/meshes exists); the
#                              checker rejects broken meshes
#   make test-airfoil-badmesh  missing / empty / truncated meshes, indices out of range and
#                              counts that disagree: airfoil and airfoil-plain exit non-zero
#                              with a clear message
#   make test-airfoil-rms      AF_ITERS (200) iterations on a generated AF_CELLS (20000) mesh:
#                              seq bit-identical to plain C, every backend of TEST_BACKENDS
#                              within 1e-12 relative of seq at every iteration; again with
#                              --chain (one loop chain per iteration)
#   make test-airfoil-ref      when $(AF_SHARED)/new_grid.dat.gz exists: 1000 iterations on
#                              OP2's 720K mesh with seq (and threads if in TEST_BACKENDS): the
#                              published rms lines and the final rms 1.0601146375780783e-04
#                              (1e-12 relative); AF_REF_PLAIN=1 runs airfoil-plain too
#   make bench-fortran         bench/fortran.sh: C Airfoil vs OP2-style Fortran Airfoil (JIT and
#                              call-per-element tiers), seq and threads, interleaved
#   make bench-fortran-op2common OP2_COMMON_DIR=<OP2-Common tree>
#                              bench/op2common-fortran.sh: OP2-Common's Fortran Airfoil on op2's
#                              JIT tier against OP2-Common's own generated seq Fortran code
#   make bench                 bench/run.sh: OP2's 720K mesh (else a generated one), STREAM
#                              triad, airfoil-plain and airfoil on each backend (and --chain),
#                              seq on a 4000-cell mesh in cache for each loop's bound;
#                              markdown table + bench/results.json
#
# Uses BUILD, BIN, CC, TEST_BACKENDS from the top Makefile and the programs of mk/examples.mk.

AF_DIR := $(BUILD)/test-airfoil
AF_SHARED ?= ../shared/meshes
AF_CELLS ?= 20000
AF_ITERS ?= 200
AF_REF_PLAIN ?= 0
AF_BACKENDS := $(filter-out seq,$(TEST_BACKENDS))
AF_REF_BACKENDS := seq $(filter threads,$(TEST_BACKENDS))
AF_TOOL_CFLAGS := -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Wall

$(AF_DIR)/check_mesh: tests/airfoil/check_mesh.c examples-c/airfoil/airfoil_mesh.h
	@mkdir -p $(@D)
	$(CC) $(AF_TOOL_CFLAGS) -Iexamples-c/airfoil -o $@ $< -lm

$(AF_DIR)/cmp_rms: tests/airfoil/cmp_rms.c
	@mkdir -p $(@D)
	$(CC) $(AF_TOOL_CFLAGS) -o $@ $< -lm

$(AF_DIR)/mesh-$(AF_CELLS).dat: $(BIN)/op2-meshgen
	@mkdir -p $(@D)
	$(BIN)/op2-meshgen --cells $(AF_CELLS) -o $@

TESTS += test-airfoil
.PHONY: test-airfoil test-airfoil-mesh test-airfoil-badmesh test-airfoil-rms test-airfoil-ref bench

test-airfoil: test-airfoil-mesh test-airfoil-badmesh test-airfoil-rms test-airfoil-ref
	@echo "test-airfoil: passed"

test-airfoil-mesh: $(BIN)/op2-meshgen $(AF_DIR)/check_mesh
	tests/airfoil/mesh.sh $(BIN)/op2-meshgen $(AF_DIR)/check_mesh $(AF_DIR)/mesh $(AF_SHARED)

test-airfoil-badmesh: $(BIN)/airfoil $(BIN)/airfoil-plain $(AF_DIR)/mesh-$(AF_CELLS).dat
	tests/airfoil/bad_mesh.sh $(BIN)/airfoil $(AF_DIR)/mesh-$(AF_CELLS).dat $(AF_DIR)/badmesh-op2
	tests/airfoil/bad_mesh.sh $(BIN)/airfoil-plain $(AF_DIR)/mesh-$(AF_CELLS).dat $(AF_DIR)/badmesh-plain

test-airfoil-rms: $(BIN)/airfoil $(BIN)/airfoil-plain $(AF_DIR)/cmp_rms $(AF_DIR)/mesh-$(AF_CELLS).dat
	tests/airfoil/rms.sh $(BIN) $(AF_DIR)/cmp_rms $(AF_DIR)/rms $(AF_DIR)/mesh-$(AF_CELLS).dat \
	  $(AF_ITERS) '$(AF_BACKENDS)'

ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
$(AF_DIR)/new_grid.dat: $(AF_SHARED)/new_grid.dat.gz
	@mkdir -p $(@D)
	gunzip -c $< > $@.tmp && mv $@.tmp $@

test-airfoil-ref: $(BIN)/airfoil $(BIN)/airfoil-plain $(AF_DIR)/cmp_rms $(AF_DIR)/check_mesh $(AF_DIR)/new_grid.dat
	$(AF_DIR)/check_mesh $(AF_DIR)/new_grid.dat
	tests/airfoil/reference.sh $(BIN) $(AF_DIR)/cmp_rms $(AF_DIR)/ref $(AF_DIR)/new_grid.dat \
	  '$(AF_REF_BACKENDS)' $(AF_REF_PLAIN)
else
test-airfoil-ref:
	@echo "test-airfoil-ref: $(AF_SHARED)/new_grid.dat.gz not found: skipped"
endif

$(BUILD)/bench/stream: bench/stream.c
	@mkdir -p $(@D)
	$(CC) -O3 -march=native -std=c99 -D_POSIX_C_SOURCE=200809L -fopenmp -o $@ $< -lm

ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
bench: $(BIN)/airfoil $(BIN)/airfoil-plain $(BIN)/op2-meshgen $(BUILD)/bench/stream $(AF_DIR)/new_grid.dat
	BIN=$(BIN) BUILD=$(BUILD) TEST_BACKENDS='$(TEST_BACKENDS)' BENCH_MESH=$${BENCH_MESH:-$(AF_DIR)/new_grid.dat} bench/run.sh
else
bench: $(BIN)/airfoil $(BIN)/airfoil-plain $(BIN)/op2-meshgen $(BUILD)/bench/stream
	BIN=$(BIN) BUILD=$(BUILD) TEST_BACKENDS='$(TEST_BACKENDS)' bench/run.sh
endif

# make bench-lazy: bench/lazy.sh, Airfoil eager vs OP2_LAZY=1 vs --chain on seq and threads (2
# threads), interleaved, 200 iterations, on OP2's 720K mesh when $(AF_SHARED)/new_grid.dat.gz
# exists, else the generated 720K mesh; BENCH_REPS (5) runs per mode.
.PHONY: bench-lazy
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
bench-lazy: $(BIN)/airfoil $(AF_DIR)/new_grid.dat
	BIN=$(BIN) MESH=$(AF_DIR)/new_grid.dat bench/lazy.sh
else
bench-lazy: $(BIN)/airfoil $(BIN)/op2-meshgen
	@mkdir -p $(BUILD)/bench
	test -f $(BUILD)/bench/mesh-720000.dat || $(BIN)/op2-meshgen --cells 720000 -o $(BUILD)/bench/mesh-720000.dat
	BIN=$(BIN) MESH=$(BUILD)/bench/mesh-720000.dat bench/lazy.sh
endif

# make bench-opencl: bench/opencl.sh, Airfoil on opencl against threads (2 threads), interleaved,
# on OP2's 720K mesh when $(AF_SHARED)/new_grid.dat.gz exists, else the generated 720K mesh.
.PHONY: bench-opencl
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
bench-opencl: $(BIN)/airfoil $(AF_DIR)/new_grid.dat
	BIN=$(BIN) MESH=$(AF_DIR)/new_grid.dat bench/opencl.sh
else
bench-opencl: $(BIN)/airfoil $(BIN)/op2-meshgen
	@mkdir -p $(BUILD)/bench
	test -f $(BUILD)/bench/mesh-720000.dat || $(BIN)/op2-meshgen --cells 720000 -o $(BUILD)/bench/mesh-720000.dat
	BIN=$(BIN) MESH=$(BUILD)/bench/mesh-720000.dat bench/opencl.sh
endif

# make bench-fortran-op2common OP2_COMMON_DIR=<an OP2-Common source tree, never downloaded>:
# bench/op2common-fortran.sh, OP2-Common's Fortran Airfoil (apps/fortran/airfoil, unchanged but
# for its iteration count) on op2's JIT tier against the same program translated by OP2-Common's
# translator (seq target) and linked with OP2-Common's libop2_for_seq, both built here with
# OP2-Common's GNU flags; OP2's 720K mesh (needs $(AF_SHARED)/new_grid.dat.gz), 200 iterations,
# BENCH_REPS (3) interleaved runs each. The translator's Python packages go into a venv
# (OP2CF_VENV, made on first use; set it to an existing venv with them to skip that).
OP2_COMMON_DIR ?=
OP2CF_VENV ?= $(BUILD)/venv-op2c-fortran
OP2CF_PACKAGES ?= jinja2==3.1.6 fparser==0.2.5 pcpp==1.30 sympy==1.14.0 libclang==18.1.1

$(BUILD)/venv-op2c-fortran/.installed:
	python3 -m venv $(BUILD)/venv-op2c-fortran
	$(BUILD)/venv-op2c-fortran/bin/pip install -q $(OP2CF_PACKAGES)
	touch $@

.PHONY: bench-fortran-op2common
bench-fortran-op2common: lib $(AF_DIR)/new_grid.dat $(if $(filter $(BUILD)/venv-op2c-fortran,$(OP2CF_VENV)),$(BUILD)/venv-op2c-fortran/.installed)
	@test -n '$(OP2_COMMON_DIR)' || { echo 'bench-fortran-op2common: set OP2_COMMON_DIR to an OP2-Common source tree' >&2; exit 1; }
	OP2_COMMON_DIR='$(OP2_COMMON_DIR)' VENV='$(OP2CF_VENV)' MESH=$(AF_DIR)/new_grid.dat \
	  WORK=$(BUILD)/bench/op2common-fortran bash bench/op2common-fortran.sh

# make bench-fortran: bench/fortran.sh, the C Airfoil against the OP2-style Fortran Airfoil on
# the JIT tier and on the call-per-element tier, seq and threads (2 threads), interleaved, 200
# iterations, on OP2's 720K mesh when $(AF_SHARED)/new_grid.dat.gz exists, else the generated
# 720K mesh; BENCH_REPS (3) runs per program.
.PHONY: bench-fortran
bench-fortran: $(BIN)/airfoil install-test-prefix
	$(MAKE) -C tests/fortran/op2-style OP2_PREFIX=$(abspath $(BUILD)/prefix) BUILD=$(abspath $(BUILD)/op2-style)
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
	$(MAKE) $(AF_DIR)/new_grid.dat
	BIN=$(BIN) FBIN=$(BUILD)/op2-style MESH=$(AF_DIR)/new_grid.dat bench/fortran.sh
else
	$(MAKE) $(BIN)/op2-meshgen
	@mkdir -p $(BUILD)/bench
	test -f $(BUILD)/bench/mesh-720000.dat || $(BIN)/op2-meshgen --cells 720000 -o $(BUILD)/bench/mesh-720000.dat
	BIN=$(BIN) FBIN=$(BUILD)/op2-style MESH=$(BUILD)/bench/mesh-720000.dat bench/fortran.sh
endif
