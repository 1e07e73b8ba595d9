# mk/io.mk: files, VTK output and OP2's HDF5 (src/io, src/api/io.rs, tools/).
#
#   $(BIN)/op2-h5convert    new_grid.dat -> OP2's new_grid.h5 layout (tools/op2-h5convert.c)
#   make test-io            all of the below (appended to TESTS)
#   make test-io-python     build/venv (meshio, h5py, numpy, matplotlib; created on first use):
#                           op_write_vtk's files in every mode read back by meshio equal what
#                           op_fetch_data returns; op2's HDF5 dump read by h5py has OP2's
#                           names, shapes, types and attributes
#   make test-io-airfoil    Airfoil from new_grid.h5 (converted from a generated mesh) gives the
#                           text run's rms history bit for bit; --vtk writes a file meshio reads
#   make test-io-ref        (not in TESTS: 1000 seq iterations, minutes) OP2's 720K mesh from
#                           $(AF_SHARED)/new_grid.dat.gz converted to HDF5: the published rms
#                           lines (tests/airfoil/reference_720k.txt), final 1.0601146375780783e-04
#   make airfoil-picture    tools/airfoil_mach.py renders the Mach number of a 720K Airfoil run
#                           (generated mesh, IO_PIC_ITERS iterations) to doc/airfoil-mach.png
#
# Uses BUILD, BIN, CC, LIB, LIBDIR, INC from the top Makefile and EX_CFLAGS, EX_LDLIBS,
# $(BIN)/airfoil, $(BIN)/op2-meshgen from mk/examples.mk.

IO_DIR := $(BUILD)/test-io
IO_VENV := $(BUILD)/venv
IO_PY := $(IO_VENV)/bin/python
IO_CELLS ?= 20000
IO_ITERS ?= 50
IO_PIC_ITERS ?= 1000

$(BIN)/op2-h5convert: tools/op2-h5convert.c examples-c/airfoil/airfoil_mesh.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(EX_CFLAGS) -I$(INC) -Iexamples-c/airfoil -o $@ $< $(EX_LDLIBS)

examples: $(BIN)/op2-h5convert

# A private Python for the checks and the picture (not the system's): meshio, h5py, matplotlib.
$(IO_PY):
	python3 -m venv $(IO_VENV)
	$(IO_VENV)/bin/pip install -q meshio numpy h5py matplotlib

$(IO_DIR)/vtk_dump: tests/io/vtk_dump.c $(LIB)
	@mkdir -p $(@D)
	$(CC) -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -I$(INC) -o $@ $< $(EX_LDLIBS)

TESTS += test-io
.PHONY: test-io test-io-python test-io-airfoil test-io-ref airfoil-picture

test-io: test-io-python test-io-airfoil
	@echo "test-io: passed"

test-io-python: $(IO_PY) $(IO_DIR)/vtk_dump
	rm -rf $(IO_DIR)/py && mkdir -p $(IO_DIR)/py
	cd $(IO_DIR)/py && ../vtk_dump
	$(IO_PY) tests/io/check_files.py $(IO_DIR)/py

test-io-airfoil: $(BIN)/airfoil $(BIN)/op2-meshgen $(BIN)/op2-h5convert $(IO_PY)
	tests/io/airfoil_h5.sh $(BIN) $(IO_PY) $(IO_DIR)/airfoil $(IO_CELLS) $(IO_ITERS)

airfoil-picture: $(BIN)/airfoil $(BIN)/op2-meshgen $(IO_PY)
	@mkdir -p $(IO_DIR)/picture doc
	test -f $(IO_DIR)/picture/mesh.dat || $(BIN)/op2-meshgen --cells 720000 -o $(IO_DIR)/picture/mesh.dat
	$(BIN)/airfoil --mesh $(IO_DIR)/picture/mesh.dat --iters $(IO_PIC_ITERS) --vtk $(IO_DIR)/picture/airfoil.vtu OP2_BACKEND=threads
	$(IO_PY) tools/airfoil_mach.py $(IO_DIR)/picture/airfoil.vtu doc/airfoil-mach.png

test-io-ref: $(BIN)/airfoil $(BIN)/op2-h5convert
	@mkdir -p $(IO_DIR)/ref
	gunzip -c $(AF_SHARED)/new_grid.dat.gz > $(IO_DIR)/ref/new_grid.dat
	$(BIN)/op2-h5convert $(IO_DIR)/ref/new_grid.dat $(IO_DIR)/ref/new_grid.h5
	$(BIN)/airfoil --mesh $(IO_DIR)/ref/new_grid.h5 --iters 1000 OP2_BACKEND=seq > $(IO_DIR)/ref/run.log
	grep -E '^ [0-9]+  ' $(IO_DIR)/ref/run.log | diff - tests/airfoil/reference_720k.txt
	@echo "test-io-ref: OP2's 720K mesh from HDF5 gives the published rms history"
