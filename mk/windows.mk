# Windows (issue 29): cross-built here with mingw-w64, tested under Wine.
#   make windows       build/windows/: libmcpc's DLL and its import library
#                      (libmcpc.dll.a), mcpc.h and mcpc.exe
#   make test-windows  build/windows/test/: the fake server, the ProcessPrng shim,
#                      test_windows.exe, the C++ binding's cpp_smoke.exe, the CLI's
#                      test_cli_platform.exe, mcpc.exe and the DLL; runs them and
#                      tests/windows/cli.sh under Wine, in a prefix of its own
#                      (build/windows/wineprefix, made on first use); and first
#                      python-wheel-windows: the win_amd64 wheel with mcpc.dll inside,
#                      in build/python/windows-wheel (built and checked, not loaded);
#                      and test-windows-rust: the library's Rust unit tests, built
#                      for Windows and run under Wine (not with WIN_DLL_DIR)
# Both first run tests/windows/setup.sh, which installs mingw-w64, wine64 and the
# Rust target when they are missing: every rule that runs one of their tools has
# windows-deps before it (tests/windows/deps_order.sh checks, in make test).
# WIN_DLL_DIR=DIR takes libmcpc.dll.a and its DLL from DIR instead of cargo's
# output (a DLL built elsewhere); then cargo does not run.

WIN_TARGET   := x86_64-pc-windows-gnu
WIN_CC       ?= x86_64-w64-mingw32-gcc
# The posix thread model: std::future and std::thread, which bindings/cpp uses,
# are missing from mingw's win32 one.
WIN_CXX      ?= x86_64-w64-mingw32-g++-posix
WIN_DLLTOOL  ?= x86_64-w64-mingw32-dlltool
WIN_WINDRES  ?= x86_64-w64-mingw32-windres
WINE         ?= /usr/lib/wine/wine64
WIN_OUT      := build/windows
WIN_TEST_DIR := $(WIN_OUT)/test
WIN_CARGO_OUT := target/$(WIN_TARGET)/release
WIN_DLL_DIR  ?= $(WIN_CARGO_OUT)
WIN_PREFIX   ?= $(CURDIR)/$(WIN_OUT)/wineprefix
# Same warnings as Linux. __USE_MINGW_ANSI_STDIO: C99 printf (%zu) in mingw's C runtime.
WIN_CFLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -D__USE_MINGW_ANSI_STDIO=1 $(CWARN) -O2 -Iinclude
# winpthreads linked in statically, so mcpc.exe needs no libwinpthread-1.dll beside it.
WIN_CLI_LIBS := -Wl,-Bstatic -lpthread -Wl,-Bdynamic -lws2_32 -lshell32 -lole32 -ladvapi32
WIN_RUN      := WINEPREFIX='$(WIN_PREFIX)' WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' $(WINE)

WIN_CLI_SRC  := $(filter-out cli/platform_posix.c,$(CLI_SRC)) cli/platform_win.c

.PHONY: windows test-windows test-windows-rust windows-deps windows-dll python-wheel-windows test-windows-deps

# Runs no tool: reads make's dry runs (about a second).
test-windows-deps:
	tests/windows/deps_order.sh
EXTRA_TESTS += test-windows-deps

windows-deps:
	tests/windows/setup.sh $(if $(filter $(WIN_CARGO_OUT),$(WIN_DLL_DIR)),,--no-rust)

# cargo runs only when the DLL is ours to build; it decides itself what is stale.
windows-dll: windows-deps
ifeq ($(WIN_DLL_DIR),$(WIN_CARGO_OUT))
	$(CARGO) build --release --target $(WIN_TARGET)
endif
	@test -f '$(WIN_DLL_DIR)/libmcpc.dll.a' || { echo "windows: no $(WIN_DLL_DIR)/libmcpc.dll.a"; exit 1; }
	@mkdir -p $(WIN_OUT)
	cp '$(WIN_DLL_DIR)/libmcpc.dll.a' $(WIN_OUT)/
	@# The DLL goes under the name its import library records (cargo's is mcpc.dll).
	dll=$$($(WIN_DLLTOOL) --identify $(WIN_OUT)/libmcpc.dll.a) && cp "$(WIN_DLL_DIR)/$$dll" $(WIN_OUT)/
	cp include/mcpc.h $(WIN_OUT)/

