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
#   make bench-cpp     bench/cpp.sh (not a test): the C Airfoil against the OP2-style C++ Airfoil
#                      on the JIT and call-per-element tiers, seq and threads, interleaved, 200
#                      iterations on OP2's 720K mesh ($(AF_SHARED)/new_grid.dat.gz), else the
#                      generated 720K mesh
#
# Uses BUILD, BIN, TEST_BACKENDS from the top Makefile, AF_* from mk/airfoil.mk, install-test-prefix
# and OP2_TEST_PREFIX from mk/install.mk, the C Airfoil and tools of mk/examples.mk and mk/io.mk.

CPP_DIR := $(BUILD)/test-cpp
CPP_ITERS ?= 200
CPP_MESH := $(AF_DIR)/mesh-$(AF_CELLS).dat

TESTS += test-cpp
.PHONY: test-cpp test-mpi-cpp bench-cpp

test-cpp: install-test-prefix $(BIN)/airfoil $(BIN)/op2-h5convert $(AF_DIR)/cmp_rms $(CPP_MESH)
	bash tests/cpp/op2-style/run.sh '$(OP2_TEST_PREFIX)' '$(abspath $(BIN))' '$(abspath $(AF_DIR))/cmp_rms' \
	  '$(abspath $(CPP_DIR))' '$(abspath $(CPP_MESH))' $(CPP_ITERS) '$(TEST_BACKENDS)'

test-mpi-cpp: install-test-prefix $(BIN)/airfoil $(AF_DIR)/cmp_rms $(CPP_MESH)
	bash tests/cpp/op2-style/mpi.sh '$(OP2_TEST_PREFIX)' '$(abspath $(BIN))' '$(abspath $(AF_DIR))/cmp_rms' \
	  '$(abspath $(BUILD))/test-mpi-cpp' '$(abspath $(CPP_MESH))' $(CPP_ITERS)

CPP_BENCH_MESH := $(if $(wildcard $(AF_SHARED)/new_grid.dat.gz),$(AF_DIR)/new_grid.dat,$(BUILD)/bench/mesh-720000.dat)

bench-cpp: install-test-prefix $(BIN)/airfoil $(CPP_BENCH_MESH)
	$(MAKE) -C tests/cpp/op2-style OP2_PREFIX='$(OP2_TEST_PREFIX)' BUILD='$(abspath $(BUILD))/cpp-op2-style' \
	  '$(abspath $(BUILD))/cpp-op2-style/airfoil'
	sh tests/cpp/op2-style/element.sh '$(OP2_TEST_PREFIX)' '$(abspath $(BUILD))/cpp-op2-style-element'
	BIN=$(BIN) CXXBIN=$(BUILD)/cpp-op2-style EBIN=$(BUILD)/cpp-op2-style-element MESH=$(CPP_BENCH_MESH) \
	  OP2_LIBDIR='$(OP2_TEST_PREFIX)/lib' bench/cpp.sh
