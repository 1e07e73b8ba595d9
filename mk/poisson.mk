# mk/poisson.mk: P1 finite elements on op2's matrices (examples-c/poisson).
#
#   $(BIN)/poisson       the example (see its header comment)
#   make test-poisson    N = 16, 32, 64 on each backend of TEST_BACKENDS: the error falls by 4
#                        when h halves (second order),
#                        native CG + Jacobi, and PETSc's CG + GAMG agrees (appended to TESTS);
#                        then N = 16, 32 on seq under `mpiexec -n 1` and `-n 2`
#                        (distributed matrix, native and PETSc MPIAIJ solves): the sizes,
#                        entries and errors of -n 2 equal those of -n 1 to 1e-7 relative
#   make bench-mat       (not in TESTS) assembly of the Poisson matrix on ~1M cells: op2 threads
#                        against a plain C loop with PETSc's MatSetValues, SpMV GB/s against a
#                        stream triad, in one run (bench/mat_assembly.c)
#
# Uses BUILD, BIN, CC, LIB, LIBDIR, INC from the top Makefile and EX_CFLAGS, EX_LDLIBS from
# mk/examples.mk.

$(BIN)/poisson: examples-c/poisson/poisson.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(EX_CFLAGS) -I$(INC) -o $@ $< $(EX_LDLIBS)

.PHONY: test-poisson bench-mat
POISSON_MPI := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_mpi_yield_when_idle=1 OP2_BACKEND=seq mpiexec
test-poisson: $(BIN)/poisson
	@for b in $(TEST_BACKENDS); do \
	  echo "  POISSON $$b"; \
	  OP2_BACKEND=$$b $(BIN)/poisson --check 16 32 64 || exit 1; \
	done
	@echo "  POISSON mpiexec -n 1, -n 2"
	@mkdir -p $(BUILD)/test-poisson
	@$(POISSON_MPI) -n 1 $(BIN)/poisson --check 16 32 > $(BUILD)/test-poisson/n1.txt
	@$(POISSON_MPI) -n 2 $(BIN)/poisson --check 16 32 > $(BUILD)/test-poisson/n2.txt
	@grep -q '2 processes' $(BUILD)/test-poisson/n2.txt || { echo "test-poisson: -n 2 did not run on 2 processes"; exit 1; }
	@awk 'FNR == NR && $$1 ~ /^[0-9]+$$/ { want[$$1] = $$2 " " $$3 " " $$5 " " $$6; next } \
	  $$1 ~ /^[0-9]+$$/ { split(want[$$1], w, " "); seen++; \
	    if (w[1] != $$2 || w[2] != $$3) { print "test-poisson: N=" $$1 ": -n 2 mesh differs"; bad = 1 } \
	    for (k = 3; k <= 4; k++) { a = w[k]; b = $$(k + 2); \
	      if (!(a > 0) || (a - b > 1e-7 * a) || (b - a > 1e-7 * a)) { print "test-poisson: N=" $$1 ": error " b " on -n 2, " a " on -n 1"; bad = 1 } } } \
	  END { if (seen != 2) { print "test-poisson: expected 2 sizes, got " seen; bad = 1 } exit bad }' \
	  $(BUILD)/test-poisson/n1.txt $(BUILD)/test-poisson/n2.txt

TESTS += test-poisson
examples: $(BIN)/poisson

BENCH_MAT_N ?= 708
BENCH_MAT_THREADS ?= $(shell nproc 2>/dev/null || echo 2)
BENCH_MAT_PETSC := $(shell pkg-config --cflags --libs PETSc ompi-c 2>/dev/null)
$(BIN)/bench-mat: bench/mat_assembly.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(EX_CFLAGS) -fopenmp -I$(INC) -o $@ $< $(BENCH_MAT_PETSC) $(EX_LDLIBS)

bench-mat: $(BIN)/bench-mat
	OP2_BACKEND=threads OP2_NUM_THREADS=$(BENCH_MAT_THREADS) OMP_NUM_THREADS=$(BENCH_MAT_THREADS) \
	  $(BIN)/bench-mat $(BENCH_MAT_N)
