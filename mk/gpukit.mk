# mk/gpukit.mk: the GPU kit (tests/gpu-kit): one folder that proves the cuda backend (and opencl
# on NVIDIA's OpenCL driver) on a GPU machine in one short run, with no Rust toolchain there.
#
#   make gpu-kit       builds $(GPU_KIT) (at most 48 MiB; 37 now): a stripped libop2.so built with
#                      --no-default-features in its own target dir (no MPI, HDF5 or PETSc; cuda
#                      and opencl are always built and load their drivers at run time),
#                      op2-gpu-probe, Airfoil, op2_copy, cmp_rms, the C suite (less the HDF5
#                      tests), OP2's 45K and 720K meshes (gzip), the reference rms traces, a
#                      loop pack of Airfoil's and op2_copy's host code (for a machine without a
#                      C compiler) and run.sh; then (tests/gpu-kit/build-mpi.sh) its MPI part: a
#                      second libop2.so built with --no-default-features --features mpi in
#                      $(GPU_KIT_MPI_TARGET) (lib-mpi/), Debian's OpenMPI run time unpacked from
#                      the packages apt-get downloads into $(BUILD)/gpu-kit-debs (mpi/; the
#                      installed packages' files without a network), airfoil-mpi and six MPI C
#                      tests for the mpi-cuda step (step-mpi.sh). Copy it to the GPU machine and
#                      run `gpu-kit/run.sh` (see README).
#                      With OP2_COMMON_DIR=<an OP2-Common source tree> (never downloaded, never
#                      in this repository) the kit also carries OP2-Common's own CUDA Airfoil
#                      (op2-common/airfoil_cuda, and airfoil_seq for KIT_SIMULATE), built here by
#                      tests/gpu-kit/build-op2common.sh: OP2-Common's translator and its CUDA
#                      library sources, compiled with NVIDIA's nvcc 13.0 from PyPI wheels in
#                      $(OP2C_VENV) (with the translator's packages; about 700 MB, made once) for
#                      sm_80/sm_90; run.sh's op2common-cuda step runs it next to op2's cuda
#                      Airfoil on the 720K mesh (both times, both rms traces, the ratio).
#   make test-gpu-kit  (appended to TESTS) builds the kit and runs `run.sh --dry` here: every
#                      step that needs no GPU runs (the MPI smoke test on seq under the kit's
#                      OpenMPI, then again with this machine's OpenMPI hidden where unshare -m
#                      works), and the report must name each GPU step as not run and the
#                      missing CUDA driver by name. Skipped (with a message)
#                      when OP2's meshes are not in AF_SHARED.
#
# Uses BUILD, CARGO, CC from the top Makefile and AF_SHARED from mk/airfoil.mk.

GPU_KIT := $(BUILD)/gpu-kit
GPU_KIT_TARGET := $(BUILD)/gpu-kit-target
GPU_KIT_MPI_TARGET := $(BUILD)/gpu-kit-mpi-target
# HDF5 is not in the kit's library: tests that call op2's HDF5 functions (or checkpoints, which
# are HDF5 files) answer OP2_ERR_BACKEND_UNAVAILABLE there.
GPU_KIT_SKIP_TESTS := $(sort $(foreach f,$(shell grep -lE '_hdf5|op_checkpointing_init' tests/c/t*.c),$(firstword $(subst -, ,$(notdir $(f))))))

# OP2-Common's CUDA Airfoil (only with OP2_COMMON_DIR): its translator's Python packages and
# nvcc (CUDA 13.0: the GPU machines' driver 580 runs it) with the headers and static cudart.
OP2_COMMON_DIR ?=
OP2C_VENV := $(BUILD)/venv-op2c
OP2C_PACKAGES ?= jinja2==3.1.6 fparser==0.2.5 pcpp==1.30 sympy==1.14.0 libclang==18.1.1 nvidia-cuda-nvcc==13.0.88 \
  nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 \
  nvidia-cuda-nvrtc==13.0.88

$(OP2C_VENV)/.installed:
	python3 -m venv $(OP2C_VENV)
	$(OP2C_VENV)/bin/pip install -q $(OP2C_PACKAGES)
	touch $@

.PHONY: gpu-kit gpu-kit-lib gpu-kit-mpi-lib test-gpu-kit
gpu-kit-lib:
	$(CARGO) build --release --no-default-features --target-dir $(GPU_KIT_TARGET) --lib --bin op2-gpu-probe --bin op2-pack

gpu-kit-mpi-lib:
	$(CARGO) build --release --no-default-features --features mpi --target-dir $(GPU_KIT_MPI_TARGET) --lib

gpu-kit: gpu-kit-lib gpu-kit-mpi-lib $(if $(OP2_COMMON_DIR),$(OP2C_VENV)/.installed)
	CC='$(CC)' KIT_SKIP_TESTS='$(GPU_KIT_SKIP_TESTS)' OP2_COMMON_DIR='$(OP2_COMMON_DIR)' OP2C_VENV='$(OP2C_VENV)' \
	  OP2C_WORK='$(BUILD)/op2-common-cuda' bash tests/gpu-kit/build.sh $(GPU_KIT) $(GPU_KIT_TARGET)/release $(AF_SHARED)
	CC='$(CC)' bash tests/gpu-kit/build-mpi.sh $(GPU_KIT) $(GPU_KIT_MPI_TARGET)/release $(BUILD)/gpu-kit-debs

TESTS += test-gpu-kit
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
test-gpu-kit: gpu-kit
	bash tests/gpu-kit/check-dry.sh $(GPU_KIT) $(BUILD)/gpu-kit-dry
else
test-gpu-kit:
	@echo "test-gpu-kit: OP2's meshes not in $(AF_SHARED): skipped"
endif
