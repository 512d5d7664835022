# Installing libmcpc like any C library.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib] [INCLUDEDIR=$(PREFIX)/include]
#                [BINDIR=$(PREFIX)/bin] [MANDIR=$(PREFIX)/share/man] [CLI_NAME=mcpc]
#                [DEBUGDIR=$(LIBDIR)/.debug]
#   make uninstall (same variables)
#   make test-install   installs into a temporary prefix and builds C and C++ programs
#                       against it, outside the source tree, through pkg-config and CMake
#
# Installs (LIBDIR, INCLUDEDIR under DESTDIR):
#   LIBDIR/libmcpc.so.X.Y.Z, stripped, symlinks libmcpc.so.SOVERSION -> it, libmcpc.so -> libmcpc.so.SOVERSION
#   DEBUGDIR/libmcpc.so.X.Y.Z.debug, its debug information, which the library names in its
#   .gnu_debuglink (with a CRC). The default, a .debug directory beside the library, is where
#   gdb and elfutils look for it wherever the tree is, also once moved; a distribution's
#   package sets DEBUGDIR=/usr/lib/debug$(LIBDIR), the layout of its -dbg/-debuginfo packages
#   LIBDIR/libmcpc.a
#   LIBDIR/pkgconfig/mcpc.pc
#   LIBDIR/cmake/mcpc/mcpcConfig.cmake, mcpcConfigVersion.cmake   (imported targets mcpc::mcpc, mcpc::mcpc_static)
#   INCLUDEDIR/mcpc.h, INCLUDEDIR/mcpc.hpp (the header-only C++17 wrapper)
#   BINDIR/$(CLI_NAME), the command-line client (cli/), which finds the library in
#   LIBDIR relative to itself ($ORIGIN), so a moved tree still works
#   MANDIR/man1/$(CLI_NAME).1, its man page (cli/mcpc.1, made by `make man`)
# SOVERSION is MAJOR, or 0.MINOR while MAJOR is 0 (0.x releases may break the ABI); it
# must equal the SONAME that build.rs gives the library.

MCPC_VERSION       := $(shell awk -F'"' '/^\[/ { p = ($$0 == "[package]") } p && /^version *=/ { print $$2; exit }' Cargo.toml)
MCPC_VERSION_MAJOR := $(word 1,$(subst ., ,$(MCPC_VERSION)))
MCPC_VERSION_MINOR := $(word 2,$(subst ., ,$(MCPC_VERSION)))
MCPC_SOVERSION     := $(if $(filter 0,$(MCPC_VERSION_MAJOR)),0.$(MCPC_VERSION_MINOR),$(MCPC_VERSION_MAJOR))

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DEBUGDIR   ?= $(LIBDIR)/.debug
# The command line is installed as `mcpc`. A global npm install of @apify/mcpc (another
# MCP command line) also puts an `mcpc` on PATH: CLI_NAME installs ours under another name.
CLI_NAME   ?= mcpc
DESTDIR    ?=

# What is installed (override to install other builds of the library).
MCPC_SHARED_LIB ?= $(RELEASE)/libmcpc.so
MCPC_STATIC_LIB ?= $(RELEASE)/libmcpc.a

# pkg-config paths relative to ${prefix} when they are under PREFIX, so that
# `pkg-config --define-prefix` works on a relocated tree.
_pc_path = $(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1))
_sizeof_void_p := $(if $(filter 32,$(shell getconf LONG_BIT)),4,8)

.PHONY: install uninstall test-install

# The CLI as installed: built like build/release/mcpc, with an rpath from BINDIR to LIBDIR.
_cli_rpath = $$ORIGIN/$(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)')

