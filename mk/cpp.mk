# mk/cpp.mk: OP2's C++ API (op_seq.h and the headers around it, installed by make install):
# C++ programs written in OP2's style, built unchanged against the installed op2.
#
#   make test-cpp      (appended to TESTS) tests/cpp/op2-style/run.sh: the programs of
#                      tests/cpp/op2-style built by its Makefile against build/prefix, run on seq,
#                      threads, check and opencl (those in TEST_BACKENDS): Airfoil on the JIT tier
#                      with the C Airfoil's rms (bit for bit on seq, 1e-12 elsewhere), its HDF5
#                      and temporary-dat variants with the plain one's, jac and reduction against
#                      plain loops, and Airfoil without its kernel headers on the call-per-element
#                      tier (bit for bit on seq); CPP_ITERS (200) iterations on the AF_CELLS mesh
#   make test-mpi-cpp  (in make test-mpi) tests/cpp/op2-style/mpi.sh: the OP2-style MPI Airfoil
#                      (mpicxx) under mpiexec -n 2 on seq and threads against -n 1, 1e-12
#
# Uses BUILD, BIN, TEST_BACKENDS from the top Makefile, AF_* from mk/airfoil.mk, install-test-prefix
# and OP2_TEST_PREFIX from mk/install.mk, the C Airfoil and tools of mk/examples.mk and mk/io.mk.

CPP_DIR := $(BUILD)/test-cpp
CPP_ITERS ?= 200
CPP_MESH := $(AF_DIR)/mesh-$(AF_CELLS).dat

TESTS += test-cpp
.PHONY: test-cpp test-mpi-cpp

test-cpp: install-test-prefix $(BIN)/airfoil $(BIN)/op2-h5convert $(AF_DIR)/cmp_rms $(CPP_MESH)
	bash tests/cpp/op2-style/run.sh '$(OP2_TEST_PREFIX)' '$(abspath $(BIN))' '$(abspath $(AF_DIR))/cmp_rms' \
	  '$(abspath $(CPP_DIR))' '$(abspath $(CPP_MESH))' $(CPP_ITERS) '$(TEST_BACKENDS)'

test-mpi-cpp: install-test-prefix $(BIN)/airfoil $(AF_DIR)/cmp_rms $(CPP_MESH)
	bash tests/cpp/op2-style/mpi.sh '$(OP2_TEST_PREFIX)' '$(abspath $(BIN))' '$(abspath $(AF_DIR))/cmp_rms' \
	  '$(abspath $(BUILD))/test-mpi-cpp' '$(abspath $(CPP_MESH))' $(CPP_ITERS)

