# Benchmarks (issue 9): mcpc against a raw floor, over stdio, HTTP+JSON, HTTP+SSE, and HTTP/1.1,
# HTTP/2 (through nghttpx) and a proxy (squid) when those are installed.
#   make bench          W1..W6 at full size, four runs per transport (start order taking turns), table of the
#                       median figures and their ratios (mcpc/raw)
#   make bench-quick    the same at small sizes (twice, each start order), a few curve points and the host's
#                       benchmark at 1 to 3 servers (smoke test, < 30 s)
#   make bench-curves   calls in flight 1..1024, clients 1..100, sizes 32 B..16 MiB
#   make bench-tasks    following a 10 s task polled every second, against an idle client (both generations)
#   make bench-host     the host (mcpc_host_t): a catalog of 1..100 fast servers, of servers slow to start,
#                       and of 30 Python servers beside Python's multi-server clients (about 3 min)
# Sizes: the BENCH_* variables (benches/README.md). Results: build/bench/*.jsonl.
# Benchmarks are never timed tests: bench-quick checks results, not speed.

BENCH_DIR    := build/bench
BENCH_CFLAGS := -std=c11 -O2 $(CWARN) -g -Iinclude -Ibenches
BENCH_PROGS  := $(BENCH_DIR)/bench_server $(BENCH_DIR)/mcpc_bench

.PHONY: bench bench-quick bench-curves bench-build bench-tasks bench-host

$(BENCH_DIR)/bench_server: benches/bench_server.c benches/bench_buf.h benches/bench_data.h benches/json_lite.h
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) $< -o $@

$(BENCH_DIR)/mcpc_bench: benches/mcpc_bench.c benches/bench_buf.h benches/bench_data.h benches/bench_proc.h benches/json_lite.h include/mcpc.h lib
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) $< -L$(RELEASE) -lmcpc -lpthread -lm \
		-Wl,-rpath,'$$ORIGIN/../../$(RELEASE)' -o $@

$(BENCH_DIR)/task_follow: benches/task_follow.c include/mcpc.h lib
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) $< -L$(RELEASE) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../../$(RELEASE)' -o $@

$(BENCH_DIR)/host_bench: benches/host_bench.c benches/bench_proc.h include/mcpc.h lib
	@mkdir -p $(BENCH_DIR)
	$(CC) $(BENCH_CFLAGS) $< -L$(RELEASE) -lmcpc -lpthread -Wl,-rpath,'$$ORIGIN/../../$(RELEASE)' -o $@

bench-build: $(BENCH_PROGS) $(BENCH_DIR)/task_follow $(BENCH_DIR)/host_bench

bench-tasks: $(BENCH_DIR)/task_follow
	$(BENCH_DIR)/task_follow 10 1000 legacy | tee $(BENCH_DIR)/tasks.jsonl
	$(BENCH_DIR)/task_follow 10 1000 modern | tee -a $(BENCH_DIR)/tasks.jsonl

# The host's benchmark runs first, on its own (bench-host, below).
bench: $(BENCH_PROGS) bench-host
	$(PYTHON) benches/run.py --bin $(BENCH_DIR) --repeat 4 --out $(BENCH_DIR)/results.jsonl

bench-quick: $(BENCH_PROGS) $(BENCH_DIR)/task_follow $(BENCH_DIR)/host_bench
	$(PYTHON) benches/run.py --bin $(BENCH_DIR) --quick --repeat 2 --out $(BENCH_DIR)/quick.jsonl
	$(BENCH_DIR)/task_follow 1 200 modern >/dev/null
	$(PYTHON) benches/host_run.py --bin $(BENCH_DIR) --quick --out $(BENCH_DIR)/host-quick.jsonl >/dev/null

# The anchors (Python's multi-server clients) are installed pinned, outside the tree,
# beside the test peers (tests/peers/install.sh --anchors).
bench-host: $(BENCH_PROGS) $(BENCH_DIR)/host_bench
	tests/peers/install.sh --anchors '$(MCPC_PEERS_DIR)'
	. '$(MCPC_PEERS_DIR)/anchors.env' && $(PYTHON) benches/host_run.py --bin $(BENCH_DIR) --out $(BENCH_DIR)/host.jsonl

bench-curves: $(BENCH_PROGS)
	$(PYTHON) benches/run.py --bin $(BENCH_DIR) --curves --out $(BENCH_DIR)/curves.jsonl

# The smoke test runs in make test: it checks results, never speed.
EXTRA_TESTS += bench-quick