install: lib
	@test -n "$(MCPC_VERSION)" || { echo "install: no version in Cargo.toml's [package]"; exit 1; }
	@test -f "$(MCPC_SHARED_LIB)" || { echo "install: $(MCPC_SHARED_LIB) is missing"; exit 1; }
	install -d "$(DESTDIR)$(LIBDIR)/pkgconfig" "$(DESTDIR)$(LIBDIR)/cmake/mcpc" "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(DEBUGDIR)"
	@# The release build keeps its debug information (Cargo.toml's debug = 1): split off, as
	@# distributions do, so that the installed library is the stripped one.
	mkdir -p build/install
	objcopy --only-keep-debug "$(MCPC_SHARED_LIB)" "build/install/libmcpc.so.$(MCPC_VERSION).debug"
	objcopy --strip-all --add-gnu-debuglink="build/install/libmcpc.so.$(MCPC_VERSION).debug" \
	        "$(MCPC_SHARED_LIB)" "build/install/libmcpc.so.$(MCPC_VERSION)"
	install -m 755 "build/install/libmcpc.so.$(MCPC_VERSION)" "$(DESTDIR)$(LIBDIR)/libmcpc.so.$(MCPC_VERSION)"
	install -m 644 "build/install/libmcpc.so.$(MCPC_VERSION).debug" "$(DESTDIR)$(DEBUGDIR)/libmcpc.so.$(MCPC_VERSION).debug"
	ln -sfn "libmcpc.so.$(MCPC_VERSION)" "$(DESTDIR)$(LIBDIR)/libmcpc.so.$(MCPC_SOVERSION)"
	ln -sfn "libmcpc.so.$(MCPC_SOVERSION)" "$(DESTDIR)$(LIBDIR)/libmcpc.so"
	install -m 644 "$(MCPC_STATIC_LIB)" "$(DESTDIR)$(LIBDIR)/libmcpc.a"
	install -m 644 include/mcpc.h bindings/cpp/mcpc.hpp "$(DESTDIR)$(INCLUDEDIR)/"
	sed -e 's|@PREFIX@|$(PREFIX)|g' \
	    -e 's|@LIBDIR@|$(call _pc_path,$(LIBDIR))|g' \
	    -e 's|@INCLUDEDIR@|$(call _pc_path,$(INCLUDEDIR))|g' \
	    -e 's|@VERSION@|$(MCPC_VERSION)|g' \
	    packaging/mcpc.pc.in > "$(DESTDIR)$(LIBDIR)/pkgconfig/mcpc.pc"
	sed -e 's|@VERSION@|$(MCPC_VERSION)|g' \
	    -e 's|@SOVERSION@|$(MCPC_SOVERSION)|g' \
	    -e "s|@INCLUDEDIR_REL@|$$(realpath -m --relative-to='$(LIBDIR)/cmake/mcpc' '$(INCLUDEDIR)')|g" \
	    packaging/mcpcConfig.cmake.in > "$(DESTDIR)$(LIBDIR)/cmake/mcpc/mcpcConfig.cmake"
	sed -e 's|@VERSION@|$(MCPC_VERSION)|g' \
	    -e 's|@VERSION_MAJOR@|$(MCPC_VERSION_MAJOR)|g' \
	    -e 's|@VERSION_MINOR@|$(MCPC_VERSION_MINOR)|g' \
	    -e 's|@SIZEOF_VOID_P@|$(_sizeof_void_p)|g' \
	    -e 's|@SIZEOF_VOID_P_BITS@|$(shell getconf LONG_BIT)|g' \
	    packaging/mcpcConfigVersion.cmake.in > "$(DESTDIR)$(LIBDIR)/cmake/mcpc/mcpcConfigVersion.cmake"
	chmod 644 "$(DESTDIR)$(LIBDIR)/pkgconfig/mcpc.pc" "$(DESTDIR)$(LIBDIR)/cmake/mcpc/"*.cmake
	@test -n "$(CLI_NAME)" && test "$(notdir $(CLI_NAME))" = "$(CLI_NAME)" || { echo "install: CLI_NAME must be a file name"; exit 1; }
	$(CC) $(CFLAGS_C) -O2 $(CLI_SRC) -L$(RELEASE) -lmcpc -lpthread -Wl,-rpath,'$(_cli_rpath)' -o build/install/mcpc
	install -d "$(DESTDIR)$(BINDIR)"
	install -m 755 build/install/mcpc "$(DESTDIR)$(BINDIR)/$(CLI_NAME)"
	@# Named as the command is, so that `man $(CLI_NAME)` finds it.
	install -d "$(DESTDIR)$(MANDIR)/man1"
	install -m 644 cli/mcpc.1 "$(DESTDIR)$(MANDIR)/man1/$(CLI_NAME).1"

uninstall:
	rm -f "$(DESTDIR)$(LIBDIR)/libmcpc.so.$(MCPC_VERSION)" "$(DESTDIR)$(LIBDIR)/libmcpc.so.$(MCPC_SOVERSION)" \
	      "$(DESTDIR)$(LIBDIR)/libmcpc.so" "$(DESTDIR)$(LIBDIR)/libmcpc.a" \
	      "$(DESTDIR)$(DEBUGDIR)/libmcpc.so.$(MCPC_VERSION).debug" \
	      "$(DESTDIR)$(LIBDIR)/pkgconfig/mcpc.pc" \
	      "$(DESTDIR)$(LIBDIR)/cmake/mcpc/mcpcConfig.cmake" "$(DESTDIR)$(LIBDIR)/cmake/mcpc/mcpcConfigVersion.cmake" \
	      "$(DESTDIR)$(INCLUDEDIR)/mcpc.h" "$(DESTDIR)$(INCLUDEDIR)/mcpc.hpp" \
	      "$(DESTDIR)$(BINDIR)/$(CLI_NAME)" "$(DESTDIR)$(MANDIR)/man1/$(CLI_NAME).1"
	-rmdir "$(DESTDIR)$(LIBDIR)/cmake/mcpc" 2>/dev/null
	-rmdir "$(DESTDIR)$(DEBUGDIR)" 2>/dev/null

# Needs cmake and pkg-config (Debian: apt-get install cmake pkg-config).
test-install: lib
	CC="$(CC)" CXX="$(CXX)" PYTHON="$(PYTHON)" MCPC_VERSION="$(MCPC_VERSION)" \
	MCPC_SOVERSION="$(MCPC_SOVERSION)" MCPC_SHARED_LIB="$(MCPC_SHARED_LIB)" MCPC_STATIC_LIB="$(MCPC_STATIC_LIB)" \
	tests/install/test_install.sh

EXTRA_TESTS += test-install
