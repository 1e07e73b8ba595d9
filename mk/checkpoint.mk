# mk/checkpoint.mk: checkpoint and restart (op_checkpointing_init), with Airfoil.
#
#   make test-checkpoint   tests/checkpoint/kill.sh: CK_TRIALS (10) trials per mode (seq,
#                          threads, mpi2 = mpiexec -n 2) of Airfoil on a generated CK_CELLS
#                          (8000) mesh for CK_ITERS (150) iterations, killed with SIGKILL at
#                          random moments (also inside checkpoint writes) and restarted until it
#                          finishes; the finishing restart must say it resumed from the
#                          checkpoint the kill left (or found none): final q and rms history
#                          equal the uninterrupted run's (bit
#                          for bit on seq, 1e-12 elsewhere); truncated, byte-flipped,
#                          other-program, other-data (a node moved) and other-process-count
#                          checkpoints are refused with OP2_ERR_CHECKPOINT (appended to TESTS)
#   make bench-checkpoint  720K mesh (../shared/meshes/new_grid.dat.gz, else a generated one):
#                          the time of one checkpoint, and a run with --every 10 against one
#                          without (targets: <= 0.3 s, <= 3% slower)
#
# Uses BUILD, BIN, AF_DIR, AF_SHARED and the programs of mk/examples.mk and mk/airfoil.mk.

CK_DIR := $(BUILD)/test-checkpoint
CK_CELLS ?= 8000
CK_ITERS ?= 150
CK_TRIALS ?= 10
CK_MODES ?= seq threads $(if $(shell command -v mpiexec 2>/dev/null),mpi2)
CK_BENCH_ITERS ?= 1000

$(CK_DIR)/mesh-$(CK_CELLS).dat: $(BIN)/op2-meshgen
	@mkdir -p $(@D)
	$(BIN)/op2-meshgen --cells $(CK_CELLS) -o $@

TESTS += test-checkpoint
.PHONY: test-checkpoint bench-checkpoint

test-checkpoint: $(BIN)/airfoil $(BIN)/op2-meshgen $(AF_DIR)/cmp_rms $(CK_DIR)/mesh-$(CK_CELLS).dat
	tests/checkpoint/kill.sh $(BIN) $(AF_DIR)/cmp_rms $(CK_DIR) $(CK_DIR)/mesh-$(CK_CELLS).dat \
	  $(CK_ITERS) $(CK_TRIALS) '$(CK_MODES)'

bench-checkpoint: $(BIN)/airfoil $(BIN)/op2-meshgen
	BIN=$(BIN) DIR=$(CK_DIR)/bench SHARED=$(AF_SHARED) ITERS=$(CK_BENCH_ITERS) tests/checkpoint/bench.sh
