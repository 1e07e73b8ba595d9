# mk/pack.mk: ahead-of-time loop packs (src/jit/pack.rs, src/bin/op2-pack.rs).
#
#   make test-pack      tests/pack/run.sh (appended to TESTS): Airfoil and the C suite run from
#                       packs on every backend of TEST_BACKENDS with no C compiler on PATH and
#                       OP2_JIT=off, bit for bit as compiled; edited kernels, modified, loose
#                       or missing packs and kernels that do not compile are refused by name
#   make bench-coldstart  Airfoil's first iteration: cold cache, warm cache, from a pack
#
# op2-pack is built by cargo with the library (target/release/op2-pack) and installed by
# `make install` (mk/install.mk).
# Uses LIB, LIBDIR, BUILD, BIN, TEST_BACKENDS from the top Makefile; $(BIN)/airfoil and
# $(AF_DIR)/mesh-$(AF_CELLS).dat from mk/examples.mk and mk/airfoil.mk.

OP2_PACK := $(LIBDIR)/op2-pack
$(OP2_PACK): lib

TESTS += test-pack
.PHONY: test-pack bench-coldstart
test-pack: $(OP2_PACK) $(BIN)/airfoil $(AF_DIR)/mesh-$(AF_CELLS).dat
	bash tests/pack/run.sh $(OP2_PACK) $(BIN)/airfoil $(AF_DIR)/mesh-$(AF_CELLS).dat \
	  $(BUILD)/test-pack '$(TEST_BACKENDS)'

bench-coldstart: $(OP2_PACK) $(BIN)/airfoil $(AF_DIR)/mesh-$(AF_CELLS).dat
	bash bench/coldstart.sh $(OP2_PACK) $(BIN)/airfoil $(AF_DIR)/mesh-$(AF_CELLS).dat $(BUILD)/bench/coldstart
