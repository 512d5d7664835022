/* Soak and load: many connect/call/close cycles over stdio and HTTP, with file
 * descriptors, threads, child processes and memory measured at the start and the end
 * and asserted flat; and thousands of concurrent calls over many clients at once,
 * every result matched to its request. Bounded: MCPC_SOAK_CYCLES (default 200) and
 * MCPC_SOAK_HTTP_CYCLES (default 500) set the length; `make soak` runs a long one.
 * Closing line: "N passed, N failed, N skipped". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"
#include "http_fixture.h"

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static long status_field(const char *field) {
    char *s = read_file("/proc/self/status");
    char *p = strstr(s, field);
    long v = p ? atol(p + strlen(field)) : -1;
    free(s);
    return v;
}

/* Children of this process that are alive (any state but zombie counts). */
static int count_children(void) {
    DIR *d = opendir("/proc");
    int count = 0, me = (int)getpid();
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        char *st = read_file(path);
        char *cp = strrchr(st, ')');
        int ppid = 0;
        char state = 0;
        if (cp && sscanf(cp + 2, "%c %d", &state, &ppid) == 2 && ppid == me) count++;
        free(st);
    }
    if (d) closedir(d);
    return count;
}

struct usage {
    int fds;
    long threads;
    int children;
    long rss_kb;
};

static struct usage measure(void) {
    struct usage u = {count_fds(), status_field("Threads:"), count_children(), status_field("VmRSS:")};
    return u;
}

/* Idle runtime threads of the blocking pool retire after a while; wait for the thread
 * count to come back down to `limit` (observing it, with a bound). */
static long settle_threads(long limit) {
    double end = now_ms() + 15000;
    long t = status_field("Threads:");
    while (t > limit && now_ms() < end) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        t = status_field("Threads:");
    }
    return t;
}

/* HTTP connections close on a runtime thread just after the client that owned them
 * is freed: wait for the count to come back down to `limit` (observing it, bounded). */
static int settle_fds(int limit) {
    double end = now_ms() + 5000;
    int n = count_fds();
    while (n > limit && now_ms() < end) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        n = count_fds();
    }
    return n;
}

static void report(const char *what, struct usage a, struct usage b, int cycles, double ms) {
    fprintf(stderr, "  %s: %d cycles in %.0f ms; fds %d -> %d, threads %ld -> %ld, children %d -> %d, rss %ld -> %ld kB\n",
            what, cycles, ms, a.fds, b.fds, a.threads, b.threads, a.children, b.children, a.rss_kb, b.rss_kb);
}

