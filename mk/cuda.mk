# mk/cuda.mk: the cuda backend's code, proven without a GPU.
#
#   make test-cuda-nvrtc   (appended to TESTS) runs the C suite on seq and Airfoil (a small
#                          generated mesh, 2 iterations) and Poisson (N = 8: matrix assembly)
#                          with OP2_GENERATE_TARGETS=cuda, so every
#                          loop shape they declare is written as CUDA C++ in each variant the
#                          backend can run (colour and atomics for indirect increments, each also
#                          with OP_AUTO_SOA's layout); then tests/cuda_nvrtc.rs compiles every
#                          file with NVRTC for sm_80 and sm_90 and fails on any error. It also
#                          checks that a broken source is rejected, and that the one kernel that
#                          cannot run on a device (t350's, which calls op2's host function
#                          op_diagnostic_output) does not compile.
#
# NVRTC comes from the pip wheel nvidia-cuda-nvrtc-cu12 (libnvrtc.so.12 and its builtins, no
# headers, no driver), installed into $(NVRTC_VENV). Uses BUILD, BIN, CARGO from the top Makefile
# and the programs and mesh of mk/examples.mk and mk/airfoil.mk.

NVRTC_VENV := $(BUILD)/venv-nvrtc
NVRTC_WHEEL ?= nvidia-cuda-nvrtc-cu12==12.9.86
CUDA_GEN := $(BUILD)/cuda-gen
# The wheel's library directory (site-packages/nvidia/cuda_nvrtc/lib), asked of the venv's Python.
NVRTC_LIBDIR = $(shell $(NVRTC_VENV)/bin/python -c 'import nvidia.cuda_nvrtc, os; print(os.path.join(list(nvidia.cuda_nvrtc.__path__)[0], "lib"))' 2>/dev/null)

$(NVRTC_VENV)/.installed:
	python3 -m venv $(NVRTC_VENV)
	$(NVRTC_VENV)/bin/pip install -q '$(NVRTC_WHEEL)'
	touch $@

TESTS += test-cuda-nvrtc
.PHONY: test-cuda-nvrtc
test-cuda-nvrtc: lib $(NVRTC_VENV)/.installed $(BIN)/airfoil $(BIN)/poisson $(BUILD)/test-airfoil/mesh-$(AF_CELLS).dat
	rm -rf $(CUDA_GEN)
	OP2_GENERATE=$(abspath $(CUDA_GEN)) OP2_GENERATE_TARGETS=cuda TEST_OUT=$(BUILD)/tests/c-cuda-gen \
	  bash tests/c/run.sh seq
	OP2_BACKEND=seq OP2_GENERATE=$(abspath $(CUDA_GEN)) OP2_GENERATE_TARGETS=cuda \
	  $(BIN)/airfoil --mesh $(BUILD)/test-airfoil/mesh-$(AF_CELLS).dat --iters 2 >/dev/null
	for l in save_soln adt_calc res_calc bres_calc update; do \
	  grep -q "\"loop\": \"$$l\", .*\"target\": \"cuda\"" $(CUDA_GEN)/manifest.json || \
	    { echo "test-cuda-nvrtc: no cuda code for Airfoil's $$l"; exit 1; }; \
	done
	OP2_BACKEND=seq OP2_GENERATE=$(abspath $(CUDA_GEN)) OP2_GENERATE_TARGETS=cuda $(BIN)/poisson 8 >/dev/null
	for l in stiff load err; do \
	  grep -q "\"loop\": \"$$l\", .*\"target\": \"cuda\"" $(CUDA_GEN)/manifest.json || \
	    { echo "test-cuda-nvrtc: no cuda code for Poisson's $$l"; exit 1; }; \
	done
	LD_LIBRARY_PATH='$(NVRTC_LIBDIR)' OP2_NVRTC_DIR=$(abspath $(CUDA_GEN)) OP2_NVRTC_MIN=200 \
	  OP2_NVRTC_EXPECT_FAIL='calls_op2 calls_op2_abort' \
	  $(CARGO) test --release --test cuda_nvrtc -- --nocapture
	LD_LIBRARY_PATH='$(NVRTC_LIBDIR)' $(CARGO) test --release --lib -- nvrtc backend::cuda::codegen
