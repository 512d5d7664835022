# mcpc: build, demo, test, install.
#   make demo   build the library and the CLI, run the CLI against the demo server
#   make test   run every test (Rust, header, symbols, C under valgrind, CLI)

CARGO     ?= cargo
CC        ?= gcc
CXX       ?= g++
PYTHON    ?= python3
export CARGO_BUILD_JOBS ?= 2

CWARN     := -Wall -Wextra -Werror
CFLAGS_C  := -std=c11 -D_POSIX_C_SOURCE=200809L $(CWARN) -g -Iinclude -Itests/c
RELEASE   := target/release
DEBUG     := target/debug

# The C tests run twice: under valgrind (MCPC_VALGRIND=0 skips that pass), and built
# with AddressSanitizer, LeakSanitizer and UBSan.
MCPC_VALGRIND ?= 1
VALGRIND := valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite --error-exitcode=99 --child-silent-after-fork=yes \
            --num-callers=40 --suppressions=tests/valgrind.supp
RUNNER   := $(if $(filter 1,$(MCPC_VALGRIND)),$(VALGRIND),)
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

.PHONY: all lib lib-debug cli man demo test test-rust loom test-c test-asan soak chaos test-cli test-eyeballs test-readme check-header check-symbols lint clean

all: lib cli

# The library carries the soname libmcpc.so.$(MCPC_SOVERSION) (build.rs; mk/install.mk),
# so programs linked against the build tree need that name beside it.
lib:
	$(CARGO) build --release
	ln -sfn libmcpc.so $(RELEASE)/libmcpc.so.$(MCPC_SOVERSION)

lib-debug:
	$(CARGO) build
	ln -sfn libmcpc.so $(DEBUG)/libmcpc.so.$(MCPC_SOVERSION)

# The command line, one file a job: main (mcpc.c), the option table (options.c) and
# parsing (parse.c), --help and the man page (help.c), connecting (connect.c), the
# commands (commands.c), output (output.c), text helpers (text.c), the browser login
# (login.c), the credential store (store.c), the client key and assertion commands
# (assertion.c), --config (config.c), --elicit (elicit.c), tasks (tasks.c), MCP Apps (apps.c)
# and the system (platform_*.c).
CLI_SRC := cli/mcpc.c cli/options.c cli/parse.c cli/help.c cli/connect.c cli/commands.c cli/skills.c cli/tasks.c cli/apps.c \
           cli/output.c cli/text.c cli/login.c cli/store.c cli/assertion.c cli/config.c cli/host.c \
           cli/elicit.c cli/platform_posix.c
CLI_DEPS := $(CLI_SRC) cli/cli.h cli/options.h cli/client.h cli/platform.h cli/login.h cli/store.h \
            cli/assertion.h cli/config.h cli/elicit.h cli/json_scan.h include/mcpc.h

build/release/mcpc: $(CLI_DEPS) lib
	@mkdir -p build/release
	$(CC) $(CFLAGS_C) -O2 $(CLI_SRC) -L$(RELEASE) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../../$(RELEASE)' -o $@

build/debug/mcpc: $(CLI_DEPS) lib-debug
	@mkdir -p build/debug
	$(CC) $(CFLAGS_C) $(CLI_SRC) -L$(DEBUG) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../../$(DEBUG)' -o $@

cli: build/release/mcpc

# The man page, which the CLI makes from its option table (cli/help.c): committed,
# installed by make install; test-cli fails when cli/mcpc.1 is not what it makes.
man: build/debug/mcpc
	build/debug/mcpc --man >cli/mcpc.1

demo: build/release/mcpc
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py" info'
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py" info
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py" tools   (names only, via python)'
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py" tools | $(PYTHON) -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)))'
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py" call add '"'"'{"a":2,"b":3}'"'"
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py" call add '{"a":2,"b":3}'
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py" call echo '"'"'{"text":"hello from mcpc"}'"'"
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py" call echo '{"text":"hello from mcpc"}'
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py" read demo://greeting'
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py" read demo://greeting
	@echo '$$ mcpc --stdio "$(PYTHON) demo/server.py --era=modern" info   (a server that speaks 2026-07-28)'
	@build/release/mcpc --stdio "$(PYTHON) demo/server.py --era=modern" info