static void one_stdio_cycle(int i) {
    const char *argv[] = {"python3", "demo/server.py"};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_client_t *c = NULL;
    if (mcpc_client_connect_stdio(argv, 2, o, &c) != MCPC_OK) {
        fprintf(stderr, "  cycle %d: connect: %s\n", i, mcpc_last_error_message());
        CHECK(0);
    } else {
        char args[64], want[32];
        snprintf(want, sizeof want, "cycle-%d", i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        mcpc_result_t *r = NULL;
        CHECK(mcpc_client_call_tool(c, "echo", args, NULL, &r) == MCPC_OK && strcmp(mcpc_result_text(r, NULL), want) == 0);
        mcpc_result_free(r);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
}

static void test_soak_stdio(void) {
    int cycles = env_int("MCPC_SOAK_CYCLES", 100);
    for (int i = 0; i < 5; i++) one_stdio_cycle(-1 - i); /* warm-up: runtime, first allocations */
    struct usage before = measure();
    double t0 = now_ms();
    for (int i = 0; i < cycles && harness_failures_in_test == 0; i++) one_stdio_cycle(i);
    double ms = now_ms() - t0;
    settle_threads(before.threads);
    struct usage after = measure();
    report("stdio", before, after, cycles, ms);
    CHECK(after.fds == before.fds);
    CHECK(after.children == 0 && before.children == 0);
    CHECK(after.threads <= before.threads);
    CHECK(after.rss_kb - before.rss_kb < 4096);
    CHECK(count_zombie_children() == 0);
}

static void test_soak_http(void) {
    struct fixture f;
    const char *args[] = {"--mode", "json", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    int cycles = env_int("MCPC_SOAK_HTTP_CYCLES", 500);
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    /* Descriptors are counted from before the first HTTP client; memory and threads
     * from after a warm-up (first-use setup: TLS roots, the connection pool). */
    int fds_at_start = count_fds();
    struct usage before = {0};
    double t0 = 0;
    for (int i = -5; i < cycles && harness_failures_in_test == 0; i++) {
        if (i == 0) {
            before = measure();
            before.fds = fds_at_start;
            t0 = now_ms();
        }
        mcpc_client_t *c = NULL;
        if (mcpc_client_connect_http(f.url, o, &c) != MCPC_OK) {
            fprintf(stderr, "  cycle %d: connect: %s\n", i, mcpc_last_error_message());
            CHECK(0);
            break;
        }
        mcpc_result_t *r = NULL;
        CHECK(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r) == MCPC_OK);
        mcpc_result_free(r);
        mcpc_client_free(c);
    }
    double ms = now_ms() - t0;
    mcpc_options_free(o);
    settle_threads(before.threads);
    settle_fds(before.fds);
    struct usage after = measure();
    report("http", before, after, cycles, ms);
    CHECK(after.fds <= before.fds);
    CHECK(after.threads <= before.threads);
    CHECK(after.rss_kb - before.rss_kb < 4096);
    /* Every session was deleted on close. */
    const char *created[] = {"\"event\":\"session-created\"", NULL};
    const char *deleted[] = {"\"event\":\"session-deleted\"", NULL};
    CHECK(log_count(&f, created) == log_count(&f, deleted));
    fixture_stop(&f);
}

/* Load: many clients at once, each with many calls in flight. */
struct load {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, ok, wrong;
};

struct load_call {
    struct load *load;
    char want[32];
};

static void on_load_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    (void)msg;
    struct load_call *lc = ud;
    struct load *l = lc->load;
    pthread_mutex_lock(&l->lock);
    if (st == MCPC_OK && strcmp(mcpc_result_text(r, NULL), lc->want) == 0) l->ok++;
    else l->wrong++;
    l->done++;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    mcpc_result_free(r);
}

static void test_load_many_clients(void) {
    int clients = env_int("MCPC_LOAD_CLIENTS", 20);
    int per_client = env_int("MCPC_LOAD_CALLS", 200);
    mcpc_client_t **cs = calloc((size_t)clients, sizeof *cs);
    const char *argv[] = {"python3", "demo/server.py"};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    for (int i = 0; i < clients; i++) CHECK_STATUS(mcpc_client_connect_stdio(argv, 2, o, &cs[i]), MCPC_OK);
    mcpc_options_free(o);
    struct load l = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    int total = clients * per_client;
    struct load_call *calls = calloc((size_t)total, sizeof *calls);
    double t0 = now_ms();
    for (int i = 0; i < total; i++) {
        calls[i].load = &l;
        snprintf(calls[i].want, sizeof calls[i].want, "L%d", i);
        char args[64];
        snprintf(args, sizeof args, "{\"text\":\"L%d\"}", i);
        if (!cs[i % clients] ||
            mcpc_client_call_tool_async(cs[i % clients], "echo", args, NULL, on_load_done, &calls[i], NULL) != MCPC_OK) {
            pthread_mutex_lock(&l.lock);
            l.done++;
            l.wrong++;
            pthread_mutex_unlock(&l.lock);
        }
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 120;
    pthread_mutex_lock(&l.lock);
    while (l.done < total && pthread_cond_timedwait(&l.cond, &l.lock, &deadline) == 0) {
    }
    int ok = l.ok, wrong = l.wrong, done = l.done;
    pthread_mutex_unlock(&l.lock);
    fprintf(stderr, "  load: %d clients x %d calls in flight: %d ok, %d wrong, in %.0f ms\n", clients, per_client, ok,
            wrong, now_ms() - t0);
    CHECK(done == total && ok == total && wrong == 0);
    for (int i = 0; i < clients; i++) mcpc_client_free(cs[i]);
    free(cs);
    free(calls);
    CHECK(count_zombie_children() == 0);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_soak_stdio);
    RUN(test_soak_http);
    RUN(test_load_many_clients);
    return harness_finish();
}
