# mk/install.mk: installing op2 for C, C++ and Fortran users, and the tests of that package.
#
#   make install PREFIX=dir   lib/libop2.so, bin/op2-pack, include/op2.h and OP2's headers
#                             (op_seq.h, op_lib_*.h, op_hdf5.h, op_profile.h), share/op2/fortran/{op2.F90,op2_fortran.F90,
#                             op2_fortran_reference.F90,README.md} (OP2's Fortran modules),
#                             lib/cmake/OP2/OP2Config{,Version}.cmake, lib/pkgconfig/op2.pc
#                             (relocatable: nothing in the tree names PREFIX; DESTDIR honoured)
#   make test-fortran         installs into build/prefix, builds tests/fortran and
#                             examples-fortran against it with CMake (find_package(OP2)), runs
#                             each Fortran test on every backend of TEST_BACKENDS, checks every C
#                             function has a Fortran binding, and checks the Fortran Airfoil gives
#                             the C Airfoil's rms bit for bit on seq
#   make test-consumer        installs into a temporary prefix, moves it, and builds C, C++ and
#                             Fortran programs against it with CMake and pkg-config as an outside
#                             user would
#
# Uses LIB, INC, BUILD, BIN, VERSION (from Cargo.toml), TEST_BACKENDS from the top Makefile.

PREFIX ?= /usr/local
INSTALL ?= install
CMAKE ?= cmake
OP2_TEST_PREFIX := $(abspath $(BUILD)/prefix)

# $(call op2_install,DIR): the installed tree under DIR.
define op2_install
	$(INSTALL) -d '$(1)/lib/cmake/OP2' '$(1)/lib/pkgconfig' '$(1)/include' '$(1)/share/op2/fortran' '$(1)/bin'
	$(INSTALL) -m 755 $(LIB) '$(1)/lib/libop2.so'
	$(foreach l,$(OP2_COMPAT_LIBS),ln -sf libop2.so '$(1)/lib/lib$(l).so';)
	$(INSTALL) -m 755 $(LIBDIR)/op2-pack '$(1)/bin/op2-pack'
	$(INSTALL) -m 644 $(INC)/op2.h '$(1)/include/op2.h'
	$(INSTALL) -m 644 $(OP2_COMPAT_HEADERS) '$(1)/include/'
	$(INSTALL) -m 644 fortran/op2.F90 '$(1)/share/op2/fortran/op2.F90'
	$(INSTALL) -m 644 fortran/op2_fortran.F90 '$(1)/share/op2/fortran/op2_fortran.F90'
	$(INSTALL) -m 644 fortran/op2_fortran_reference.F90 '$(1)/share/op2/fortran/op2_fortran_reference.F90'
	$(INSTALL) -m 644 fortran/README.md '$(1)/share/op2/fortran/README.md'
	$(INSTALL) -m 644 cmake/OP2Config.cmake '$(1)/lib/cmake/OP2/OP2Config.cmake'
	sed 's/@OP2_VERSION@/$(VERSION)/g' cmake/OP2ConfigVersion.cmake.in > '$(1)/lib/cmake/OP2/OP2ConfigVersion.cmake'
	sed 's/@OP2_VERSION@/$(VERSION)/g' pkgconfig/op2.pc.in > '$(1)/lib/pkgconfig/op2.pc'
endef

# OP2's own header set, for OP2's C and C++ programs (doc/porting.md).
OP2_COMPAT_HEADERS := $(INC)/op_seq.h $(INC)/op_lib_core.h $(INC)/op_lib_c.h $(INC)/op_lib_cpp.h \
                      $(INC)/op_lib_mpi.h $(INC)/op_mpi_core.h $(INC)/op_hdf5.h $(INC)/op_profile.h

# OP2's library names (OP2's makefiles link -lop2_seq -lop2_hdf5, -lop2_mpi, ...): one op2
# serves them all, chosen at run time, so each is a link to libop2.so.
OP2_COMPAT_LIBS := op2_seq op2_openmp op2_mpi op2_hdf5

OP2_INSTALL_INPUTS := $(INC)/op2.h $(OP2_COMPAT_HEADERS) fortran/op2.F90 fortran/op2_fortran.F90 \
                      fortran/op2_fortran_reference.F90 fortran/README.md cmake/OP2Config.cmake \
                      cmake/OP2ConfigVersion.cmake.in pkgconfig/op2.pc.in

.PHONY: install install-test-prefix test-fortran test-consumer

install: $(LIB) $(OP2_INSTALL_INPUTS)
	$(call op2_install,$(DESTDIR)$(PREFIX))

# The package the repository's own Fortran builds use.
install-test-prefix: $(LIB) $(OP2_INSTALL_INPUTS)
	rm -rf '$(OP2_TEST_PREFIX)'
	$(call op2_install,$(OP2_TEST_PREFIX))

# Needs the C Airfoil and the mesh generator from `make examples` for the rms comparison.
test-fortran: install-test-prefix examples
	OP2_PREFIX='$(OP2_TEST_PREFIX)' OP2_BUILD='$(abspath $(BUILD))' OP2_BIN='$(abspath $(BIN))' \
	TEST_BACKENDS='$(TEST_BACKENDS)' CMAKE='$(CMAKE)' bash tests/fortran/run.sh

test-consumer: $(LIB) $(OP2_INSTALL_INPUTS)
	MAKE='$(MAKE)' TEST_BACKENDS='$(TEST_BACKENDS)' CMAKE='$(CMAKE)' bash tests/consumer/run.sh

TESTS += test-fortran test-consumer