# Parts of the build kept in their own files (bindings, install, benchmarks) add
# their test targets to EXTRA_TESTS.
EXTRA_TESTS :=
-include mk/*.mk

test: test-rust loom check-symbols test-c test-asan test-cli test-eyeballs test-readme $(EXTRA_TESTS)

test-rust:
	$(CARGO) test
	$(CARGO) test --features fuzzing --test fuzz_corpus

check-header:
	MCPC_CHECK_HEADER=1 $(CARGO) build
	git diff --exit-code -- include/

check-symbols: lib-debug
	tests/check_symbols.sh $(DEBUG)/libmcpc.so include/mcpc.h

C_TEST_DEPS := tests/c/check.h tests/c/harness.h tests/c/seam_host.h tests/c/http_fixture.h tests/c/proxy_fixture.h tests/c/peers_fixture.h include/mcpc.h lib-debug

build/test_%: tests/c/test_%.c $(C_TEST_DEPS)
	@mkdir -p build
	$(CC) $(CFLAGS_C) $< -L$(DEBUG) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../$(DEBUG)' -o $@

build/asan/test_%: tests/c/test_%.c $(C_TEST_DEPS)
	@mkdir -p build/asan
	$(CC) $(CFLAGS_C) $(SANITIZE) $< -L$(DEBUG) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../../$(DEBUG)' -o $@

build/header_twice: tests/c/header_twice.cpp include/mcpc.h lib-debug
	@mkdir -p build
	$(CXX) -std=c++17 $(CWARN) -Iinclude tests/c/header_twice.cpp -L$(DEBUG) -lmcpc -Wl,-rpath,'$$ORIGIN/../$(DEBUG)' -o $@

# Under valgrind (about 30x slower) the async and concurrency tests run a tenth of
# their calls; the ASan pass runs them all (8 threads x 1000 calls, 1000 in flight).
# The soak runs bare: memory use under valgrind or ASan (its quarantine) says nothing.
test-c: build/test_abi build/test_host build/test_skills build/test_tasks build/test_apps build/test_protocol build/test_async build/test_http build/test_input build/test_content build/test_listen build/test_restart build/test_proxy build/test_legacy_sse build/test_soak build/header_twice
	build/header_twice
	build/test_soak
	$(RUNNER) build/test_abi
	$(RUNNER) build/test_host
	$(RUNNER) build/test_skills
	$(RUNNER) build/test_tasks
	$(RUNNER) build/test_apps
	$(RUNNER) build/test_input
	$(RUNNER) build/test_content
	$(RUNNER) build/test_listen
	$(RUNNER) build/test_restart
	$(RUNNER) build/test_proxy
	$(RUNNER) build/test_legacy_sse
	$(RUNNER) build/test_http
	MCPC_STRESS_SCALE=0.1 $(RUNNER) build/test_async
	MCPC_TEST_TRANSPORT=stdio $(RUNNER) build/test_protocol
	MCPC_TEST_TRANSPORT=seam $(RUNNER) build/test_protocol
	MCPC_TEST_TRANSPORT=exchange $(RUNNER) build/test_protocol

test-asan: build/asan/test_abi build/asan/test_host build/asan/test_skills build/asan/test_tasks build/asan/test_apps build/asan/test_protocol build/asan/test_async build/asan/test_http build/asan/test_input build/asan/test_content build/asan/test_listen build/asan/test_restart build/asan/test_proxy build/asan/test_legacy_sse
	build/asan/test_abi
	build/asan/test_host
	build/asan/test_skills
	build/asan/test_tasks
	build/asan/test_apps
	build/asan/test_input
	build/asan/test_content
	build/asan/test_listen
	build/asan/test_restart
	build/asan/test_proxy
	build/asan/test_legacy_sse
	build/asan/test_http
	build/asan/test_async
	MCPC_TEST_TRANSPORT=stdio build/asan/test_protocol
	MCPC_TEST_TRANSPORT=seam build/asan/test_protocol
	MCPC_TEST_TRANSPORT=exchange build/asan/test_protocol

# A long soak by hand: thousands of cycles over stdio and HTTP.
soak: build/test_soak
	MCPC_SOAK_CYCLES=3000 MCPC_SOAK_HTTP_CYCLES=10000 MCPC_LOAD_CLIENTS=100 MCPC_LOAD_CALLS=100 build/test_soak

# Model checks of the concurrency core with loom: the real code built with its
# primitives from loom (src/sync.rs), in a target directory of its own.
loom:
	RUSTFLAGS="--cfg mcpc_loom" CARGO_TARGET_DIR=target/loom $(CARGO) test --lib loom_

# A long chaos run by hand over both forms of the caller-supplied seam (make test
# runs 200 seeds over each); MCPC_CHAOS_SEED=S replays one.
CHAOS_SEEDS ?= 5000
chaos:
	MCPC_CHAOS_SEEDS=$(CHAOS_SEEDS) $(CARGO) test --test chaos -- --nocapture

test-cli: build/debug/mcpc
	MCPC=build/debug/mcpc PYTHON=$(PYTHON) tests/cli_test.sh

# Happy eyeballs in a network namespace of its own (unshare -rnm), loopback only.
test-eyeballs: build/debug/mcpc
	MCPC=build/debug/mcpc PYTHON=$(PYTHON) tests/happy_eyeballs.sh

test-readme: lib-debug
	LIB=$(DEBUG) tests/readme_example.sh

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf build
