# mk/poisson.mk: P1 finite elements on op2's matrices (examples-c/poisson).
#
#   $(BIN)/poisson       the example (see its header comment)
#   make test-poisson    N = 16, 32, 64 on each host backend of TEST_BACKENDS (opencl has no
#                        matrix loops yet): the error falls by 4 when h halves (second order),
#                        native CG + Jacobi, and PETSc's CG + GAMG agrees (appended to TESTS)
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
test-poisson: $(BIN)/poisson
	@for b in $(or $(filter seq threads check,$(TEST_BACKENDS)),seq); do \
	  echo "  POISSON $$b"; \
	  OP2_BACKEND=$$b $(BIN)/poisson --check 16 32 64 || exit 1; \
	done

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
