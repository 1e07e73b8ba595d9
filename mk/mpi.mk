# mk/mpi.mk: MPI tests (cargo feature mpi, on by default; OpenMPI's mpicc, mpif90, mpiexec).
#
#   make test-mpi           the five below (appended to TESTS)
#   make test-mpi-c         tests/mpi/run.sh: the C and Fortran MPI tests (t800-t869) under
#                           mpiexec -n 0..4 on the backends of TEST_BACKENDS
#   make test-mpi-c-lazy    the same on seq with OP2_LAZY=1
#   make test-mpi-c-validate the same with OP2_VALIDATE=1 on threads, check and opencl (below)
#   make test-mpi-airfoil   Airfoil under mpiexec -n 1..4 with METIS, PARMETIS, PTSCOTCH, PARMETIS
#                           GEOMKWAY, RCB, BLOCK, RANDOM on seq (and
#                           -n 2 on threads and opencl if in TEST_BACKENDS) against one process, 1e-12
#                           relative at every one of MPI_AF_ITERS iterations; -n 2 with OP2_LAZY=1
#                           and with --chain, -n 3 RCB with --chain (the seq and threads chains
#                           must say every process tiled them, with deferred elements)
#   make test-mpi-op2-style the OP2-style Fortran Airfoil (OP2's Fortran API, compiled Fortran
#                           kernels) under mpiexec -n 2 on seq and threads against the C Airfoil
#                           on one process, 1e-12 relative (tests/mpi/op2_style.sh)
#   make test-mpi-hybrid    MPI + threads: Airfoil under mpiexec -n P --bind-to none on threads
#                           with OP2_NUM_THREADS=T (2x1, 1x2, 2x2, 3x2 RCB) against one process on
#                           seq, 1e-12 relative at every iteration; every process must report
#                           blocks run on each of its T threads (tests/mpi/hybrid.sh)
#   make test-mpi-partition-memory  op_partition's peak memory per process at -n 4 against -n 1
#                           (tests/mpi/partition_memory.sh; below)
#   make test-mpi-io        HDF5 and VTK under mpiexec -n 1..3 against one process (below;
#                           appended to TESTS)
#   make bench-hybrid       Airfoil 720K: -n 1 and -n 2 seq against MPI + threads, interleaved
#                           (bench/hybrid.sh; below; not a test)
#
# Uses BUILD, BIN, TEST_BACKENDS and AF_DIR's tools from the top Makefile and mk/airfoil.mk.

MPI_BACKENDS := $(filter seq threads check opencl,$(TEST_BACKENDS))
MPI_AF_DIR := $(BUILD)/test-mpi
MPI_AF_CELLS ?= 20000
MPI_AF_ITERS ?= 50

TESTS += test-mpi
.PHONY: test-mpi test-mpi-c-lazy test-mpi-c test-mpi-airfoil test-mpi-op2-style test-mpi-hybrid

test-mpi: test-mpi-c test-mpi-c-lazy test-mpi-airfoil test-mpi-op2-style test-mpi-hybrid test-mpi-assumed-size \
  test-mpi-partition-memory test-mpi-cpp
	@echo "test-mpi: passed"

test-mpi-c: lib
	bash tests/mpi/run.sh $(or $(MPI_BACKENDS),seq)

# The MPI C tests again with lazy evaluation (OP2_LAZY=1, inherited by mpiexec's processes).
test-mpi-c-lazy: lib
	OP2_LAZY=1 TEST_OUT=$(BUILD)/test-mpi/c-lazy bash tests/mpi/run.sh seq

