# mk/mpi.mk: MPI tests (cargo feature mpi, on by default; OpenMPI's mpicc, mpif90, mpiexec).
#
#   make test-mpi           both of the below (appended to TESTS)
#   make test-mpi-c         tests/mpi/run.sh: the C and Fortran MPI tests (t800-t849) under
#                           mpiexec -n 0..4 on the backends of TEST_BACKENDS
#   make test-mpi-airfoil   Airfoil under mpiexec -n 1..4 with METIS, RCB and BLOCK on seq (and
#                           -n 2 on threads and opencl if in TEST_BACKENDS) against one process, 1e-12
#                           relative at every one of MPI_AF_ITERS iterations
#
# Uses BUILD, BIN, TEST_BACKENDS and AF_DIR's tools from the top Makefile and mk/airfoil.mk.

MPI_BACKENDS := $(filter seq threads check opencl,$(TEST_BACKENDS))
MPI_AF_DIR := $(BUILD)/test-mpi
MPI_AF_CELLS ?= 20000
MPI_AF_ITERS ?= 50

TESTS += test-mpi
.PHONY: test-mpi test-mpi-c test-mpi-airfoil

test-mpi: test-mpi-c test-mpi-airfoil
	@echo "test-mpi: passed"

test-mpi-c: lib
	bash tests/mpi/run.sh $(or $(MPI_BACKENDS),seq)

$(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat: $(BIN)/op2-meshgen
	@mkdir -p $(@D)
	$(BIN)/op2-meshgen --cells $(MPI_AF_CELLS) -o $@

test-mpi-airfoil: $(BIN)/airfoil $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat
	tests/mpi/airfoil.sh $(BIN) $(AF_DIR)/cmp_rms $(MPI_AF_DIR)/rms $(MPI_AF_DIR)/mesh-$(MPI_AF_CELLS).dat \
	  $(MPI_AF_ITERS) '$(filter-out seq,$(TEST_BACKENDS))'