# Its manifest makes the process code page UTF-8 (cli/mcpc.manifest).
$(WIN_OUT)/mcpc_res.o: cli/mcpc.rc cli/mcpc.manifest | windows-deps
	@mkdir -p $(WIN_OUT)
	$(WIN_WINDRES) $< -O coff -o $@

$(WIN_OUT)/mcpc.exe: $(WIN_CLI_SRC) $(wildcard cli/*.h) include/mcpc.h $(WIN_OUT)/mcpc_res.o windows-dll
	$(WIN_CC) $(WIN_CFLAGS) $(WIN_CLI_SRC) $(WIN_OUT)/mcpc_res.o -L$(WIN_OUT) -lmcpc $(WIN_CLI_LIBS) -o $@

windows: $(WIN_OUT)/mcpc.exe

$(WIN_TEST_DIR)/fake_server.exe: tests/windows/fake_server.c benches/json_lite.h benches/bench_buf.h | windows-deps
	@mkdir -p $(WIN_TEST_DIR)
	$(WIN_CC) $(WIN_CFLAGS) -municode -Ibenches $< -lws2_32 -o $@

# Only in the test folder: beside a shipped program it would shadow Windows' own DLL.
$(WIN_TEST_DIR)/bcryptprimitives.dll: tests/windows/bcryptprimitives.c tests/windows/bcryptprimitives.def | windows-deps
	@mkdir -p $(WIN_TEST_DIR)
	$(WIN_CC) $(WIN_CFLAGS) -shared $^ -ladvapi32 -o $@

$(WIN_TEST_DIR)/test_windows.exe: tests/windows/test_windows.c tests/c/check.h include/mcpc.h windows-dll
	@mkdir -p $(WIN_TEST_DIR)
	$(WIN_CC) $(WIN_CFLAGS) -Itests/c -g $< -L$(WIN_OUT) -lmcpc -o $@

# cli/platform_win.c alone: what the CLI tests cannot reach without an OAuth server.
$(WIN_TEST_DIR)/test_cli_platform.exe: tests/windows/test_cli_platform.c cli/platform_win.c cli/platform.h | windows-deps
	@mkdir -p $(WIN_TEST_DIR)
	$(WIN_CC) $(WIN_CFLAGS) -Icli $< cli/platform_win.c -Wl,-Bstatic -lpthread -Wl,-Bdynamic \
	    -lws2_32 -lshell32 -lole32 -ladvapi32 -o $@

# The runtimes linked in statically, so the test folder needs no libstdc++-6.dll.
$(WIN_TEST_DIR)/cpp_smoke.exe: tests/windows/cpp_smoke.cpp bindings/cpp/mcpc.hpp include/mcpc.h windows-dll
	@mkdir -p $(WIN_TEST_DIR)
	$(WIN_CXX) -std=c++17 $(CWARN) -O1 -Iinclude -Ibindings/cpp $< -L$(WIN_OUT) -lmcpc \
	    -static-libgcc -static-libstdc++ -Wl,-Bstatic -lpthread -Wl,-Bdynamic -o $@

$(WIN_PREFIX)/.ready: | windows-deps
	@mkdir -p '$(WIN_PREFIX)'
	@echo "making the Wine prefix $(WIN_PREFIX) (once)"
	@$(WIN_RUN) wineboot -i >'$(WIN_PREFIX)/wineboot.log' 2>&1 || { cat '$(WIN_PREFIX)/wineboot.log'; exit 1; }
	@touch $@

# The win_amd64 wheel: the Python package with mcpc.dll inside (bindings/python/setup.py
# says how), tagged py3-none-win_amd64, checked for both. Built, not loaded: no Windows
# Python runs here.
PY_WIN_WHEEL := $(PY_BUILD)/windows-wheel

python-wheel-windows: windows $(PY_VENV)/.pins
	rm -rf $(PY_BUILD)/windows-pkg $(PY_WIN_WHEEL)
	mkdir -p $(PY_BUILD)/windows-pkg
	cp -r bindings/python/pyproject.toml bindings/python/setup.py bindings/python/README.md bindings/python/src \
	    $(PY_BUILD)/windows-pkg/
	dll=$$($(WIN_DLLTOOL) --identify $(WIN_OUT)/libmcpc.dll.a) && cd $(PY_BUILD)/windows-pkg && \
	    MCPC_BUNDLE_LIBRARY=$(CURDIR)/$(WIN_OUT)/$$dll $(CURDIR)/$(PY_VENV)/bin/python setup.py -q bdist_wheel \
	    --plat-name win_amd64 -d $(CURDIR)/$(PY_WIN_WHEEL) >$(CURDIR)/$(PY_BUILD)/windows-wheel.log 2>&1 || \
	    { cat $(CURDIR)/$(PY_BUILD)/windows-wheel.log; exit 1; }
	$(PY_VENV)/bin/python -c 'import sys, zipfile, glob; \
	    w = glob.glob(sys.argv[1] + "/libmcpc-*-py3-none-win_amd64.whl"); \
	    assert len(w) == 1, "no py3-none-win_amd64 wheel"; \
	    names = zipfile.ZipFile(w[0]).namelist(); \
	    assert "libmcpc/mcpc.dll" in names, names; \
	    print("python-wheel-windows:", w[0])' $(PY_WIN_WHEEL)

# The library's own Rust unit tests, built for Windows and run under Wine in the test
# folder, beside the ProcessPrng shim as the C tests are, after clippy on the code
# that only Windows builds (sys/windows.rs, the stdio child's job object).
WIN_RUST_LOG := $(WIN_TEST_DIR)/unittests-build.log

test-windows-rust: windows-deps $(WIN_TEST_DIR)/bcryptprimitives.dll $(WIN_PREFIX)/.ready
ifeq ($(WIN_DLL_DIR),$(WIN_CARGO_OUT))
	$(CARGO) clippy --target $(WIN_TARGET) --lib --tests -- -D warnings
	$(CARGO) test --color never --target $(WIN_TARGET) --lib --no-run >$(WIN_RUST_LOG) 2>&1 || \
	    { cat $(WIN_RUST_LOG); exit 1; }
	exe=$$(sed -n 's/.*Executable unittests src\/lib.rs (\(.*\.exe\))$$/\1/p' $(WIN_RUST_LOG)) && \
	    { test -n "$$exe" || { echo "test-windows-rust: no test program named in $(WIN_RUST_LOG)"; exit 1; }; } && \
	    cp "$$exe" $(WIN_TEST_DIR)/mcpc_unittests.exe
	cd $(WIN_TEST_DIR) && $(WIN_RUN) mcpc_unittests.exe
else
	@echo "test-windows-rust: skipped: WIN_DLL_DIR names a DLL built elsewhere, and cargo does not run"
endif

test-windows: windows $(WIN_TEST_DIR)/fake_server.exe $(WIN_TEST_DIR)/bcryptprimitives.dll \
              $(WIN_TEST_DIR)/test_windows.exe $(WIN_TEST_DIR)/cpp_smoke.exe \
              $(WIN_TEST_DIR)/test_cli_platform.exe $(WIN_PREFIX)/.ready python-wheel-windows \
              test-windows-rust
	dll=$$($(WIN_DLLTOOL) --identify $(WIN_OUT)/libmcpc.dll.a) && cp $(WIN_OUT)/$$dll $(WIN_TEST_DIR)/
	cp $(WIN_OUT)/mcpc.exe $(WIN_TEST_DIR)/
	cd $(WIN_TEST_DIR) && $(WIN_RUN) test_windows.exe
	cd $(WIN_TEST_DIR) && $(WIN_RUN) cpp_smoke.exe
	cd $(WIN_TEST_DIR) && $(WIN_RUN) test_cli_platform.exe
	WINE='$(WINE)' WINEPREFIX='$(WIN_PREFIX)' tests/windows/cli.sh $(WIN_TEST_DIR)
