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

.PHONY: gpu-kit gpu-kit-lib gpu-kit-mpi-lib test-gpu-kit
gpu-kit-lib:
	$(CARGO) build --release --no-default-features --target-dir $(GPU_KIT_TARGET) --lib --bin op2-gpu-probe --bin op2-pack

gpu-kit-mpi-lib:
	$(CARGO) build --release --no-default-features --features mpi --target-dir $(GPU_KIT_MPI_TARGET) --lib

gpu-kit: gpu-kit-lib gpu-kit-mpi-lib
	CC='$(CC)' KIT_SKIP_TESTS='$(GPU_KIT_SKIP_TESTS)' bash tests/gpu-kit/build.sh $(GPU_KIT) $(GPU_KIT_TARGET)/release $(AF_SHARED)
	CC='$(CC)' bash tests/gpu-kit/build-mpi.sh $(GPU_KIT) $(GPU_KIT_MPI_TARGET)/release $(BUILD)/gpu-kit-debs

TESTS += test-gpu-kit
ifneq ($(wildcard $(AF_SHARED)/new_grid.dat.gz),)
test-gpu-kit: gpu-kit
	bash tests/gpu-kit/check-dry.sh $(GPU_KIT) $(BUILD)/gpu-kit-dry
else
test-gpu-kit:
	@echo "test-gpu-kit: OP2's meshes not in $(AF_SHARED): skipped"
endif
