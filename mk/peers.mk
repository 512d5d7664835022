# Tests against MCP software no one here wrote (issue 6):
#   test-peers        tests/c/test_peers.c, through the C ABI and the CLI, against
#                     @modelcontextprotocol/server-everything and servers on the Python
#                     mcp package (2.x and 1.x), over stdio, HTTP and HTTPS;
#                     tests/c/test_peers_tasks.c, tasks in both generations against
#                     server-everything and FastMCP with fastmcp-tasks; and
#                     tests/peers/tasks_compare.py, mcpc next to the reference tasks
#                     client (ext-tasks) on the same tasks, read from a wire tap
#   test-conformance  the official conformance suite (@modelcontextprotocol/conformance,
#                     stable and next runner) against tests/conformance/client.c
#   test-apps-host    the MCP Apps example host (examples/apps_host) in headless Chromium
#                     against @modelcontextprotocol/server-basic-vanillajs, driven by
#                     Playwright (tests/browser/test_apps_host.py); keeps a screenshot in
#                     build/artifacts/apps-host.png. Chromium is the distribution's
#                     (apt-get install chromium): without it the test fails and says so
# All three first run tests/peers/install.sh, which installs the pinned peers outside the
# tree (MCPC_PEERS_DIR, default ~/.cache/mcpc-peers) or, when they are installed
# already, only checks them (offline, a few seconds). A missing peer fails the tests.
# None runs under valgrind: the first two measure timeouts, retry delays and progress
# timing with real servers, the third waits on a browser, and the library is under
# valgrind and ASan in test-c and test-asan (and the HTTP/2 peer tests and the task
# peer tests under ASan, below).

MCPC_PEERS_DIR ?= $(HOME)/.cache/mcpc-peers
PEERS_ENV := $(MCPC_PEERS_DIR)/peers.env

.PHONY: peers test-peers test-conformance test-apps-host

peers:
	tests/peers/install.sh '$(MCPC_PEERS_DIR)'

build/conformance_client: tests/conformance/client.c cli/json_scan.h include/mcpc.h lib-debug
	@mkdir -p build
	$(CC) $(CFLAGS_C) $< -L$(DEBUG) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../$(DEBUG)' -o $@

# build/test_peers comes from the Makefile's build/test_% rule. The HTTP/2 tests run
# once more with the test built under AddressSanitizer: the results they read came
# over HTTP/2, whose replies lend and hand over buffers of their own. The task peer
# tests run under it only (about 25 s, mostly waiting on the tasks), then the
# comparison with the reference client (about 8 s).
test-peers: peers build/test_peers build/asan/test_peers build/asan/test_peers_tasks build/debug/mcpc
	. '$(PEERS_ENV)' && MCPC=build/debug/mcpc build/test_peers
	. '$(PEERS_ENV)' && MCPC=build/debug/mcpc build/asan/test_peers test_py2_http2
	. '$(PEERS_ENV)' && MCPC=build/debug/mcpc build/asan/test_peers_tasks
	. '$(PEERS_ENV)' && MCPC=build/debug/mcpc $(PYTHON) tests/peers/tasks_compare.py

test-conformance: peers build/conformance_client
	MCPC_PEERS_DIR='$(MCPC_PEERS_DIR)' tests/conformance/run.sh build/conformance_client build/conformance

# The host runs on the debug library through the binding's source, as a user of the
# source tree would run it (about 5 s).
test-apps-host: peers lib-debug
	. '$(PEERS_ENV)' && MCPC_LIBRARY='$(CURDIR)/$(DEBUG)/libmcpc.so' PYTHON=$(PYTHON) \
	    "$$MCPC_PEERS_PLAYWRIGHT_PY" tests/browser/test_apps_host.py

EXTRA_TESTS += test-peers test-conformance test-apps-host