$(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat: $(BIN)/op2-meshgen
	@mkdir -p $(@D)
	$(BIN)/op2-meshgen --cells $(MPI_AF_CELLS) -o $@

test-mpi-airfoil: $(BIN)/airfoil $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat
	tests/mpi/airfoil.sh $(BIN) $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat \
	  $(MPI_AF_ITERS) '$(filter-out seq,$(TEST_BACKENDS))'

test-mpi-hybrid: $(BIN)/airfoil $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat
	tests/mpi/hybrid.sh $(BIN) $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/hybrid $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat \
	  $(MPI_AF_ITERS)

test-mpi-op2-style: install-test-prefix $(BIN)/airfoil $(BIN)/op2-h5convert $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat
	tests/mpi/op2_style.sh $(BIN) $(AF_DIR)/cmp_rms $(abspath $(MPI_AF_DIR))/op2-style \
	  $(abspath $(MPI_AF_DIR))/mesh-$(MPI_AF_CELLS).dat $(MPI_AF_ITERS) $(OP2_TEST_PREFIX)

# HDF5 and VTK under MPI (tests/mpi t850, t855 and Airfoil from HDF5): files written under
# mpiexec -n 2 and 3 equal the one-process files (tests/mpi/h5same.py: every dataset and
# attribute; tests/mpi/vtksame.py: the .pvtu's pieces through meshio), and Airfoil reading
# new_grid.h5 by blocks under -n 2 (METIS) matches the one-process rms within 1e-12 and writes
# a .pvtu equal to the one-process .vtu.
MPI_IO_DIR := $(BUILD)/test-mpi-io
TESTS += test-mpi-io
.PHONY: test-mpi-io

test-mpi-io: lib $(IO_PY) $(BIN)/airfoil $(BIN)/op2-h5convert $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat
	TESTS="t850-mpi-hdf5 t855-mpi-vtk" TEST_OUT=$(MPI_IO_DIR) bash tests/mpi/run.sh seq
	cd $(MPI_IO_DIR) && $(abspath $(IO_PY)) $(CURDIR)/tests/mpi/h5same.py t850-dump-1.h5 t850-dump-2.h5 t850-dump-3.h5
	cd $(MPI_IO_DIR) && $(abspath $(IO_PY)) $(CURDIR)/tests/mpi/h5same.py t850-out-1.h5 t850-out-2.h5 t850-out-3.h5
	cd $(MPI_IO_DIR) && for m in "" -ascii -b64; do \
	  $(abspath $(IO_PY)) $(CURDIR)/tests/mpi/vtksame.py t855-1$$m.vtu t855-2$$m.pvtu t855-3$$m.pvtu || exit 1; done
	tests/mpi/airfoil_h5.sh $(BIN) $(AF_DIR)/cmp_rms $(IO_PY) $(MPI_IO_DIR)/airfoil $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat $(MPI_AF_ITERS)
	@echo "test-mpi-io: passed"

# Scale-out measurements (issue 25, section 4; doc/scaling.md), not part of the test suite:
#   make bench-mpi       bench/mpi.sh: Airfoil 720K at -n 1 and -n 2 on seq (METIS KWAY),
#                        interleaved rounds, median ms/iter and the -n 2 / -n 1 ratio; with
#                        OP2_COMMON_DIR=<an OP2-Common source tree> also OP2-Common's MPI Airfoil
#                        built from it, and op2 / OP2-Common (skipped, and said so, without it)
#   make bench-pingpong  bench/pingpong.c under mpiexec -n 2: one-way latency (8 B) and
#                        bandwidth (1 MiB) of this machine's MPI transport
#   make partstat        op2-partstat on OP2's 720K mesh: partition quality (edge cut, halo rows,
#                        neighbours, bytes sent per iteration) of METIS, RCB and BLOCK at
#                        P = 2..4096 (build/scaling/partstat-720k.{md,jsonl})
#   make partstat-dist   op2-partstat --dist under mpiexec -n P (P = 2..64, PARTSTAT_REPS runs each:
#                        PT-Scotch's partition varies between runs) with PT-Scotch k-way and
#                        distributed RCB, and the serial mode's METIS and RCB at the same P
#                        (build/scaling/partstat-dist-720k.{md,jsonl}; doc/scaling.md)
#   make scaling-model   all the model's inputs measured again (partstat, the ping-pong, Airfoil's
#                        per-loop times on 720K and its call cost on a 1800-cell mesh), then
#                        bench/scaling_model.py with them and with InfiniBand figures (assumed:
#                        1.5 us, 12 GB/s); doc/scaling.md explains it
.PHONY: bench-mpi bench-pingpong partstat partstat-dist scaling-model
BENCH_MPI_MESH := $(if $(wildcard $(AF_SHARED)/new_grid.dat.gz),$(AF_DIR)/new_grid.dat,$(BUILD)/bench/mesh-720000.dat)

$(BUILD)/bench/mesh-720000.dat: $(BIN)/op2-meshgen
	@mkdir -p $(@D)
	$(BIN)/op2-meshgen --cells 720000 -o $@

bench-mpi: $(BIN)/airfoil $(BENCH_MPI_MESH)
	BIN=$(BIN) BUILD=$(BUILD) MESH=$(BENCH_MPI_MESH) bench/mpi.sh

$(BUILD)/bench/pingpong: bench/pingpong.c
	@mkdir -p $(@D)
	mpicc -O2 -std=c99 -Wall -o $@ $<

bench-pingpong: $(BUILD)/bench/pingpong
	$(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) \
	  mpiexec --oversubscribe -n 2 $(BUILD)/bench/pingpong

partstat: lib $(BENCH_MPI_MESH)
	@mkdir -p $(BUILD)/scaling
	$(LIBDIR)/op2-partstat --mesh $(BENCH_MPI_MESH) --json $(BUILD)/scaling/partstat-720k.jsonl | tee $(BUILD)/scaling/partstat-720k.md

PARTSTAT_PROCS ?= 2 4 8 16 32 64
PARTSTAT_REPS ?= 2
PSD := $(BUILD)/scaling/partstat-dist-720k
partstat-dist: lib $(BENCH_MPI_MESH)
	@mkdir -p $(BUILD)/scaling
	$(LIBDIR)/op2-partstat --mesh $(BENCH_MPI_MESH) --methods metis,rcb --procs $$(echo $(PARTSTAT_PROCS) | tr ' ' ,) \
	  --json $(PSD).jsonl > $(PSD).md
	for p in $(PARTSTAT_PROCS); do for k in $$(seq $(PARTSTAT_REPS)); do \
	  $(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) \
	    mpiexec --oversubscribe -n $$p $(LIBDIR)/op2-partstat --mesh $(BENCH_MPI_MESH) --dist \
	    --methods ptscotch,rcb --json $(PSD).run.jsonl > $(PSD).run.md || exit 1; \
	  grep '^| [0-9]' $(PSD).run.md >> $(PSD).md; cat $(PSD).run.jsonl >> $(PSD).jsonl; \
	done; done
	rm -f $(PSD).run.md $(PSD).run.jsonl
	cat $(PSD).md

SCALING := $(BUILD)/scaling
scaling-model: partstat $(BUILD)/bench/pingpong $(BIN)/airfoil $(BIN)/op2-meshgen
	$(BIN)/op2-meshgen --cells 1800 -o $(SCALING)/mesh-1800.dat
	$(BIN)/airfoil --mesh $(SCALING)/mesh-1800.dat --iters 2000 > $(SCALING)/timing-n1-1800.txt
	$(BIN)/airfoil --mesh $(BENCH_MPI_MESH) --iters 50 > $(SCALING)/timing-n1.txt
	$(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) \
	  mpiexec --oversubscribe -n 2 $(BUILD)/bench/pingpong --rounds 7 > $(SCALING)/pingpong.txt
	python3 bench/scaling_model.py --timing $(SCALING)/timing-n1.txt --table $(SCALING)/partstat-720k.jsonl \
	  --call-timing $(SCALING)/timing-n1-1800.txt --pingpong $(SCALING)/pingpong.txt --label "this machine's MPI"
	python3 bench/scaling_model.py --timing $(SCALING)/timing-n1.txt --table $(SCALING)/partstat-720k.jsonl \
	  --call-timing $(SCALING)/timing-n1-1800.txt --alpha-us 1.5 --beta-gbps 12 --label "InfiniBand figures (assumed)"

# make bench-hybrid: bench/hybrid.sh, Airfoil at -n 1 and -n 2 on seq and MPI + threads (-n 2 x 1,
# -n 1 x 2, -n 2 x 2 threads, --bind-to none; and -n 1 x 2 bound), interleaved, 100 iterations,
# on OP2's 720K mesh when $(AF_SHARED)/new_grid.dat.gz exists, else the generated 720K mesh;
# BENCH_REPS (3) rounds. Not in TESTS.
.PHONY: bench-hybrid
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
bench-hybrid: $(BIN)/airfoil $(AF_DIR)/cmp_rms $(AF_DIR)/new_grid.dat
	BIN=$(BIN) CMP_RMS=$(AF_DIR)/cmp_rms MESH=$(AF_DIR)/new_grid.dat bench/hybrid.sh
else
bench-hybrid: $(BIN)/airfoil $(AF_DIR)/cmp_rms $(BIN)/op2-meshgen
	@mkdir -p $(BUILD)/bench
	test -f $(BUILD)/bench/mesh-720000.dat || $(BIN)/op2-meshgen --cells 720000 -o $(BUILD)/bench/mesh-720000.dat
	BIN=$(BIN) CMP_RMS=$(AF_DIR)/cmp_rms MESH=$(BUILD)/bench/mesh-720000.dat bench/hybrid.sh
endif

# make test-mpi-assumed-size: tests/mpi/assumed_size.F90 (op_decl_map of an assumed-size array
# under mpiexec -n 2, index base 0) with op2's Fortran modules built with AddressSanitizer: the
# module must read only this process's block (it read the global size's worth: a heap overflow).
.PHONY: test-mpi-assumed-size
test-mpi-assumed-size: lib
	rm -rf $(BUILD)/test-mpi/assumed-size && mkdir -p $(BUILD)/test-mpi/assumed-size
	cd $(BUILD)/test-mpi/assumed-size && $${MPIFC:-mpif90} -g -fsanitize=address -c $(abspath fortran/op2.F90) \
	  $(abspath fortran/op2_fortran.F90) $(abspath fortran/op2_fortran_reference.F90) $(abspath tests/mpi/assumed_size.F90) && \
	  $${MPIFC:-mpif90} -fsanitize=address -o assumed_size assumed_size.o op2.o op2_fortran.o op2_fortran_reference.o \
	  -L$(abspath $(LIBDIR)) -lop2 -Wl,-rpath,$(abspath $(LIBDIR))
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 OP2_FORTRAN_PATH= \
	  mpiexec --oversubscribe -n 2 $(BUILD)/test-mpi/assumed-size/assumed_size OP2_BACKEND=seq
	@echo "test-mpi-assumed-size: passed"

# make test-mpi-partition-memory: tests/mpi/partition_memory.sh, op_partition's peak memory per
# process (OP2_DIAGNOSTICS=1 'memory: ... peak +M KiB' and airfoil --mem) on a 200K-cell HDF5
# mesh (made once in $(BUILD)/test-mpi/mem): at -n 4 at most 0.35x the -n 1 peak + 2 MiB for
# PARMETIS:KWAY and RCB; METIS:KWAY reported. Then the whole run of the OP2-style airfoil_hdf5
# (tests/cpp/op2-style, built against the installed op2) on a 1.2M-cell mesh: at -n 4, less the
# fixed part, at most 0.33x of -n 1 with RCB, PARMETIS:KWAY and PTSCOTCH:KWAY, 0.27x after the
# declarations (#36); airfoil's op_partition must have read its HDF5 dats and maps again. About 30 s.
.PHONY: test-mpi-partition-memory
test-mpi-partition-memory: install-test-prefix $(BIN)/airfoil $(BIN)/op2-meshgen $(BIN)/op2-h5convert
	$(MAKE) -C tests/cpp/op2-style OP2_PREFIX='$(OP2_TEST_PREFIX)' BUILD='$(abspath $(BUILD))/cpp-op2-style' \
	  '$(abspath $(BUILD))/cpp-op2-style/airfoil_hdf5'
	tests/mpi/partition_memory.sh $(BIN) $(BUILD)/test-mpi/mem 200000 '$(abspath $(BUILD))/cpp-op2-style/airfoil_hdf5'

# make bench-mem: bench/mem.sh, peak memory per process (airfoil --mem: VmHWM and the read,
# partition and run phases; op_partition's own peak) of Airfoil from HDF5 on OP2's 720K mesh
# (when $(AF_SHARED)/new_grid.dat.gz exists) and a generated 2.88M-cell mesh, at -n 1, 2, 4 with
# METIS:KWAY, PARMETIS:KWAY and RCB; a markdown table (doc/mpi.md). Then the OP2-style
# airfoil_hdf5 (tests/cpp/op2-style) stage by stage with RCB, PARMETIS:KWAY, PTSCOTCH:KWAY. Not in
# TESTS.
.PHONY: bench-mem
bench-mem: install-test-prefix $(BIN)/airfoil $(BIN)/op2-meshgen $(BIN)/op2-h5convert
	$(MAKE) -C tests/cpp/op2-style OP2_PREFIX='$(OP2_TEST_PREFIX)' BUILD='$(abspath $(BUILD))/cpp-op2-style' \
	  '$(abspath $(BUILD))/cpp-op2-style/airfoil_hdf5'
	BIN=$(BIN) BUILD=$(BUILD) AF_SHARED=$(AF_SHARED) OP2_STYLE='$(abspath $(BUILD))/cpp-op2-style/airfoil_hdf5' bench/mem.sh

# The MPI C tests again with OP2_VALIDATE=1 (each loop also run on seq from the same inputs and
# compared, owned rows and the rows the loop ran over) on the backends under test other than
# seq. Left out: t835, whose subject is exact transfer counts (validation downloads what it
# compares), t880, whose subject is tiled chains (validation runs every loop at its call), and
# t821, whose subject is a halo buffer refused on one process under an address-space limit:
# validation's own copies of the loop's dats come first and are refused there instead (on that
# process only: validation's copies are not agreed between processes).
MPI_VALIDATE_BACKENDS := $(filter threads check opencl,$(TEST_BACKENDS))
MPI_VALIDATE_SKIP := t835 t880 t821
.PHONY: test-mpi-c-validate
test-mpi: test-mpi-c-validate
test-mpi-c-validate: lib
	TESTS="$$(for f in tests/mpi/t8*.c; do n=$$(basename $$f .c); case " $(MPI_VALIDATE_SKIP) " in *" $${n%%-*} "*) ;; *) printf '%s ' $$n;; esac; done)" \
	  OP2_VALIDATE=1 TEST_OUT=$(BUILD)/test-mpi/c-validate bash tests/mpi/run.sh $(or $(MPI_VALIDATE_BACKENDS),threads)
