#!/usr/bin/env bash
# Installs what op2 needs on a Debian machine (as root), idempotently: a C compiler, make,
# gfortran, cmake, pkg-config, and a Rust toolchain if none is on PATH. Safe to run again.
set -euo pipefail

need=()
for pkg in build-essential gfortran cmake pkg-config ca-certificates; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# HDF5 files (cargo feature hdf5, on by default: Debian's serial HDF5; parallel HDF5 for MPI is
# libhdf5-openmpi-dev, pinned with HDF5_DIR=/usr/lib/<triplet>/hdf5/openmpi) and the Python venv
# (meshio, h5py, matplotlib) that `make test-io` creates under build/venv.
# The opencl backend loads the OpenCL ICD at run time; PoCL runs OpenCL on the CPU, so the test
# suite runs every C test on opencl too.
# op_solve through PETSc (cargo feature petsc, on by default): Debian's PETSc (OpenMPI flavour;
# it pulls in libhdf5-openmpi-dev, which the hdf5 crate then links: that works too).
for pkg in libhdf5-dev python3-venv ocl-icd-libopencl1 pocl-opencl-icd petsc-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# MPI (cargo feature mpi, on by default): OpenMPI, libclang for rsmpi's bindings, METIS headers,
# PT-Scotch's ParMETIS interface (op_partition "PARMETIS"/"PTSCOTCH", loaded at run time).
for pkg in openmpi-bin libopenmpi-dev libclang-dev libmetis-dev libscotchparmetis-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages ${need[*]}; run as root (or install them) first" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  # Debian's rustup package gives a current stable toolchain from the Rust registry.
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq rustup >/dev/null 2>&1; then
    rustup default stable
  else
    echo "setup: no cargo on PATH and no Debian rustup package; install Rust >= 1.85.1 (rustup) first" >&2
    exit 1
  fi
fi
cargo --version >/dev/null
